//! Rollback: the memory files exactly as they were at a revision, by
//! appending events and committing. Logs keep everything; history is never
//! rewritten (to undo a bad consolidation C, roll back to `C^`).

use crate::change::version::VersionError;
use crate::model::event::Op;
use crate::model::key::Key;
use crate::model::version_message::{Change, Made, Sign, VersionMessage};
use crate::render::memory_md::MEMORY_MD;
use crate::store::{Ctx, Store, StoreError};
use std::collections::{BTreeMap, BTreeSet};

/// What `rollback` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Plan only; change nothing.
    pub dry_run: bool,
    /// Overwrite unrecorded hand edits.
    pub force: bool,
    /// Commit author instead of git's identity.
    pub author: Option<(String, String)>,
    /// Commit on a detached HEAD.
    pub allow_detached: bool,
}

/// What a rollback did (or, dry, would do).
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The commit rolled back to.
    pub target: String,
    /// Memories given back their content at the target.
    pub restored: Vec<Key>,
    /// Memories the target did not have, forgotten.
    pub forgotten: Vec<Key>,
    /// Conflicts the rollback closes.
    pub closed: Vec<Key>,
    /// The commit made, if any.
    pub commit: Option<String>,
}

/// Makes the memory files and MEMORY.md byte-identical to `rev`'s.
pub fn rollback(
    store: &Store,
    ctx: &Ctx,
    rev: &str,
    opts: &Options,
) -> Result<Report, VersionError> {
    let (_lock, session) = crate::change::version::begin_version(
        store,
        opts.dry_run,
        opts.author.clone(),
        opts.allow_detached,
    )?;
    let (target, files) = store.files_at(rev, "memory/")?;
    refuse_before_the_store(&target, &files)?;
    let (mut replay, mut drifts) = crate::change::drift::drifts(store)?;
    // Views a killed write left behind are memoir's: brought up to the
    // logs first, or the rollback would commit them as they are.
    if !opts.dry_run && drifts.iter().any(|d| d.kind.is_memoirs()) {
        crate::change::rebuild::rebuild_locked(store, false, false)?;
        (replay, drifts) = crate::change::drift::drifts(store)?;
    }
    if !opts.force {
        refuse_hand_edits(&drifts)?;
    } else if !opts.dry_run && drifts.iter().any(|d| !d.kind.is_memoirs()) {
        // --force discards them, as it says: the views become what the
        // logs give first, then the rollback's events move them to `rev`'s
        // (committed as they were, a hand edit was in no log).
        crate::change::rebuild::rebuild_locked(store, true, false)?;
        replay = crate::change::drift::drifts(store)?.0;
    }
    let mut report = Report {
        target: target.clone(),
        ..Report::default()
    };
    let wanted = memories_at(store, &files, rev)?;
    let keys: BTreeSet<&Key> = wanted
        .keys()
        .chain(replay.views().map(|(k, _)| k))
        .chain(replay.memories.keys())
        .collect();
    let short = &target[..target.len().min(12)];
    let mut events = Vec::new();
    for key in keys {
        let goal = wanted.get(key).map(String::as_str);
        if let Some(mut e) = back_to(ctx, &replay, key, goal, &mut report)? {
            e.reason = Some(format!("rollback to {short}"));
            events.push(e);
        }
    }
    let index = files
        .get(MEMORY_MD)
        .map(|index| String::from_utf8_lossy(index).into_owned());
    if let Some(text) = &index {
        crate::policy::check_secrets(text, MEMORY_MD)?;
    }
    let Some((session, mut sig)) = session else {
        return Ok(report);
    };
    // The version's gate, as consolidate's: what the store changed since
    // HEAD passes it (logs only grown, no secret appended by hand, no
    // file around the policy) before anything is written.
    let before = crate::change::version::changed_store_paths(store)?;
    crate::change::version::gate_commit(store, &before, None)?;
    let mut persistent = crate::index::Index::refreshed(store)?;
    if !events.is_empty() {
        crate::change::batch::apply(store, &mut persistent, &events)?;
    }
    // MEMORY.md as it was, the team's text around the block included.
    if let Some(text) = &index {
        store.write_view(MEMORY_MD, text)?;
    }
    let message = commit_message(&report, short);
    let paths = crate::change::version::changed_store_paths(store)?;
    sig.seconds = ctx.now.0.div_euclid(1000);
    report.commit = crate::change::version::commit(store, session, &paths, &message, &sig)?;
    Ok(report)
}

/// A revision with no logs is from before the store: rolling back to it
/// would forget every memory (or, in an empty store, do nothing without a
/// word), which is never what a rollback is for.
fn refuse_before_the_store(
    target: &str,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), StoreError> {
    if files.keys().any(|p| p.starts_with("memory/log/")) {
        return Ok(());
    }
    // The revision as typed may look like a token to the output's guard
    // (a full commit id): the short id names it.
    Err(StoreError::Invalid {
        path: "rollback".into(),
        line: None,
        message: format!(
            "commit {} is from before this store existed (it has no memory/log/): there is no version to roll back to; `memoir versions` lists the store's versions",
            &target[..target.len().min(12)]
        ),
    })
}

/// Refuses to roll back over hand edits, which the rollback would lose.
fn refuse_hand_edits(drifts: &[crate::change::drift::Drift]) -> Result<(), StoreError> {
    let hand: Vec<&str> = drifts
        .iter()
        .filter(|d| !d.kind.is_memoirs())
        .map(|d| d.path.as_str())
        .collect();
    if hand.is_empty() {
        return Ok(());
    }
    Err(StoreError::Decision(format!(
        "unrecorded hand edits would be lost: {} (run `memoir record`, or pass --force)",
        hand.join(", ")
    )))
}

/// The memory files of the store at `rev` (`files`, store-relative), by key.
fn memories_at(
    store: &Store,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
    rev: &str,
) -> Result<BTreeMap<Key, String>, StoreError> {
    let mut wanted = BTreeMap::new();
    for (rel, bytes) in files {
        let Some(key) = Key::from_rel_path(rel) else {
            continue;
        };
        if !store.has_scope(&key.scope) {
            continue;
        }
        let content = String::from_utf8(bytes.clone()).map_err(|_| StoreError::Invalid {
            path: format!("{rel} at {rev}"),
            line: None,
            message: "not valid UTF-8".into(),
        })?;
        wanted.insert(key, content);
    }
    Ok(wanted)
}

/// The event that gives `key` its content at the target (`goal`; `None`:
/// the target did not have it), if it differs now or is in conflict;
/// noted in the report.
fn back_to(
    ctx: &Ctx,
    replay: &crate::log::replay::Replay,
    key: &Key,
    goal: Option<&str>,
    report: &mut Report,
) -> Result<Option<crate::model::event::Event>, StoreError> {
    let versions = replay.memories.get(key);
    let conflict = versions.is_some_and(|v| v.conflict);
    let current = replay.view(key);
    if current == goal && !conflict {
        return Ok(None);
    }
    let heads = versions.map(|v| v.heads.clone()).unwrap_or_default();
    let e = match goal {
        Some(content) => {
            crate::policy::memory::validate_file(content, &key.rel_path())?;
            // An old version is written again: it passes the policy
            // as any write does (a secret committed around it, or
            // caught by rules newer than that commit).
            crate::policy::memory::check_content_secrets(content, &key.rel_path())?;
            let op = if conflict { Op::Resolve } else { Op::Remember };
            report.restored.push(key.clone());
            crate::change::event::event(ctx, op, Some(key.clone()), heads, content.to_string())?
        }
        None if current.is_none() && !conflict => return Ok(None),
        None => {
            report.forgotten.push(key.clone());
            let op = if conflict { Op::Resolve } else { Op::Forget };
            crate::change::event::event(ctx, op, Some(key.clone()), heads, String::new())?
        }
    };
    if conflict {
        report.closed.push(key.clone());
    }
    Ok(Some(e))
}

/// The rollback commit's message: what it restored and forgot.
fn commit_message(report: &Report, short: &str) -> String {
    fn listed(keys: &[Key], sign: Sign) -> impl Iterator<Item = Change> + '_ {
        keys.iter().map(move |k| Change {
            sign,
            key: k.to_string(),
            direct: false,
        })
    }
    VersionMessage {
        summary: format!(
            "memoir: rollback to {short} ({} restored, {} forgotten)",
            report.restored.len(),
            report.forgotten.len()
        ),
        prose: None,
        changes: listed(&report.restored, Sign::Changed)
            .chain(listed(&report.forgotten, Sign::Forgotten))
            .collect(),
        made: Made::Rollback {
            target: report.target.clone(),
        },
        counts: vec![
            ("restored".into(), report.restored.len() as u64),
            ("forgotten".into(), report.forgotten.len() as u64),
        ],
    }
    .render()
}
