//! Bringing the persistent index up to date: with the logs (appended
//! entries applied by the one transition, anything else replayed) and with
//! the memory files (a stat per file, a read of what changed).

use crate::index::cache::{Cache, Dict, FileEntry};
use crate::index::watched::Since;
use crate::log::files::{log_growth, LogFile};
use crate::log::transition::advance_by;
use crate::model::event::{Event, Op};
use crate::model::fingerprint::fingerprint;
use crate::model::memory::{Memory, Summary};
use crate::model::stamp::Stamp;
use crate::policy::memory::validate_file;
use crate::store::{Store, StoreError};
use std::collections::HashSet;
use std::io;

/// The index entry for a file's content: summary when it is a valid memory
/// whose name matches its file name.
pub(crate) fn entry_for(content: &str, stamp: Stamp, rel: &str, dict: &mut Dict) -> FileEntry {
    match validate_file(content, rel) {
        Ok(m) => entry_of(rel, content, &m, stamp, dict),
        Err(e) => FileEntry {
            stamp,
            hash: fingerprint(content.as_bytes()),
            summary: None,
            error: Some(e.to_string()),
            terms: Default::default(),
            len: 0,
            // Not searched, so never shown.
            clean: false,
        },
    }
}

/// The index entry of a valid memory file.
fn entry_of(rel: &str, content: &str, m: &Memory, stamp: Stamp, dict: &mut Dict) -> FileEntry {
    Parsed::of(rel, content, m).into_entry(stamp, dict)
}

/// What the index keeps of a valid memory file, before its terms are interned
/// (so that files can be read and tokenized in parallel).
struct Parsed {
    hash: u64,
    summary: Summary,
    terms: crate::index::terms::Terms,
    len: u32,
    clean: bool,
}

impl Parsed {
    fn of(rel: &str, content: &str, m: &Memory) -> Parsed {
        let (terms, len) = crate::index::terms::term_counts(m);
        let summary = Summary::of(m);
        Parsed {
            hash: fingerprint(content.as_bytes()),
            // Scanned here, on the reading threads.
            clean: crate::index::cache::holds_no_secret(rel, content, Some(&summary)),
            summary,
            terms,
            len,
        }
    }

    fn into_entry(self, stamp: Stamp, dict: &mut Dict) -> FileEntry {
        let terms = crate::index::cache::TermList::of(
            self.terms
                .into_iter()
                .map(|(t, (tf, mask))| (dict.intern(&t), tf, mask))
                .collect(),
        );
        FileEntry {
            stamp,
            hash: self.hash,
            summary: Some(self.summary),
            error: None,
            terms,
            len: self.len,
            clean: self.clean,
        }
    }
}

/// Loads the persistent index and brings it up to date with the logs
/// and the memory files, reading only what changed.
pub fn refreshed_cache(store: &Store) -> Result<Cache, StoreError> {
    let mut cache = crate::index::file::load(&store.state);
    let since = Since::ask(store, cache.watch.as_ref());
    refresh_logs_since(store, &mut cache, &since)?;
    refresh_files(store, &mut cache, &since)?;
    Ok(cache)
}

/// Brings `cache.keys` up to date with the logs: appended bytes are
/// parsed and applied when they only extend the DAG; anything else
/// (a rewritten or removed log, a fork) replays everything.
pub(crate) fn refresh_logs(store: &Store, cache: &mut Cache) -> Result<(), StoreError> {
    refresh_logs_since(store, cache, &Since::Absent)
}

/// [`refresh_logs`], the logs listed from the watcher's answer `since`
/// when there is one.
pub(crate) fn refresh_logs_since(
    store: &Store,
    cache: &mut Cache,
    since: &Since,
) -> Result<(), StoreError> {
    let files = crate::index::watched::log_files(store, &cache.logs, since)?;
    // With no logs seen yet (no persistent index: a fresh clone's first
    // command), everything is appended: applied a day at a time, it is all
    // done again by the replay below at the store's first fork.
    let growth = (!cache.logs.is_empty())
        .then(|| log_growth(&files, &cache.logs))
        .flatten();
    if let Some(appended) = growth {
        if appended.is_empty() {
            return Ok(());
        }
        if apply_appended(store, cache, &appended)? {
            for f in &files {
                cache.logs.insert(f.rel.clone(), f.stamp);
            }
            cache.dirty = true;
            return Ok(());
        }
    }
    cache.dirty = true;
    // What a failed incremental pass applied goes before the replay.
    cache.keys.clear();
    cache.pending.clear();
    cache.notes.clear();
    cache.note_ids = None;
    // Heads and the views' fingerprints are all the index keeps.
    let (replay, _) =
        crate::log::read::replay_keeping(store, Vec::new(), crate::log::replay::Keep::Prints)?;
    cache.keys = replay.key_states();
    cache.pending = replay.pending_events();
    cache.add_notes(replay.into_note_events());
    cache.logs = files.into_iter().map(|f| (f.rel, f.stamp)).collect();
    Ok(())
}

/// Applies the entries appended to logs since they were last seen, if
/// each only moves a memory forward; `false` asks for a full replay.
fn apply_appended(
    store: &Store,
    cache: &mut Cache,
    appended: &[(&LogFile, u64)],
) -> Result<bool, StoreError> {
    // A day at a time (logs are `memory/log/<day>/<writer>.md`), so that
    // a long pull's new days are never all held at once; within a day, the
    // writers' entries in time order, so that one naming another writer's
    // version of the same day comes after it. (Returning false part-way
    // is fine: the full replay resets it all.)
    let day = |f: &LogFile| f.rel.rsplit_once('/').map(|(d, _)| d.to_string());
    let mut at = 0;
    while at < appended.len() {
        let this = day(appended[at].0);
        let mut events = Vec::new();
        while at < appended.len() && day(appended[at].0) == this {
            let (f, from) = appended[at];
            at += 1;
            let Some(text) = store.read_from(&f.rel, from) else {
                return Ok(false);
            };
            // Quarantined entries are skipped as a full replay skips
            // them; a torn end may yet be completed: replay it all.
            match crate::log::files::parse_log(store, &f.rel, &text) {
                Ok(p) if p.torn.is_empty() && !p.open_end => events.extend(p.events),
                _ => return Ok(false),
            }
        }
        // Stable: entries of one time keep their order in their log.
        events.sort_by_key(|e| e.time);
        if !apply_events(cache, events) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The listed memory files the cache cannot keep as they are (new, or
/// changed since it read them); the cache keeps the others and lets go of
/// those no longer listed.
fn stale_files(files: Vec<(String, Stamp)>, cache: &mut Cache) -> Vec<(String, Stamp)> {
    let mut old = std::mem::take(&mut cache.files);
    let mut stale = Vec::new();
    for (rel, stamp) in files {
        match old.remove(&rel) {
            Some(e) if stamp.still_as(e.stamp, cache.loaded_mtime) => {
                cache.files.insert(rel, e);
            }
            _ => stale.push((rel, stamp)),
        }
    }
    cache.dirty |= !old.is_empty() || !stale.is_empty();
    stale
}

/// Files to index from which the work reports its progress (fewer take
/// well under a second).
const PROGRESS_FROM: usize = 1000;

/// Re-reads memory files whose stamp changed (or is too recent to trust):
/// those the watcher's answer `since` names, or those a listing of every
/// folder finds. Records the watcher's token the files were stat'ed after.
pub(crate) fn refresh_files(
    store: &Store,
    cache: &mut Cache,
    since: &Since,
) -> Result<(), StoreError> {
    let recorded = cache.files.iter().map(|(rel, e)| (rel.clone(), e.stamp));
    let listed = crate::index::watched::memory_files(store, recorded, since)?;
    let stale = stale_files(listed, cache);
    read_stale(store, cache, &stale)?;
    let mark = since.mark(store);
    if mark.is_some() && cache.watch != mark {
        cache.watch = mark;
        cache.dirty = true;
    }
    Ok(())
}

/// Reads and indexes the stale files.
fn read_stale(
    store: &Store,
    cache: &mut Cache,
    stale: &[(String, Stamp)],
) -> Result<(), StoreError> {
    // Reading and tokenizing is the cost of a cold index: workers on every
    // core read batches (a bounded channel keeps memory flat) while this
    // thread interns their terms.
    let threads = crate::parallel::worker_threads();
    // Up to 3 × threads batches' term maps are alive at once: batches of
    // 512 memories with 40-sentence bodies took a cold query of 50,000
    // to 200 MB; 128 keep it to 172 MB, no slower.
    let batches: Vec<&[(String, Stamp)]> = stale.chunks(128).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) =
        std::sync::mpsc::sync_channel::<(usize, Vec<Option<Result<Parsed, String>>>)>(threads * 2);
    let mut received = 0;
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (tx, next, batches) = (tx.clone(), &next, &batches);
            s.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(batch) = batches.get(i) else { break };
                let parsed = batch
                    .iter()
                    .map(|(rel, _)| parse_for_index(store, rel))
                    .collect();
                if tx.send((i, parsed)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // A cold index of a large store takes seconds: say how far it is.
        let large = stale.len() >= PROGRESS_FROM;
        let meter = store.meter("indexing memory files", stale.len(), large);
        // Intern on this thread while the workers read on.
        for (i, parsed) in rx {
            received += 1;
            meter.advance(received * 128);
            for ((rel, stamp), parsed) in batches[i].iter().zip(parsed) {
                let entry = match parsed {
                    // Removed since the listing (a `forget` beside this
                    // read): not there.
                    None => continue,
                    Some(Ok(p)) => p.into_entry(*stamp, &mut cache.dict),
                    Some(Err(error)) => FileEntry {
                        stamp: *stamp,
                        hash: 0,
                        summary: None,
                        error: Some(error),
                        terms: Default::default(),
                        len: 0,
                        clean: false,
                    },
                };
                cache.files.insert(rel.clone(), entry);
            }
        }
        meter.finish();
    });
    if received != batches.len() {
        return Err(StoreError::Io {
            path: store.path("memory"),
            source: io::Error::other("a thread reading memory files failed"),
        });
    }
    Ok(())
}

/// Reads, validates and tokenizes a memory file for the index (`None`:
/// it is gone).
fn parse_for_index(store: &Store, rel: &str) -> Option<Result<Parsed, String>> {
    match store.read_memory_file(rel) {
        Ok(Some(c)) => Some(
            validate_file(&c, rel)
                .map(|m| Parsed::of(rel, &c, &m))
                .map_err(|e| e.to_string()),
        ),
        Ok(None) => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

/// Saves the persistent index if a refresh changed it; clears `dirty`
/// once it is on disk.
pub(crate) fn save_if_dirty(store: &Store, cache: &mut Cache) {
    if cache.dirty && crate::index::file::save(&store.state, cache).is_ok() {
        cache.dirty = false;
    }
}

/// Applies events that only move memories forward to the index's key
/// states; `false` when one does not (a fork, an unknown `prev`).
pub(crate) fn apply_events(cache: &mut Cache, events: Vec<Event>) -> bool {
    // What the batch consumes, wherever in it: entries of one time from
    // several writers are not in causal order.
    let consumed: HashSet<&str> = events
        .iter()
        .flat_map(|e| e.consumed.iter().map(String::as_str))
        .collect();
    cache.pending.retain(|p| !consumed.contains(p.id.as_str()));
    let proposals: Vec<Event> = events
        .iter()
        .filter(|e| e.op == Op::Propose && !consumed.contains(e.id.as_str()))
        .cloned()
        .collect();
    cache.pending.extend(proposals);
    cache.add_notes(crate::index::cache::notes_of(&events));
    for e in events {
        if !e.op.is_version() {
            continue;
        }
        let Some(key) = &e.key else { continue };
        let k = key.to_string();
        let Some(after) = advance_by(cache.keys.get(&k), &e) else {
            return false;
        };
        cache.keys.insert(k, after);
    }
    true
}

/// MEMORY.md's generated block from the index's summaries, within
/// `budget` lines.
pub(crate) fn memory_md_block(cache: &Cache, budget: usize) -> crate::render::memory_md::Block {
    let summaries = cache.summaries();
    crate::render::memory_md::Summaries::all(summaries.iter().map(|(k, s)| (k, *s))).render(budget)
}
