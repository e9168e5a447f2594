//! One memory's history: every version, who wrote it and when, and the
//! commit that carried it.

use crate::log::transition::version_content;
use crate::model::event::Op;
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::model::text;
use crate::store::{Store, StoreError};

/// One version of a memory.
#[derive(Debug, Clone)]
pub struct Version {
    /// The event.
    pub id: String,
    /// `remember`, `forget`, `resolve` or `propose` (pending or consumed).
    pub op: Op,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub time: String,
    /// Who wrote it.
    pub actor: String,
    /// The content's `source`.
    pub source: Option<String>,
    /// Why (forget, resolve, rollback).
    pub reason: Option<String>,
    /// The versions it replaced.
    pub prev: Vec<String>,
    /// The first commit whose logs hold it (none: not committed yet).
    pub commit: Option<String>,
    /// The content (none: forgotten).
    pub content: Option<String>,
    /// Its change from the version it replaced.
    pub diff: String,
}

/// Every version of `key`, oldest first.
pub fn history(store: &Store, key: &Key) -> Result<Vec<Version>, StoreError> {
    let logs = crate::log::read::read_logs(store)?;
    // The log files that hold a version of the key, read once.
    let holding: Vec<String> = logs
        .files
        .iter()
        .filter(|(_, range)| {
            logs.events[range.clone()]
                .iter()
                .any(|e| e.key.as_ref() == Some(key))
        })
        .map(|(rel, _)| rel.clone())
        .collect();
    let replay = crate::log::replay::Replay::new(logs.events);
    let mut events: Vec<_> = replay
        .events
        .values()
        .filter(|e| e.key.as_ref() == Some(key) && (e.op.is_version() || e.op == Op::Propose))
        .collect();
    if events.is_empty() {
        return Err(StoreError::NoSuchMemory(key.to_string()));
    }
    events.sort_by(|a, b| (a.time, &a.id).cmp(&(b.time, &b.id)));
    // The commit that carried each event: the oldest whose log holds it.
    let ids: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
    let repo = store.repo();
    let prefix = store.prefix();
    let paths: Vec<String> = holding.iter().map(|rel| format!("{prefix}{rel}")).collect();
    let commits = repo.first_commits(&paths, &ids)?;
    let rel = key.rel_path();
    Ok(events
        .into_iter()
        .map(|e| {
            let content = if e.op == Op::Propose {
                Some(e.body.as_str())
            } else {
                version_content(e)
            };
            let before = match e.prev.as_slice() {
                [p] => replay.events.get(p).and_then(|e| version_content(e)),
                _ => None,
            };
            let diff = text::file_diff(before, content, &format!("a/{rel}"), &format!("b/{rel}"));
            Version {
                id: e.id.clone(),
                op: e.op,
                time: e.time.seconds(),
                actor: e.actor.clone(),
                source: content
                    .and_then(|c| Memory::parse(c).ok())
                    .and_then(|m| m.source),
                reason: e.reason.clone(),
                prev: e.prev.clone(),
                commit: commits.get(&e.id).cloned(),
                content: content.map(str::to_string),
                diff,
            }
        })
        .collect())
}
