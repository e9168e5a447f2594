//! The persistent index decoded: every memory file's stamp, summary and
//! search terms, every memory's state, the pending proposals, and the log
//! stamps they were replayed from. Its file layout is in
//! `index::layout`.

use crate::log::transition::KeyState;
use crate::model::fingerprint::FnvBuild;
use crate::model::memory::Summary;
use crate::model::stamp::Stamp;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One memory file as last seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The file's stamp when it was read.
    pub stamp: Stamp,
    /// Fingerprint of its content.
    pub hash: u64,
    /// What it says, if it parsed.
    pub summary: Option<Summary>,
    /// Why it did not parse.
    pub error: Option<String>,
    /// Search terms, sorted by id: (id in [`Cache::dict`], weighted term
    /// frequency, mask of the fields it occurs in).
    pub terms: TermList,
    /// Weighted length in terms, for BM25's length normalization.
    pub len: u32,
    /// The secret scanner found nothing in it (`holds_no_secret`): a
    /// query shows it unscanned while its content has `hash`.
    pub clean: bool,
}

/// Does the memory file at `rel` hold no secret? Its path and whole
/// text scanned, and each text of its summary that is not in it word for
/// word (a YAML escape: the scanner decodes those too, but what recall
/// prints is the summary). Computed when the file is indexed, so that a
/// query does not start the scanner for what the index vouches for
/// (`ops::recall`).
pub fn holds_no_secret(rel: &str, content: &str, summary: Option<&Summary>) -> bool {
    let clean = |t: &str| crate::policy::secrets::find_secrets(t).is_empty();
    clean(rel)
        && clean(content)
        && summary.is_none_or(|s| {
            [&s.name, &s.description, &s.kind]
                .into_iter()
                .chain(s.source.as_ref())
                .chain(&s.tags)
                .all(|t| content.contains(t.as_str()) || clean(t))
        })
        // Every string of the frontmatter as its YAML reads: so that the
        // flag also vouches for the write policy's whole secret check
        // (`check` skips it for a file the index vouches for).
        && crate::policy::memory::check_parsed_secrets(content, rel).is_ok()
}

/// A memory's search terms, (term id, weighted frequency, field mask) in
/// ascending id order, packed: each id as its distance from the one before
/// and the frequency as LEB128 varints, then the mask byte. A cold index of
/// 50,000 memories with long bodies holds some 13 million of them: about 4
/// bytes each instead of 8 (a `Vec<(u32, u16, u8)>`), 50 MB of its peak.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermList {
    bytes: Vec<u8>,
    len: u32,
    last: u32,
}

impl TermList {
    /// Appends a term; ids come in ascending order (any order still reads
    /// back as written: distances wrap).
    pub fn push(&mut self, id: u32, tf: u16, mask: u8) {
        put_varint(&mut self.bytes, id.wrapping_sub(self.last));
        put_varint(&mut self.bytes, u32::from(tf));
        self.bytes.push(mask);
        self.last = id;
        self.len += 1;
    }

    /// An empty list with room for about `terms` terms.
    pub fn with_capacity(terms: usize) -> TermList {
        TermList {
            bytes: Vec::with_capacity(terms * 4),
            ..TermList::default()
        }
    }

    /// Gives back the room it does not use.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }

    /// The list of these terms, sorted by id here.
    pub fn of(mut terms: Vec<(u32, u16, u8)>) -> TermList {
        terms.sort_unstable_by_key(|t| t.0);
        let mut list = TermList::default();
        for (id, tf, mask) in terms {
            list.push(id, tf, mask);
        }
        list.bytes.shrink_to_fit();
        list
    }

    /// How many terms.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No terms.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The terms, in the order pushed.
    pub fn iter(&self) -> TermIter<'_> {
        TermIter {
            list: self,
            at: TermCursor::default(),
        }
    }
}

/// Where a reading of a [`TermList`] stands: resumable, so that a pass over
/// a range of term ids can continue where the last pass stopped.
#[derive(Debug, Clone, Copy, Default)]
pub struct TermCursor {
    pos: usize,
    last: u32,
}

impl TermCursor {
    /// The term at this cursor in `list` and the cursor after it.
    pub fn next(self, list: &TermList) -> Option<((u32, u16, u8), TermCursor)> {
        let bytes = &list.bytes;
        let (delta, pos) = get_varint(bytes, self.pos)?;
        let (tf, pos) = get_varint(bytes, pos)?;
        let mask = *bytes.get(pos)?;
        let id = self.last.wrapping_add(delta);
        let tf = u16::try_from(tf).unwrap_or(u16::MAX);
        Some((
            (id, tf, mask),
            TermCursor {
                pos: pos + 1,
                last: id,
            },
        ))
    }
}

/// The terms of a [`TermList`].
pub struct TermIter<'a> {
    list: &'a TermList,
    at: TermCursor,
}

impl Iterator for TermIter<'_> {
    type Item = (u32, u16, u8);
    fn next(&mut self) -> Option<(u32, u16, u8)> {
        let (term, at) = self.at.next(self.list)?;
        self.at = at;
        Some(term)
    }
}

/// Appends `v` as LEB128 (seven bits a byte, low first).
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The LEB128 value at `pos` and the position after it.
fn get_varint(bytes: &[u8], mut pos: usize) -> Option<(u32, usize)> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(pos)?;
        pos += 1;
        v |= u32::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
        if b & 0x80 == 0 {
            return Some((v, pos));
        }
    }
    None
}

/// Interned search terms: each term's id is its position.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Dict {
    /// Terms by id.
    pub terms: Vec<String>,
    /// Term to id, built on first use (not stored).
    #[serde(skip)]
    index: HashMap<String, u32, FnvBuild>,
}

impl Dict {
    /// A dictionary of these terms (ids are positions).
    pub fn from_terms(terms: Vec<String>) -> Dict {
        Dict {
            terms,
            index: HashMap::default(),
        }
    }

    /// The id of `term`, adding it if new.
    pub fn intern(&mut self, term: &str) -> u32 {
        if self.index.len() != self.terms.len() {
            self.index = self
                .terms
                .iter()
                .enumerate()
                .map(|(i, t)| (t.clone(), i as u32))
                .collect();
        }
        if let Some(&id) = self.index.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.terms.push(term.to_string());
        self.index.insert(term.to_string(), id);
        id
    }

    /// The id of `term`, if any memory ever had it.
    pub fn get(&self, term: &str) -> Option<u32> {
        if self.index.len() == self.terms.len() && !self.index.is_empty() {
            return self.index.get(term).copied();
        }
        self.terms.iter().position(|t| t == term).map(|i| i as u32)
    }
}

/// The persistent index, decoded (its file layout is in `index::layout`).
#[derive(Debug, Clone, Default)]
pub struct Cache {
    /// Stamps of the log files the `keys` were replayed from.
    pub logs: BTreeMap<String, Stamp>,
    /// Replayed state of each memory, by key (`scope/slug`).
    pub keys: BTreeMap<String, KeyState>,
    /// Pending proposals, oldest first.
    pub pending: Vec<crate::model::event::Event>,
    /// Every note, oldest first, with its search terms (recall searches
    /// them).
    pub notes: Vec<NoteEntry>,
    /// Memory files by store-relative path.
    pub files: BTreeMap<String, FileEntry>,
    /// The search terms the files' entries refer to.
    pub dict: Dict,
    /// Modification time of the index file when loaded (not stored).
    pub loaded_mtime: i128,
    /// A refresh changed something since the index was loaded (not stored).
    pub dirty: bool,
    /// The ids of `notes`, once [`Cache::add_notes`] needed them (not
    /// stored): a cold build adds the notes of years of logs a day at a
    /// time, and collecting every id for each day made it quadratic.
    pub note_ids: Option<std::collections::HashSet<String>>,
    /// The watcher's token the memory files were stat'ed after (in the
    /// head): every file changed since is in the watcher's answer to it.
    pub watch: Option<WatchMark>,
}

/// A watcher's token, with the scopes the files were listed in: a token
/// taken under other scopes (the config changed) vouches for nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchMark {
    /// The token asked with (`watch::protocol`).
    pub token: crate::watch::protocol::Token,
    /// The fingerprint of the scopes listed (`scopes_print`).
    pub scopes: u64,
}

/// The fingerprint of a store's scopes, as a [`WatchMark`] records it.
pub fn scopes_print(scopes: &[String]) -> u64 {
    crate::model::fingerprint::fingerprint(scopes.join("\n").as_bytes())
}

/// A note as the index keeps it: the event and its search terms.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteEntry {
    /// The `note` event.
    pub event: crate::model::event::Event,
    /// Its terms (ids in [`Cache::dict`], weighted as a body), by id.
    pub terms: TermList,
    /// Its weighted length.
    pub len: u32,
    /// The secret scanner found nothing in its text.
    pub clean: bool,
}

/// Copies of the notes among `events`, for [`Cache::add_notes`].
pub fn notes_of(
    events: &[crate::model::event::Event],
) -> impl Iterator<Item = crate::model::event::Event> + '_ {
    events
        .iter()
        .filter(|e| e.op == crate::model::event::Op::Note)
        .cloned()
}

impl Cache {
    /// Adds the notes among `events` that the cache does not have yet (a
    /// note copied into another log, by a cherry-pick, is one note), with
    /// their terms interned. Taken by value: a fresh clone's first command
    /// adds every note of years of history, and a copy of each would be
    /// held beside the replay's.
    pub fn add_notes(&mut self, events: impl IntoIterator<Item = crate::model::event::Event>) {
        let mut new = events
            .into_iter()
            .filter(|e| e.op == crate::model::event::Op::Note)
            .peekable();
        if new.peek().is_none() {
            return;
        }
        let notes = &self.notes;
        let seen = self
            .note_ids
            .get_or_insert_with(|| notes.iter().map(|n| n.event.id.clone()).collect());
        for e in new {
            // A note over what `note` takes was appended by hand (`check`
            // names it): not searched, which would cost every clone's first
            // query seconds and gigabytes, and print it whole.
            if !seen.insert(e.id.clone()) || e.body.len() > crate::policy::MAX_NOTE_BYTES {
                continue;
            }
            let (terms, len) = crate::index::terms::note_terms(&e.body);
            let ids = terms
                .into_iter()
                .map(|(t, (tf, mask))| (self.dict.intern(&t), tf, mask))
                .collect();
            // What recall prints of it: its text and its writer.
            let clean = [&e.body, &e.actor]
                .iter()
                .all(|t| crate::policy::secrets::find_secrets(t).is_empty());
            self.notes.push(NoteEntry {
                event: e,
                terms: TermList::of(ids),
                len,
                clean,
            });
        }
    }

    /// Summaries of every valid memory file in the index, by key.
    pub fn summaries(&self) -> Vec<(crate::model::key::Key, &crate::model::memory::Summary)> {
        self.files
            .iter()
            .filter_map(|(rel, e)| {
                Some((
                    crate::model::key::Key::from_rel_path(rel)?,
                    e.summary.as_ref()?,
                ))
            })
            .collect()
    }

    /// Each of `keys` with its heads as replayed (none for a key it does
    /// not know).
    pub fn heads(
        &self,
        keys: &[crate::model::key::Key],
    ) -> Vec<(crate::model::key::Key, Vec<String>)> {
        keys.iter()
            .map(|k| {
                let heads = self.keys.get(&k.to_string()).map(|s| s.heads.clone());
                (k.clone(), heads.unwrap_or_default())
            })
            .collect()
    }
}

/// Bumped whenever the index's layout or the search tokenizer changes, so
/// that an index built by another version is rebuilt rather than misread.
pub const CACHE_VERSION: u32 = 12 * 1000 + crate::model::text::TOKENIZER_VERSION;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_list_reads_back_what_was_pushed_at_any_size() {
        let terms = vec![
            (0, 1, 8),
            (127, 2, 1),
            (128, u16::MAX, 15),
            (16_383, 300, 2),
            (16_384, 0, 0),
            (u32::MAX - 1, 7, 4),
            (u32::MAX, 1, 8),
        ];
        let mut shuffled = terms.clone();
        shuffled.reverse();
        let list = TermList::of(shuffled);
        assert_eq!(list.len(), terms.len());
        assert_eq!(list.iter().collect::<Vec<_>>(), terms);
        // A cursor resumes where it stopped.
        let (first, at) = TermCursor::default().next(&list).expect("first");
        assert_eq!(first, terms[0]);
        let rest: Vec<_> = std::iter::successors(at.next(&list), |(_, at)| at.next(&list))
            .map(|(t, _)| t)
            .collect();
        assert_eq!(rest, terms[1..]);
        // Out of order, a list still reads back as pushed.
        let mut raw = TermList::default();
        raw.push(9, 1, 1);
        raw.push(3, 2, 2);
        assert_eq!(raw.iter().collect::<Vec<_>>(), [(9, 1, 1), (3, 2, 2)]);
        assert!(TermList::default().iter().next().is_none());
    }

    /// Notes added batch by batch, as a cold build adds years of logs a
    /// day at a time, are each kept once: a note seen again in a later
    /// batch (or twice in one) is not added again, and the ids it
    /// remembers between batches start again once the notes are cleared.
    #[test]
    fn notes_added_in_batches_are_kept_once() {
        use crate::model::event::{id_from, Event, Op};
        use crate::model::time::Timestamp;
        let note = |i: u8| Event {
            id: id_from(Timestamp(1_800_000_000_000 + i64::from(i)), [i; 10]),
            op: Op::Note,
            time: Timestamp(1_800_000_000_000 + i64::from(i)),
            actor: "Ada <ada@example.com>".into(),
            key: None,
            prev: vec![],
            reason: None,
            consumed: vec![],
            redacted: None,
            body: format!("note number {i}"),
        };
        let mut cache = Cache::default();
        cache.add_notes([note(1), note(2), note(2)]);
        cache.add_notes([note(2), note(3)]);
        cache.add_notes([note(1), note(4)]);
        let ids: Vec<&str> = cache.notes.iter().map(|n| n.event.id.as_str()).collect();
        let want: Vec<String> = (1..=4).map(|i| note(i).id).collect();
        assert_eq!(ids, want);
        cache.notes.clear();
        cache.note_ids = None;
        cache.add_notes([note(2)]);
        assert_eq!(cache.notes.len(), 1);
    }
}
