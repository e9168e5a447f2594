//! What a search runs over: the persistent index read in place, minus the
//! memory files changed since it was written, plus those files as they are
//! now, the notes of the logs' tail and the team's own text in MEMORY.md.
//!
//! `recall`, `context` and the hybrid search all start here ([`corpus`]):
//! a warm query reads the index file in place and stats the memory files,
//! reading only those that changed (git's racy rule decides what "changed"
//! means), so a hand edit is seen by the next query without a rewrite of
//! the index.

use crate::index::cache::Cache;
use crate::index::layout::OpenIndex;
use crate::index::terms::{note_terms, Terms};
use crate::index::watched::Since;
use crate::model::event::Event;
use crate::model::memory::Summary;
use crate::model::stamp::Stamp;
use crate::model::time::Timestamp;
use crate::store::{Store, StoreError};

/// A memory file read since the index was written (or not in it yet).
#[derive(Debug, Clone)]
pub struct Fresh {
    /// Its path.
    pub path: String,
    /// What it says, if it parsed.
    pub summary: Option<Summary>,
    /// Why it did not.
    pub error: Option<String>,
    /// Its terms (`index::terms::term_counts`).
    pub terms: Terms,
    /// Its weighted length.
    pub len: u32,
    /// The fingerprint of its content (as the index records a file's).
    pub hash: u64,
}

/// What a search runs over: the index as written, minus the files that
/// changed since, plus those files as they are now.
#[derive(Debug)]
pub struct Corpus {
    /// The persistent index, read in place.
    pub index: OpenIndex,
    /// Index entries to ignore (changed or gone), by position.
    pub skip: Vec<bool>,
    /// Files read now.
    pub fresh: Vec<Fresh>,
    /// The notes of the logs, searched beside the memories.
    pub notes: Vec<NoteDoc>,
    /// The team's own text in MEMORY.md, searched beside the memories
    /// whether or not notes are.
    pub team: Vec<NoteDoc>,
}

impl Corpus {
    /// Each of `keys` with its heads now: the index's, with the log
    /// entries appended since it was saved replayed on top.
    pub fn heads(
        &self,
        store: &Store,
        keys: &[crate::model::key::Key],
    ) -> Vec<(crate::model::key::Key, Vec<String>)> {
        crate::index::snapshot::heads(store, &self.index, keys)
    }

    /// A corpus of the index alone (its notes not read).
    pub fn of(index: OpenIndex) -> Corpus {
        Corpus {
            skip: vec![false; index.len()],
            index,
            fresh: Vec::new(),
            notes: Vec::new(),
            team: Vec::new(),
        }
    }
}

/// What a document that is not a memory is: a note of the logs or a
/// piece of the team's own text in MEMORY.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteSource {
    /// A note of the logs: an unconfirmed observation.
    Log,
    /// The team's text outside MEMORY.md's generated block, from this
    /// line (`render::memory_md::team_text`): written by hand, so ranked
    /// as a confirmed memory, with no date.
    MemoryMd {
        /// Where it starts, from 1.
        line: u32,
    },
}

/// A note of the logs, or a piece of MEMORY.md's own text, as a search
/// reads it.
#[derive(Debug, Clone)]
pub struct NoteDoc {
    /// Its event id, or `MEMORY.md:<line>`.
    pub id: String,
    /// Which kind of document it is.
    pub source: NoteSource,
    /// When it was written.
    pub time: Timestamp,
    /// Who wrote it: `Name <email>`.
    pub actor: String,
    /// What it says.
    pub text: String,
    /// Its terms (`index::terms::note_terms`).
    pub terms: Terms,
    /// Its weighted length.
    pub len: u32,
}

impl NoteDoc {
    /// A note event as a search reads it.
    pub fn of(e: &Event) -> NoteDoc {
        let (terms, len) = note_terms(&e.body);
        NoteDoc {
            id: e.id.clone(),
            source: NoteSource::Log,
            time: e.time,
            actor: e.actor.clone(),
            text: e.body.clone(),
            terms,
            len,
        }
    }

    /// A piece of the team's text in MEMORY.md as a search reads it.
    pub fn team(t: &crate::render::memory_md::TeamText) -> NoteDoc {
        let (terms, len) = note_terms(&t.text);
        NoteDoc {
            id: format!("{}:{}", crate::render::memory_md::MEMORY_MD, t.line),
            source: NoteSource::MemoryMd { line: t.line },
            time: Timestamp(0),
            actor: String::new(),
            text: t.text.clone(),
            terms,
            len,
        }
    }
}

/// The persistent index, refreshed, with a warning for each memory file it
/// skips (not parsed, so not searched); a broken log only costs conflict
/// flags.
pub(crate) fn read_index(store: &Store) -> Result<(Cache, Vec<String>), StoreError> {
    let mut cache = crate::index::file::load(&store.state);
    let mut warnings = Vec::new();
    let since = Since::ask(store, cache.watch.as_ref());
    if let Err(e) = crate::index::refresh::refresh_logs_since(store, &mut cache, &since) {
        warnings.push(format!("{e} (conflicts may not be flagged)"));
    }
    crate::index::refresh::refresh_files(store, &mut cache, &since)?;
    crate::index::refresh::save_if_dirty(store, &mut cache);
    warnings.extend(skipped_files(&cache));
    Ok((cache, warnings))
}

/// What a search runs over. Fast path: the index file read in place,
/// with the few memory files changed since read directly; log entries
/// appended since that only move memories forward leave it valid.
/// Anything more refreshes and rewrites the index first. With `notes`,
/// the notes of the logs' tail too (cut into terms now: a search that
/// leaves notes out skips that).
pub fn corpus(store: &Store, notes: bool) -> Result<(Corpus, Vec<String>), StoreError> {
    let (mut corpus, mut warnings) = memory_corpus(store, notes)?;
    corpus.team = team_text(store, &mut warnings);
    Ok((corpus, warnings))
}

/// The team's own text in MEMORY.md, as documents to search. MEMORY.md is
/// read whole, under the store's cap; one that cannot be read is a warning
/// (memories are still searched).
fn team_text(store: &Store, warnings: &mut Vec<String>) -> Vec<NoteDoc> {
    match store.read(crate::render::memory_md::MEMORY_MD, None) {
        Ok(Some(text)) => crate::render::memory_md::team_text(&text)
            .iter()
            .map(NoteDoc::team)
            .collect(),
        Ok(None) => Vec::new(),
        Err(e) => {
            warnings.push(format!("{e} (its own text is not searched)"));
            Vec::new()
        }
    }
}

/// [`corpus`] but for MEMORY.md's own text.
fn memory_corpus(store: &Store, notes: bool) -> Result<(Corpus, Vec<String>), StoreError> {
    if let Some(found) = corpus_in_place(store, notes)? {
        return Ok(found);
    }
    // read_index saved the refreshed index: read it back from the file
    // (the page cache has it) rather than hold a second copy; encode in
    // memory only if it could not be written.
    let encoded = |cache: &Cache| {
        let version = crate::index::cache::CACHE_VERSION;
        OpenIndex::parse(crate::index::layout::encode(cache, version), version)
    };
    let (cache, warnings) = read_index(store)?;
    let view = if cache.dirty {
        encoded(&cache)
    } else {
        // Let go of the decoded index before reading the file back.
        drop(cache);
        match crate::index::file::open(&store.state, crate::index::layout::Load::InPlace) {
            Some((view, _)) => Some(view),
            // Replaced or removed by another process meanwhile.
            None => encoded(&read_index(store)?.0),
        }
    };
    let view = view.ok_or(StoreError::Internal(
        "the persistent index could not be encoded",
    ))?;
    // Just saved: every note is in the index (a search reads its notes
    // through the postings).
    Ok((Corpus::of(view), warnings))
}

/// The notes of the logs' tail, which the index does not have yet (a note
/// copied into another log, by a cherry-pick, is one note).
fn tail_notes(tail: Vec<crate::model::event::Event>) -> Vec<NoteDoc> {
    let mut seen = std::collections::HashSet::new();
    tail.into_iter()
        .filter(|e| seen.insert(e.id.clone()))
        .map(|e| NoteDoc::of(&e))
        .collect()
}

/// The fast path of [`corpus`], or `None` when it does not apply.
fn corpus_in_place(
    store: &Store,
    notes: bool,
) -> Result<Option<(Corpus, Vec<String>)>, StoreError> {
    let Some((view, index_mtime, listed, since)) = open_and_list(store)? else {
        return Ok(None);
    };
    let logs = crate::index::watched::log_files(store, &view.head.logs, &since)?;
    // Entries appended since the index was saved change nothing a search
    // reads (changed files are read below) unless they fork a memory.
    let Some(tail) = crate::index::snapshot::tail_of(store, &view, &logs)? else {
        return Ok(None);
    };
    let mut warnings = Vec::new();
    let changes = match (&since, listed) {
        (Since::Changes { memory, .. }, _) => {
            let changed = crate::index::watched::memory_stamps(store, memory)?;
            Changes::of_changed(&view, &changed, index_mtime, &mut warnings)
        }
        (_, Some(files)) => Changes::of(&view, &files, index_mtime, &mut warnings),
        (_, None) => {
            let files = crate::store::listing::memory_files(store)?;
            Changes::of(&view, &files, index_mtime, &mut warnings)
        }
    };
    let Some(changes) = changes else {
        return Ok(None);
    };
    let mut corpus = Corpus::of(view);
    if notes {
        corpus.notes = tail_notes(tail.notes);
    }
    corpus.skip = changes.skip;
    for path in changes.fresh {
        let f = fresh(store, &path);
        if let Some(e) = &f.error {
            warnings.push(skipped(&path, e));
        }
        corpus.fresh.push(f);
    }
    Ok(Some((corpus, warnings)))
}

/// The persistent index opened in place, with its file's mtime, and
/// either the watcher's answer since its mark or (no watcher: its
/// socket is not there) every memory file listed while the index is read.
#[allow(clippy::type_complexity)]
fn open_and_list(
    store: &Store,
) -> Result<Option<(OpenIndex, i128, Option<Vec<(String, Stamp)>>, Since)>, StoreError> {
    let open = || crate::index::file::open(&store.state, crate::index::layout::Load::InPlace);
    if crate::watch::client::may_answer(&store.state) {
        let Some((view, mtime)) = open() else {
            return Ok(None);
        };
        let since = Since::ask(store, view.head.watch.as_ref());
        return Ok(Some((view, mtime, None, since)));
    }
    // Stat the memory files (most of the time, in the kernel) while the
    // index is read.
    let (files, view) = std::thread::scope(|s| {
        let files = s.spawn(|| crate::store::listing::memory_files(store));
        (files.join(), open())
    });
    let files = files.map_err(|_| StoreError::Io {
        path: store.path("memory"),
        source: std::io::Error::other("listing the memory files failed"),
    })??;
    Ok(view.map(|(view, mtime)| (view, mtime, Some(files), Since::Absent)))
}

/// How the memory files differ from the index: which entries a search
/// must ignore and which files it must read now.
struct Changes {
    /// Index entries changed or gone, by position.
    skip: Vec<bool>,
    /// Files changed or new.
    fresh: Vec<String>,
}

impl Changes {
    /// Walks the listed files and the index's entries (both sorted by
    /// path) side by side; warns of the unchanged files that do not
    /// parse. `None` when more files changed than are worth reading one
    /// by one.
    fn of(
        view: &OpenIndex,
        files: &[(String, Stamp)],
        index_mtime: i128,
        warnings: &mut Vec<String>,
    ) -> Option<Changes> {
        let mut skip = vec![false; view.len()];
        let mut fresh = Vec::new();
        let mut i = 0;
        for (path, stamp) in files {
            while i < view.len() && view.path(i) < path.as_str() {
                skip[i] = true;
                i += 1;
            }
            if i < view.len() && view.path(i) == path {
                let r = view.rec(i);
                if !stamp.still_as(r.stamp, index_mtime) {
                    skip[i] = true;
                    fresh.push(path.clone());
                } else if !r.valid {
                    let err = view.entry(i).1.unwrap_or_default();
                    warnings.push(skipped(path, &err));
                }
                i += 1;
            } else {
                fresh.push(path.clone());
            }
            if fresh.len() > MAX_FRESH {
                return None;
            }
        }
        skip[i..].iter_mut().for_each(|s| *s = true);
        Some(Changes { skip, fresh })
    }
}

impl Changes {
    /// As [`Changes::of`], from the files the watcher says changed (each
    /// with its stamp now, `None`: gone): every other file is as indexed.
    fn of_changed(
        view: &OpenIndex,
        changed: &[(String, Option<Stamp>)],
        index_mtime: i128,
        warnings: &mut Vec<String>,
    ) -> Option<Changes> {
        let mut skip = vec![false; view.len()];
        let mut fresh = Vec::new();
        for (path, stamp) in changed {
            let at = view.position(path);
            match (at, stamp) {
                (Some(i), None) => skip[i] = true,
                (Some(i), Some(stamp)) => {
                    let r = view.rec(i);
                    if !stamp.still_as(r.stamp, index_mtime) {
                        skip[i] = true;
                        fresh.push(path.clone());
                    }
                }
                (None, Some(_)) => fresh.push(path.clone()),
                (None, None) => {}
            }
            if fresh.len() > MAX_FRESH {
                return None;
            }
        }
        for i in view.invalid().filter(|&i| !skip[i]) {
            let err = view.entry(i).1.unwrap_or_default();
            warnings.push(skipped(view.path(i), &err));
        }
        Some(Changes { skip, fresh })
    }
}

/// More changed files than this: refresh and rewrite the index instead.
const MAX_FRESH: usize = 256;

/// A memory file as it is now, for a search.
fn fresh(store: &Store, path: &str) -> Fresh {
    // Removed since the listing (a `forget` beside this query): not
    // there, rather than a warning.
    let mut hash = 0;
    let parsed = match store.read_memory_file(path) {
        Ok(None) => Err(None),
        Ok(Some(c)) => {
            hash = crate::model::fingerprint::fingerprint(c.as_bytes());
            crate::policy::memory::validate_file(&c, path).map_err(Some)
        }
        Err(e) => Err(Some(e)),
    };
    match parsed {
        Ok(m) => {
            let (terms, len) = crate::index::terms::term_counts(&m);
            Fresh {
                path: path.to_string(),
                summary: Some(crate::model::memory::Summary::of(&m)),
                error: None,
                terms,
                len,
                hash,
            }
        }
        Err(e) => Fresh {
            path: path.to_string(),
            summary: None,
            error: e.map(|e| e.to_string()),
            terms: Default::default(),
            len: 0,
            hash,
        },
    }
}

/// One warning for each memory file of the index that does not parse.
pub(crate) fn skipped_files(cache: &Cache) -> Vec<String> {
    cache
        .files
        .iter()
        .filter_map(|(rel, e)| Some(skipped(rel, e.error.as_deref()?)))
        .collect()
}

/// A warning that a file was skipped: `path:line: message (skipped)`.
pub(crate) fn skipped(path: &str, error: &str) -> String {
    let error = error.strip_prefix(path).unwrap_or(error);
    let sep = if error.starts_with(':') { "" } else { ": " };
    format!("{path}{sep}{error} (skipped)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_file_is_named_once() {
        let p = "memory/project/x.md";
        assert_eq!(
            skipped(p, "memory/project/x.md:2: bad name"),
            "memory/project/x.md:2: bad name (skipped)"
        );
        assert_eq!(
            skipped(p, "not UTF-8"),
            "memory/project/x.md: not UTF-8 (skipped)"
        );
    }
}
