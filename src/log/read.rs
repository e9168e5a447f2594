//! Reading the whole log: every event of every log file, one file at a
//! time, with what a reader skipped, and the replays built from them.

use crate::log::files::{error_message, quarantine_message, LogIssue, Logs};
use crate::log::replay::Replay;
use crate::model::event::Event;
use crate::store::{Store, StoreError};

/// What names a quarantined entry in the accept-list: the blob id of its
/// bytes (a forged entry cannot take an accepted one's name).
pub(crate) fn quarantine_id(text: &str, q: &crate::model::event::Quarantined) -> String {
    crate::git::blob_id(text.get(q.span.clone()).unwrap_or("").as_bytes())
}

/// Has the team accepted the quarantined entry of this id
/// (`accepted_entries:` in the config)?
pub(crate) fn is_accepted(store: &Store, id: &str) -> bool {
    store
        .config
        .accepted_entries
        .iter()
        .any(|a| a.eq_ignore_ascii_case(id))
}

/// Reads and parses every log.
pub fn read_logs(store: &Store) -> Result<Logs, StoreError> {
    let mut logs = Logs::default();
    let mut issues = Vec::new();
    each_log(store, &mut issues, |rel, events| {
        let start = logs.events.len();
        logs.events.extend(events);
        logs.files.push((rel.to_string(), start..logs.events.len()));
    })?;
    logs.warnings = issues.iter().map(LogIssue::to_string).collect();
    Ok(logs)
}

/// Reads and parses every log, one at a time (its text let go before
/// the next is read), handing each one's events to `each`. What a
/// reader skips becomes an issue: entries torn by a crash, quarantined
/// entries, files that are no logs or cannot be read.
fn each_log(
    store: &Store,
    issues: &mut Vec<LogIssue>,
    mut each: impl FnMut(&str, Vec<Event>),
) -> Result<(), StoreError> {
    store
        .stats
        .replays
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (files, skipped) = crate::log::files::log_listing(store)?;
    issues.extend(skipped);
    // Years of history are seconds of reading (a fresh clone's first
    // command, check, rebuild, consolidate): said on a terminal.
    let bytes: u64 = files.iter().map(|f| f.stamp.size).sum();
    let total = files.len();
    let large = total >= PROGRESS_FILES || bytes >= PROGRESS_BYTES;
    let meter = store.meter("reading logs", total, large);
    for (done, f) in files.into_iter().enumerate() {
        meter.advance(done);
        let text = match crate::log::files::read_log(store, &f.rel) {
            Ok(text) => text,
            Err(e) => {
                issues.push(LogIssue {
                    path: f.rel.clone(),
                    line: None,
                    message: format!("{} (skipped)", error_message(&e)),
                    error: true,
                    review: false,
                });
                continue;
            }
        };
        let parsed = crate::log::files::parse_log(store, &f.rel, &text)?;
        let names: Vec<String> = parsed
            .quarantined
            .iter()
            .map(|q| quarantine_id(&text, q))
            .collect();
        drop(text);
        for line in &parsed.torn {
            issues.push(LogIssue {
                path: f.rel.clone(),
                line: Some(*line),
                message: "skipped an entry torn by a crash (never acknowledged)".into(),
                error: false,
                review: false,
            });
        }
        for (q, name) in parsed.quarantined.iter().zip(names) {
            let accepted = is_accepted(store, &name);
            let decide = if accepted {
                "accepted in memory/config.yaml".to_string()
            } else {
                format!(
                    "to accept it, since history keeps it, list {name} under `accepted_entries:` in memory/config.yaml"
                )
            };
            issues.push(LogIssue {
                path: f.rel.clone(),
                line: Some(q.error.line.max(q.line)),
                message: format!(
                    "{}; skipped by every reader (the change it held, if any, must be made again; {decide})",
                    quarantine_message(q)
                ),
                error: false,
                review: !accepted,
            });
        }
        each(&f.rel, parsed.events);
    }
    meter.finish();
    Ok(())
}

/// Log files from which [`each_log`] says how far it is (30 writers over
/// three years write 33,000).
const PROGRESS_FILES: usize = 1000;
/// Log bytes from which [`each_log`] says how far it is (a 60,000-memory
/// store's 250 logs hold 160 MB and take a second).
const PROGRESS_BYTES: u64 = 16 << 20;

/// Replays every log, with `extra` events (not logged yet) added. Lean:
/// the text of versions that can no longer be a view is let go as the
/// logs are read one at a time (see [`crate::log::replay::Builder`]), so
/// memory stays bounded by the memories rather than the logs' length;
/// history's old versions need [`read_logs`].
pub fn replay_with(store: &Store, extra: Vec<Event>) -> Result<(Replay, Vec<String>), StoreError> {
    let (mut replay, issues) = replay_keeping(store, extra, crate::log::replay::Keep::Views)?;
    // Conflicts show a common ancestor, whose text was let go: read the
    // logs again for those versions only.
    let missing = replay.missing_views();
    restore(store, &mut replay, &missing)?;
    Ok((replay, issues.iter().map(LogIssue::to_string).collect()))
}

/// Puts back the text of versions `ids` that a replay let go, from a
/// second read of the logs.
pub(crate) fn restore(
    store: &Store,
    replay: &mut Replay,
    ids: &std::collections::HashSet<String>,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    each_event(store, |e| {
        if ids.contains(&e.id) {
            replay.restore(e);
        }
        Ok(())
    })
}

/// Hands every logged event to `each`, from a read of the logs a file at
/// a time; stops at `each`'s first error.
pub(crate) fn each_event(
    store: &Store,
    mut each: impl FnMut(Event) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut failed = None;
    each_log(store, &mut Vec::new(), |_, events| {
        for e in events {
            if failed.is_none() {
                failed = each(e).err();
            }
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// Replays every log keeping the text of `keep`, with `extra` events.
pub(crate) fn replay_keeping(
    store: &Store,
    extra: Vec<Event>,
    keep: crate::log::replay::Keep,
) -> Result<(Replay, Vec<LogIssue>), StoreError> {
    let mut b = crate::log::replay::Builder::new(keep);
    let mut issues = Vec::new();
    each_log(store, &mut issues, |_, events| {
        events.into_iter().for_each(|e| b.add(e))
    })?;
    extra.into_iter().for_each(|e| b.add(e));
    let replay = b.finish();
    issues.extend(replay.warnings.iter().map(|w| LogIssue {
        path: "memory/log".into(),
        line: None,
        message: w.clone(),
        error: false,
        review: false,
    }));
    Ok((replay, issues))
}

/// Replays every log (lean: see [`replay_with`]).
pub fn replay(store: &Store) -> Result<(Replay, Vec<String>), StoreError> {
    replay_with(store, Vec::new())
}
