//! The one door to the persistent index. Every command opens it through
//! [`Index`], with the constructor of its use:
//!
//! - a write (`remember`, `note`, `forget`) takes [`Index::for_write`]: the
//!   file read in place and the log's tail replayed on it, never the whole
//!   index (see `index::snapshot`);
//! - a search (`recall`, `context`) takes [`Index::for_search`]: the file in
//!   place, minus the memory files changed since, plus those files now (see
//!   `index::corpus`);
//! - `check` asks [`Index::as_saved`] which files it vouches hold no
//!   secret, as it was saved, with nothing brought up to date;
//! - a command that needs all of it (`list`, `status`, `reindex`, `record`,
//!   `resolve`, `rollback`, the hot context) holds an [`Index`] decoded
//!   whole and brought up to date ([`Index::refreshed`]).
//!
//! A command that writes while holding it whole tells it what it wrote in
//! one way, [`Index::record`], and saves it with [`Index::save`]. What the
//! index keeps, how its file is laid out and when a recorded stamp still
//! vouches for a file (git's racy rule, `Stamp::still_as`) stay inside
//! `index/`.

use crate::index::cache::{notes_of, Cache};
use crate::index::corpus::Corpus;
use crate::index::layout::Load;
use crate::index::snapshot::Snapshot;
use crate::log::files::LogFile;
use crate::model::event::Event;
use crate::model::stamp::Stamp;
use crate::store::{Store, StoreError};

/// The persistent index decoded whole, as a command holds it. Reading it
/// is free ([`std::ops::Deref`] to the decoded index); changing it goes
/// through [`Index::record`].
#[derive(Debug)]
pub struct Index {
    cache: Cache,
}

/// What a command wrote, as the index is told of it.
#[derive(Debug, Default)]
pub struct Written<'a> {
    /// The events appended (proposals, notes and versions).
    pub events: &'a [Event],
    /// The log files appended to, with their stamps after the append.
    pub logs: Vec<LogFile>,
    /// The memory files written (with their content) or removed (`None`).
    pub files: Vec<(String, Option<&'a str>)>,
}

impl Index {
    /// For a write: the index file in place and the log's tail. With no
    /// usable file, or a tail that cannot be replayed on it, the index is
    /// refreshed and saved first (the one time a write reads the store).
    pub fn for_write(store: &Store) -> Result<Snapshot, StoreError> {
        crate::index::snapshot::snapshot(store)
    }

    /// For a search: what it runs over, with a warning for each memory file
    /// skipped. With `notes`, the logs' notes too.
    pub fn for_search(store: &Store, notes: bool) -> Result<(Corpus, Vec<String>), StoreError> {
        crate::index::corpus::corpus(store, notes)
    }

    /// The file as saved, read in place and not brought up to date: for a
    /// reader that takes only what its records vouch for about a content
    /// it has read itself ([`crate::index::OpenIndex::vouches_clean`]).
    /// `None` if there is none, or it is damaged or another version's.
    pub fn as_saved(store: &Store) -> Option<crate::index::OpenIndex> {
        crate::index::file::open(&store.state, Load::InPlace).map(|(index, _)| index)
    }

    /// Whole, brought up to date with the logs and the memory files.
    pub fn refreshed(store: &Store) -> Result<Index, StoreError> {
        Ok(Index {
            cache: crate::index::refresh::refreshed_cache(store)?,
        })
    }

    /// Whole and up to date, and saved, for a reader that answers even
    /// when a log is broken: that costs conflict flags (a warning), not
    /// the answer. The warnings name every memory file skipped.
    pub fn refreshed_leniently(store: &Store) -> Result<(Index, Vec<String>), StoreError> {
        let (cache, warnings) = crate::index::corpus::read_index(store)?;
        Ok((Index { cache }, warnings))
    }

    /// Whole, up to date with the logs only: for a command that reads the
    /// one memory file it shows itself.
    pub fn logs_refreshed(store: &Store) -> Result<Index, StoreError> {
        let mut cache = crate::index::file::load(&store.state);
        crate::index::refresh::refresh_logs(store, &mut cache)?;
        Ok(Index { cache })
    }

    /// Takes the index file off the disk before a command rewrites memory
    /// files outside any log's tail (`rebuild`): a kill while it writes
    /// leaves no index to trust. Returns the index it held, to be told of
    /// the `n` files and saved again, when it is worth patching (a few
    /// thousand files; past that, the next reader builds it again).
    pub fn take_off(store: &Store, n: usize) -> Option<Index> {
        const MAX_PATCHED: usize = 4096;
        if n == 0 {
            return None;
        }
        let cache = (n <= MAX_PATCHED
            && crate::index::file::open(&store.state, Load::InPlace).is_some())
        .then(|| crate::index::file::load(&store.state));
        let _ = crate::index::file::remove(&store.state);
        cache.map(|cache| Index { cache })
    }

    /// Removes the index file; the next reader builds it again (`redact`:
    /// its terms may hold a secret the logs no longer do).
    pub fn discard(store: &Store) -> Result<(), StoreError> {
        crate::index::file::remove(&store.state).map_err(StoreError::io(store.state.index_path()))
    }

    /// Tells the index what a command wrote: the proposals its events
    /// add and consume, the memory files as they are now (each stat'ed
    /// after its write), each version's new heads, the logs' new stamps.
    /// Events must each move their memory forward from its heads here.
    pub fn record(&mut self, store: &Store, written: &Written<'_>) -> Result<(), StoreError> {
        let cache = &mut self.cache;
        for e in written.events {
            crate::log::transition::track_pending(&mut cache.pending, e, |p| &p.id, Event::clone);
        }
        cache.add_notes(notes_of(written.events));
        for (rel, content) in &written.files {
            match content {
                Some(c) => {
                    let stamp = std::fs::symlink_metadata(store.path(rel))
                        .map(|m| Stamp::of(&m))
                        .map_err(StoreError::io(store.path(rel)))?;
                    let entry = crate::index::refresh::entry_for(c, stamp, rel, &mut cache.dict);
                    cache.files.insert(rel.clone(), entry);
                }
                None => {
                    cache.files.remove(rel);
                }
            }
        }
        for e in written.events.iter().filter(|e| e.op.is_version()) {
            let Some(key) = &e.key else { continue };
            let k = key.to_string();
            let after = crate::log::transition::after_write(cache.keys.get(&k), e);
            cache.keys.insert(k, after);
        }
        for f in &written.logs {
            cache.logs.insert(f.rel.clone(), f.stamp);
        }
        cache.dirty = true;
        Ok(())
    }

    /// Saves the index if it changed since it was loaded (losing it only
    /// costs time: a failure is not an error).
    pub fn save(&mut self, store: &Store) {
        crate::index::refresh::save_if_dirty(store, &mut self.cache);
    }

    /// Saves the index, reporting a failure (a command whose work is to
    /// leave it on disk).
    pub fn save_or_fail(&mut self, store: &Store) -> Result<(), StoreError> {
        crate::index::file::save(&store.state, &self.cache)
            .map_err(StoreError::io(store.state.index_path()))?;
        self.cache.dirty = false;
        Ok(())
    }

    /// MEMORY.md's generated block from the summaries, within `budget`
    /// lines.
    pub fn memory_md_block(&self, budget: usize) -> crate::render::memory_md::Block {
        crate::index::refresh::memory_md_block(&self.cache, budget)
    }

    /// One warning for each memory file that does not parse.
    pub fn skipped_files(&self) -> Vec<String> {
        crate::index::corpus::skipped_files(&self.cache)
    }
}

impl std::ops::Deref for Index {
    type Target = Cache;

    fn deref(&self) -> &Cache {
        &self.cache
    }
}
