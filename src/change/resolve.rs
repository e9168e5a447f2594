//! Conflicts and the events that resolve them: the engine `resolve` and
//! `consolidate` (its decisions on conflicts) share.
//!
//! A memory is in conflict when its version DAG has heads that differ (two
//! branches changed it), or when a pending proposal for it differs from it
//! (consolidation left it for a human). `conflicts` shows each candidate
//! version as a diff against what the file shows (the common ancestor);
//! `resolve` appends the decision: a `resolve` event whose `prev` joins the
//! heads and which consumes the key's pending proposals.

use crate::log::replay::Replay;
use crate::log::transition::version_content;
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::model::text;
use crate::policy::memory::check_memory;
use crate::store::{Ctx, Store, StoreError};

/// One version a human can choose.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The event that holds it.
    pub id: String,
    /// `remember`, `forget`, `resolve` (a head) or `propose` (pending).
    pub op: Op,
    /// Who wrote it.
    pub actor: String,
    /// When (`YYYY-MM-DDTHH:MM:SSZ`).
    pub time: String,
    /// Its `source` field, if it has content.
    pub source: Option<String>,
    /// Its content (`None`: forgotten).
    pub content: Option<String>,
    /// Against what the file shows now.
    pub diff: String,
}

/// A memory waiting for a decision.
#[derive(Debug, Clone)]
pub struct Conflict {
    /// The memory.
    pub key: Key,
    /// What its file shows now (the common ancestor, for a fork).
    pub current: Option<String>,
    /// The versions to choose from.
    pub candidates: Vec<Candidate>,
}

/// A human's decision.
#[derive(Debug, Clone)]
pub enum Decision {
    /// Keep what the file shows now.
    Keep,
    /// Take this version (a head or a pending proposal).
    Take(String),
    /// Keep the sides: after a fork, the first head's version stays at the
    /// key and every other under `<slug>-N` (the ancestor both started
    /// from is dropped); for a proposal, what the file shows stays and the
    /// proposal goes under `<slug>-N`.
    Both,
    /// As [`Decision::Both`], and the version the file shows (after a
    /// fork, the ancestor) kept too: at the key, the sides under `<slug>-N`.
    BothWithAncestor,
    /// This content (edited by hand).
    Content(String),
}

/// What `resolve` wrote.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The resolve event.
    pub id: String,
    /// Keys written for `--both`.
    pub added: Vec<Key>,
}

fn candidate(e: &Event, content: Option<&str>, current: Option<&str>, key: &Key) -> Candidate {
    let path = key.rel_path();
    let diff = text::file_diff(
        current,
        content,
        &format!("a/{path} (now)"),
        &format!("b/{path} ({} {})", e.op, e.id),
    );
    Candidate {
        id: e.id.clone(),
        op: e.op,
        actor: e.actor.clone(),
        time: e.time.seconds(),
        source: content
            .and_then(|c| Memory::parse(c).ok())
            .and_then(|m| m.source),
        content: content.map(str::to_string),
        diff,
    }
}

/// The conflicts in a replay, by key.
pub fn conflicts_of(replay: &Replay) -> Vec<Conflict> {
    let mut keys: Vec<&Key> = replay
        .memories
        .iter()
        .filter(|(_, v)| v.conflict)
        .map(|(k, _)| k)
        .collect();
    let proposals: Vec<&Event> = replay
        .pending
        .iter()
        .filter_map(|id| replay.events.get(id))
        .collect();
    for p in &proposals {
        if let Some(k) = &p.key {
            let differs = replay.view(k) != Some(p.body.as_str());
            if differs && !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.sort();
    keys.into_iter()
        .map(|key| {
            let current = replay.view(key);
            let mut candidates = Vec::new();
            if let Some(v) = replay.memories.get(key).filter(|v| v.conflict) {
                for h in &v.heads {
                    if let Some(e) = replay.events.get(h) {
                        candidates.push(candidate(e, version_content(e), current, key));
                    }
                }
            }
            for p in proposals.iter().filter(|p| p.key.as_ref() == Some(key)) {
                candidates.push(candidate(p, Some(&p.body), current, key));
            }
            Conflict {
                key: key.clone(),
                current: current.map(str::to_string),
                candidates,
            }
        })
        .collect()
}

/// The events that record a decision on `key`'s conflict in `replay`.
pub fn resolve_events(
    store: &Store,
    ctx: &Ctx,
    replay: &Replay,
    key: &Key,
    decision: &Decision,
) -> Result<(Vec<Event>, Resolved), StoreError> {
    let Some(conflict) = conflicts_of(replay).into_iter().find(|c| c.key == *key) else {
        return Err(StoreError::NoSuchMemory(format!(
            "conflict on {key} (nothing to resolve)"
        )));
    };
    let heads = replay
        .memories
        .get(key)
        .map(|v| v.heads.clone())
        .unwrap_or_default();
    let proposals: Vec<String> = conflict
        .candidates
        .iter()
        .filter(|c| c.op == Op::Propose)
        .map(|c| c.id.clone())
        .collect();
    let mut chosen = chosen_content(&conflict, key, decision)?;
    if let (Decision::Content(_), Some(c)) = (decision, chosen.as_mut()) {
        *c = decided_now(c, &conflict, ctx);
    }
    let rel = key.rel_path();
    if let Some(c) = &chosen {
        let m = crate::policy::memory::validate_file(c, &rel)?;
        check_memory(&store.config, &m, c, &rel)?;
    }
    let mut events = Vec::new();
    let mut e = crate::change::event::event(
        ctx,
        Op::Resolve,
        Some(key.clone()),
        heads,
        chosen.clone().unwrap_or_default(),
    )?;
    e.consumed = proposals;
    e.reason = Some(match decision {
        Decision::Keep => "kept the current version".to_string(),
        // The whole id: a prefix unique today may not be once the log grows.
        Decision::Take(id) => format!("took {}", taken(&conflict, key, id)?.id),
        Decision::Both => "kept both".to_string(),
        Decision::BothWithAncestor => "kept both and the ancestor".to_string(),
        Decision::Content(_) => "edited".to_string(),
    });
    let id = e.id.clone();
    events.push(e);
    let mut added = Vec::new();
    if let Decision::Both | Decision::BothWithAncestor = decision {
        events.extend(other_versions_kept(
            store,
            ctx,
            replay,
            &conflict,
            chosen.as_ref(),
            &mut added,
        )?);
    }
    Ok((events, Resolved { id, added }))
}

/// A memory edited to settle a conflict is a fresh human decision: it is
/// updated now, and unless the editor changed the source, its source says
/// who decided, when and how (the ancestor's would make it rank as old).
fn decided_now(content: &str, conflict: &Conflict, ctx: &Ctx) -> String {
    let Ok(mut m) = Memory::parse(content) else {
        // The policy check that follows names what is wrong with it.
        return content.to_string();
    };
    let before: Vec<Option<String>> = std::iter::once(conflict.current.as_deref())
        .chain(conflict.candidates.iter().map(|c| c.content.as_deref()))
        .flatten()
        .filter_map(|c| Memory::parse(c).ok().map(|m| m.source))
        .collect();
    if m.source.is_none() || before.contains(&m.source) {
        let who = ctx.actor.split(" <").next().unwrap_or(&ctx.actor);
        m.source = Some(format!(
            "decided by {who} on {} (memoir resolve --edit)",
            ctx.now.date()
        ));
    }
    m.updated = Some(ctx.now);
    m.render()
}

/// Did the memory fork (two versions that disagree), rather than only
/// wait on a proposal?
fn is_fork(conflict: &Conflict) -> bool {
    conflict
        .candidates
        .iter()
        .filter(|c| c.op != Op::Propose)
        .count()
        > 1
}

/// The version `--take ID` names: the one whose id is `id`, else the one
/// whose id starts with it (at least 6 characters). Ids begin with their
/// time, so versions made close together share a short prefix: one that
/// names several is refused, never settled by which came first.
fn taken<'c>(conflict: &'c Conflict, key: &Key, id: &str) -> Result<&'c Candidate, StoreError> {
    let ids = |cs: &[&Candidate]| {
        cs.iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(c) = conflict.candidates.iter().find(|c| c.id == id) {
        return Ok(c);
    }
    let matches: Vec<&Candidate> = conflict
        .candidates
        .iter()
        .filter(|c| id.len() >= 6 && c.id.starts_with(id))
        .collect();
    match matches[..] {
        [c] => Ok(c),
        [] => Err(StoreError::NoSuchVersion {
            key: key.to_string(),
            id: id.to_string(),
            candidates: ids(&conflict.candidates.iter().collect::<Vec<_>>()),
        }),
        _ => Err(StoreError::AmbiguousVersion {
            key: key.to_string(),
            id: id.to_string(),
            matches: ids(&matches),
        }),
    }
}

/// The content a decision gives the memory in conflict (`None`: none).
fn chosen_content(
    conflict: &Conflict,
    key: &Key,
    decision: &Decision,
) -> Result<Option<String>, StoreError> {
    Ok(match decision {
        Decision::Keep | Decision::BothWithAncestor => conflict.current.clone(),
        // After a fork the file shows the ancestor, which neither side
        // holds any more: the key keeps the first side's version instead.
        Decision::Both if is_fork(conflict) => conflict
            .candidates
            .iter()
            .filter(|c| c.op != Op::Propose)
            .find_map(|c| c.content.clone()),
        Decision::Both => conflict.current.clone(),
        Decision::Take(id) => taken(conflict, key, id)?.content.clone(),
        Decision::Content(c) => Some(c.clone()),
    })
}

/// For `--both`: each other version of the conflict kept as a memory of
/// its own, `<slug>-N` (named in `added`), each through the write policy.
fn other_versions_kept(
    store: &Store,
    ctx: &Ctx,
    replay: &Replay,
    conflict: &Conflict,
    chosen: Option<&String>,
    added: &mut Vec<Key>,
) -> Result<Vec<Event>, StoreError> {
    let key = &conflict.key;
    let rel = key.rel_path();
    let mut events = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    for c in &conflict.candidates {
        let Some(content) = &c.content else { continue };
        if Some(content) == chosen || taken.contains(content) {
            continue;
        }
        taken.push(content.clone());
        let new_key = crate::model::key::first_free_numbered(key, |k| {
            replay.view(k).is_some() || added.contains(k) || store.path(&k.rel_path()).exists()
        })
        .map_err(|e| StoreError::Invalid {
            path: key.to_string(),
            line: None,
            message: e.to_string(),
        })?
        .ok_or_else(|| StoreError::Invalid {
            path: key.to_string(),
            line: None,
            message: "no free key left".into(),
        })?;
        let mut m = Memory::parse(content).map_err(|e| StoreError::invalid(&rel, &e))?;
        m.name = new_key.slug.clone();
        let body = m.render();
        check_memory(&store.config, &m, &body, &new_key.rel_path())?;
        let prev = replay
            .memories
            .get(&new_key)
            .map(|v| v.heads.clone())
            .unwrap_or_default();
        events.push(crate::change::event::event(
            ctx,
            Op::Remember,
            Some(new_key.clone()),
            prev,
            body,
        )?);
        added.push(new_key);
    }
    Ok(events)
}
