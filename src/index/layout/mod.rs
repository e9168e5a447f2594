//! The persistent index's file layout: flat sections read in place.
//!
//! A query must not decode tens of thousands of entries (each a handful of
//! allocations) just to check their stamps and score a few terms, and a
//! write must not decode them to look up one memory's heads. So the index
//! is written as fixed-size records and blobs: a reader maps the file and
//! reads records, paths, term lists and key states where they lie,
//! decoding summaries only for what it shows.
//! Commands over the whole store decode all of it into a [`Cache`].
//!
//! ```text
//! "MEMOIRIX" | version u32 | section count u32 | (offset u64, length u64) per section | sections
//!  0 Head           postcard Head: log stamps, pending proposals, keys with an open conflict,
//!                   the secret rules' fingerprint (the records' flags hold under those rules)
//!  1 KeyOffsets     u32 offsets (n + 1) into Keys
//!  2 DictOffsets    u32 offsets (n + 1) into Terms
//!  3 Terms          the term strings, by id
//!  4 Sorted         u32 term ids in string order (for lookup by binary search)
//!  5 Docs           count u32, then one 104-byte record per memory file, sorted by path (see Rec)
//!  6 Paths          the paths
//!  7 Postings       (doc u32, weighted tf u16, field mask u8) per doc, per term (term-major:
//!                   a query reads only its terms' lists)
//!  8 Entries        postcard (Option<Summary>, Option<error>) per doc
//!  9 Descriptions   u32 ids of each doc's description terms, sorted
//! 10 Keys           postcard (key, KeyState) per memory, sorted by key
//! 11 Proposals      the pending proposals, oldest first, as log entries (a log's format)
//! 12 PostingOffsets u32 offsets (n + 1) into Postings, in postings, by term id
//! 13 Notes          every note, oldest first, as log entries (a log's format)
//! 14 NoteRecs       one 47-byte record per note (see NoteRec); a note's postings
//!                   are those of doc number (memory files + its place)
//! 15 MemoryMdCut    u32 count of the docs MEMORY.md ranks, then the u32 doc numbers of
//!                   the most valuable of them (at most CUT), in MEMORY.md's value order
//! ```
//! The number is a section's place in the header's table; the sections
//! themselves lie in the file in another order (`Section::PHYSICAL`).
//! All integers little-endian.

use crate::index::cache::{Cache, Dict, FileEntry, NoteEntry, TermList};
use crate::log::transition::KeyState;
use crate::model::memory::Summary;
use crate::model::stamp::Stamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::{Index, IndexMut};

mod open;
mod write;
pub use open::OpenIndex;
#[cfg(test)]
use write::encode_with;
pub use write::{encode, write};

const MAGIC: &[u8; 8] = b"MEMOIRIX";
/// Where the header's version and section count lie, and its table starts.
const VERSION_AT: usize = 8;
const COUNT_AT: usize = 12;
const TABLE_AT: usize = 16;
/// Bytes per section in the header's table: offset u64, length u64.
const TABLE_ENTRY: usize = 16;
/// Bytes before the first section.
const HEADER: usize = TABLE_AT + Section::COUNT * TABLE_ENTRY;
/// Bytes per doc record, fixed by the format ([`Rec`]'s fields fill it).
const REC: usize = 104;
/// Bytes per posting: doc u32, weighted tf u16, field mask u8.
const TERM: usize = 7;
/// How many of the most valuable memories the index keeps in MEMORY.md's
/// order ([`Section::MemoryMdCut`]): a write's block needs its budget (200
/// lines by default) plus the memories its tail touched (at most
/// `MAX_TAIL_VERSIONS`, 256, and its own).
pub const CUT: usize = 1024;
/// The description bit of a posting's field mask.
pub const DESCRIPTION: u8 = 1 << 1;

/// A section of the index file; its discriminant is its place in the
/// header's table (part of the format: never renumber).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// postcard [`Head`]: log stamps, pending proposals' ids, keys with an
    /// open conflict.
    Head = 0,
    /// u32 offsets (n + 1) into [`Section::Keys`], one per key state.
    KeyOffsets = 1,
    /// u32 offsets (n + 1) into [`Section::Terms`], by term id.
    DictOffsets = 2,
    /// The term strings, by id, back to back.
    Terms = 3,
    /// u32 term ids in string order (for lookup by binary search).
    Sorted = 4,
    /// Count u32, then one [`Rec`] per memory file, sorted by path.
    Docs = 5,
    /// The paths, back to back, in doc order.
    Paths = 6,
    /// Postings per doc, per term (term-major: a query reads only its
    /// terms' lists).
    Postings = 7,
    /// postcard (Option<Summary>, Option<error>) per doc.
    Entries = 8,
    /// u32 ids of each doc's description terms, sorted.
    Descriptions = 9,
    /// postcard (key, KeyState) per memory, sorted by key.
    Keys = 10,
    /// The pending proposals, oldest first, as log entries (a log's format).
    Proposals = 11,
    /// u32 offsets (n + 1) into [`Section::Postings`], in postings, by term id.
    PostingOffsets = 12,
    /// Every note, oldest first, as log entries (a log's format): recall
    /// searches them.
    Notes = 13,
    /// One [`NoteRec`] per note, in the order of [`Section::Notes`].
    NoteRecs = 14,
    /// How many docs MEMORY.md ranks (u32), then the doc numbers (u32) of
    /// the most valuable [`CUT`] of them, in its value order: a write's
    /// MEMORY.md is chosen from these, not from every record.
    MemoryMdCut = 15,
    /// u32 per doc, then per note: its weighted length, `u32::MAX` for a
    /// doc that did not parse. A search counts the live docs (and reads
    /// the length of every match) from these 4 bytes each, not from
    /// their records ([`REC`] bytes each: a pass over every record paged
    /// in 6 MB at 60,000 memories on every query).
    Lens = 16,
    /// (u32 doc, i64 `expires` in days since the epoch) for each doc that
    /// has an `expires` date, by doc: the few a search's count of the
    /// live docs leaves out by its day.
    Expiring = 17,
}

impl Section {
    /// How many sections an index file has.
    const COUNT: usize = 18;
    /// The sections in table order (`TABLE[s as usize] == s`).
    const TABLE: [Section; Section::COUNT] = [
        Section::Head,
        Section::KeyOffsets,
        Section::DictOffsets,
        Section::Terms,
        Section::Sorted,
        Section::Docs,
        Section::Paths,
        Section::Postings,
        Section::Entries,
        Section::Descriptions,
        Section::Keys,
        Section::Proposals,
        Section::PostingOffsets,
        Section::Notes,
        Section::NoteRecs,
        Section::MemoryMdCut,
        Section::Lens,
        Section::Expiring,
    ];
    /// The sections in file order: what most readers touch comes first, so
    /// that they touch few pages.
    const PHYSICAL: [Section; Section::COUNT] = [
        Section::Head,
        Section::MemoryMdCut,
        Section::Lens,
        Section::Expiring,
        Section::DictOffsets,
        Section::Terms,
        Section::Sorted,
        Section::Docs,
        Section::Paths,
        Section::Descriptions,
        Section::PostingOffsets,
        Section::KeyOffsets,
        Section::Postings,
        Section::Entries,
        Section::Keys,
        Section::Proposals,
        Section::Notes,
        Section::NoteRecs,
    ];
}

/// One value per section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PerSection<T>([T; Section::COUNT]);

impl<T> Index<Section> for PerSection<T> {
    type Output = T;
    fn index(&self, s: Section) -> &T {
        &self.0[s as usize]
    }
}

impl<T> IndexMut<Section> for PerSection<T> {
    fn index_mut(&mut self, s: Section) -> &mut T {
        &mut self.0[s as usize]
    }
}

/// Where something lies in what holds it: its start and length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    at: usize,
    len: usize,
}

impl Span {
    /// Does it end within `max` (without overflow)?
    fn within(self, max: usize) -> bool {
        self.at.checked_add(self.len).is_some_and(|end| end <= max)
    }

    /// The span of `len` right after this one.
    fn then(self, len: usize) -> Span {
        Span {
            at: self.at + self.len,
            len,
        }
    }
}

/// How much of the index is checked when it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// Read where it lies (a search, a write, a plan): the header and the
    /// sections' sizes are checked, each record as it is read, so that
    /// opening costs the same at any size.
    InPlace,
    /// Decoding it all ([`OpenIndex::into_cache`]): every record, path and
    /// key offset is checked first.
    Decode,
}

/// What a query needs from the logs' side, small enough to decode each time.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Head {
    /// Stamps of the log files the keys were replayed from.
    pub logs: BTreeMap<String, Stamp>,
    /// Pending proposals.
    pub pending: Vec<String>,
    /// Keys whose versions disagree.
    pub conflicts: Vec<String>,
    /// How many notes the index holds.
    pub notes: u64,
    /// The notes' weighted lengths, summed (BM25's average length counts
    /// them with the memories').
    pub notes_len: u64,
    /// The secret rules the "holds no secret" flags were computed with
    /// (`policy::secrets::rules_fingerprint`): an index written under
    /// other rules is refused, and so rebuilt, rather than trusted.
    pub rules: u64,
    /// The watcher's token the memory files were stat'ed after, if one
    /// answered (`watch`): a query asks it what changed since instead
    /// of stat'ing every file.
    pub watch: Option<crate::index::cache::WatchMark>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The header's section table, checked against the file's length.
fn section_table(bytes: &[u8], total: usize, version: u32) -> Option<PerSection<Span>> {
    if bytes.get(..MAGIC.len())? != MAGIC
        || u32_at(bytes, VERSION_AT)? != version
        || u32_at(bytes, COUNT_AT)? as usize != Section::COUNT
    {
        return None;
    }
    let mut table = PerSection([Span::default(); Section::COUNT]);
    for s in Section::TABLE {
        let entry = TABLE_AT + s as usize * TABLE_ENTRY;
        let span = Span {
            at: usize::try_from(u64_at(bytes, entry)?).ok()?,
            len: usize::try_from(u64_at(bytes, entry + 8)?).ok()?,
        };
        if span.at < HEADER || !span.within(total) {
            return None;
        }
        table[s] = span;
    }
    Some(table)
}

/// The term lists of the postings' docs: the memory files in path order,
/// then the notes (doc `files + i` is note `i`).
fn doc_term_lists(cache: &Cache) -> impl Iterator<Item = &TermList> {
    let files = cache.files.values().map(|e| &e.terms);
    files.chain(cache.notes.iter().map(|n| &n.terms))
}

/// Bytes per note record: the entry's offset and length in
/// [`Section::Notes`] (u32 each), the note's time (i64 ms), its weighted
/// length (u32), its event id (26 ASCII bytes) and its flags (u8: bit 0,
/// the secret scanner found nothing in its text).
const NOTE_REC: usize = 47;

/// A doc's length in [`Section::Lens`] when it did not parse.
const NOT_PARSED: u32 = u32::MAX;
/// Bytes per entry of [`Section::Expiring`]: doc u32, day i64.
const EXPIRING: usize = 12;

/// What a search reads of a note without parsing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteRec {
    /// Where its entry lies in [`Section::Notes`].
    entry: Span,
    /// When it was written, ms since the epoch.
    pub time: i64,
    /// Its weighted length.
    pub len: u32,
    /// Its event id as the record holds it, padded with spaces (a search
    /// reads tens of thousands of records: no allocation each).
    id: [u8; 26],
    /// The secret scanner found nothing in its text (under the rules of
    /// `Head::rules`).
    pub clean: bool,
}

impl NoteRec {
    /// Its event id.
    pub fn id(&self) -> &str {
        // Checked UTF-8 when the record was read.
        std::str::from_utf8(&self.id).unwrap_or("").trim_end()
    }
}

/// A posting as the postings section holds it.
fn put_posting(out: &mut Vec<u8>, doc: u32, tf: u16, mask: u8) {
    out.extend_from_slice(&doc.to_le_bytes());
    out.extend_from_slice(&tf.to_le_bytes());
    out.push(mask);
}

/// The posting [`put_posting`] wrote.
fn posting(t: &[u8; TERM]) -> (u32, u16, u8) {
    (
        u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
        u16::from_le_bytes([t[4], t[5]]),
        t[6],
    )
}

/// The postings in `bytes`, a whole number of them (a partial one is left out).
fn postings_in(bytes: &[u8]) -> impl Iterator<Item = (u32, u16, u8)> + Clone + '_ {
    bytes
        .chunks_exact(TERM)
        .filter_map(|t| Some(posting(t.try_into().ok()?)))
}

/// `N` bytes at offset `at` of a doc record.
#[derive(Debug, Clone, Copy)]
struct Field<const N: usize> {
    at: usize,
}

impl<const N: usize> Field<N> {
    /// The field right after this one.
    const fn then<const M: usize>(self) -> Field<M> {
        Field { at: self.end() }
    }

    const fn end(self) -> usize {
        self.at + N
    }

    // In bounds: `Rec`'s fields end within `REC` (checked at compile time).
    fn put(self, rec: &mut [u8; REC], bytes: [u8; N]) {
        rec[self.at..self.end()].copy_from_slice(&bytes);
    }

    fn get(self, rec: &[u8; REC]) -> [u8; N] {
        let mut bytes = [0u8; N];
        bytes.copy_from_slice(&rec[self.at..self.end()]);
        bytes
    }
}

/// One memory file's record: `REC` bytes in the docs section, laid out
/// by the `Field` consts below.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rec {
    /// Its path, in [`Section::Paths`].
    path: Span,
    /// Its stamp when indexed.
    pub stamp: Stamp,
    /// Fingerprint of its content.
    pub hash: u64,
    /// `expires` in days since the epoch (`i64::MAX`: never).
    pub expires: i64,
    /// Weighted length.
    pub len: u32,
    /// How many distinct terms it has.
    terms: usize,
    /// Its summary and error, in [`Section::Entries`].
    entry: Span,
    /// Its description term ids, in [`Section::Descriptions`] (in ids).
    descs: Span,
    /// It parsed (has a summary).
    pub valid: bool,
    /// Its confidence (1 when absent).
    pub confidence: f64,
    /// Last change, ms since the epoch (0: unknown).
    pub updated: i64,
    /// `review_by` in days since the epoch (`i64::MAX`: none).
    pub review_by: i64,
    /// Its type's rank in MEMORY.md's value order.
    pub rank: u8,
    /// The secret scanner found nothing in the content of `hash` (under
    /// the rules of `Head::rules`): a query shows it unscanned.
    pub clean: bool,
}

// The record's layout: each field follows the one before, so the writer
// ([`Rec::encode`]) and the reader ([`Rec::decode`]) share every offset.
impl Rec {
    const PATH_AT: Field<4> = Field { at: 0 };
    const PATH_LEN: Field<4> = Rec::PATH_AT.then();
    const SIZE: Field<8> = Rec::PATH_LEN.then();
    const MTIME: Field<16> = Rec::SIZE.then();
    const HASH: Field<8> = Rec::MTIME.then();
    const EXPIRES: Field<8> = Rec::HASH.then();
    const LEN: Field<4> = Rec::EXPIRES.then();
    /// Bit 0: the content holds no secret ([`Rec::clean`]); the other
    /// bits are zero (reserved until index version 9).
    const FLAGS: Field<4> = Rec::LEN.then();
    const TERMS: Field<4> = Rec::FLAGS.then();
    const ENTRY_AT: Field<4> = Rec::TERMS.then();
    const ENTRY_LEN: Field<4> = Rec::ENTRY_AT.then();
    /// 1 if it parsed, else 0.
    const VALID: Field<4> = Rec::ENTRY_LEN.then();
    const CONFIDENCE: Field<8> = Rec::VALID.then();
    const UPDATED: Field<8> = Rec::CONFIDENCE.then();
    const REVIEW_BY: Field<8> = Rec::UPDATED.then();
    const DESC_AT: Field<4> = Rec::REVIEW_BY.then();
    const DESC_LEN: Field<2> = Rec::DESC_AT.then();
    const RANK: Field<1> = Rec::DESC_LEN.then();
    /// Padding to `REC`, always zero.
    const PAD: Field<1> = Rec::RANK.then();
}

// Every field lies within the record, which it fills.
const _: () = assert!(Rec::PAD.end() == REC);

impl Rec {
    /// The record of file entry `e`, whose path, entry and description
    /// terms lie at these spans of their sections.
    fn of(e: &FileEntry, path: Span, entry: Span, descs: Span) -> Rec {
        let s = e.summary.as_ref();
        Rec {
            path,
            stamp: e.stamp,
            hash: e.hash,
            expires: s.and_then(|s| s.expires).unwrap_or(i64::MAX),
            len: e.len,
            terms: e.terms.len(),
            entry,
            descs,
            valid: s.is_some(),
            // What ranking and MEMORY.md's cut need, so that readers
            // decode only the summaries they show.
            confidence: s.map_or(1.0, |s| s.confidence),
            updated: s.map_or(0, |s| s.updated),
            review_by: s.and_then(|s| s.review_by).unwrap_or(i64::MAX),
            rank: s.map_or(9, |s| crate::render::memory_md::type_rank(&s.kind)),
            clean: e.clean,
        }
    }

    /// The record's bytes in the docs section.
    fn encode(&self) -> [u8; REC] {
        let mut r = [0u8; REC];
        // Offsets past 4 GiB wrap, as they always did: no index is that big.
        let u32_of = |v: usize| (v as u32).to_le_bytes();
        Rec::PATH_AT.put(&mut r, u32_of(self.path.at));
        Rec::PATH_LEN.put(&mut r, u32_of(self.path.len));
        Rec::SIZE.put(&mut r, self.stamp.size.to_le_bytes());
        Rec::MTIME.put(&mut r, self.stamp.mtime.to_le_bytes());
        Rec::HASH.put(&mut r, self.hash.to_le_bytes());
        Rec::EXPIRES.put(&mut r, self.expires.to_le_bytes());
        Rec::LEN.put(&mut r, self.len.to_le_bytes());
        Rec::FLAGS.put(&mut r, u32::from(self.clean).to_le_bytes());
        Rec::TERMS.put(&mut r, u32_of(self.terms));
        Rec::ENTRY_AT.put(&mut r, u32_of(self.entry.at));
        Rec::ENTRY_LEN.put(&mut r, u32_of(self.entry.len));
        Rec::VALID.put(&mut r, u32::from(self.valid).to_le_bytes());
        Rec::CONFIDENCE.put(&mut r, self.confidence.to_le_bytes());
        Rec::UPDATED.put(&mut r, self.updated.to_le_bytes());
        Rec::REVIEW_BY.put(&mut r, self.review_by.to_le_bytes());
        Rec::DESC_AT.put(&mut r, u32_of(self.descs.at));
        Rec::DESC_LEN.put(&mut r, (self.descs.len as u16).to_le_bytes());
        Rec::RANK.put(&mut r, [self.rank]);
        Rec::PAD.put(&mut r, [0]);
        r
    }

    /// The record [`Rec::encode`] wrote.
    fn decode(r: &[u8; REC]) -> Rec {
        let u32_of = |f: Field<4>| u32::from_le_bytes(f.get(r)) as usize;
        let span = |at, len| Span {
            at: u32_of(at),
            len: u32_of(len),
        };
        Rec {
            path: span(Rec::PATH_AT, Rec::PATH_LEN),
            stamp: Stamp {
                size: u64::from_le_bytes(Rec::SIZE.get(r)),
                mtime: i128::from_le_bytes(Rec::MTIME.get(r)),
            },
            hash: u64::from_le_bytes(Rec::HASH.get(r)),
            expires: i64::from_le_bytes(Rec::EXPIRES.get(r)),
            len: u32::from_le_bytes(Rec::LEN.get(r)),
            terms: u32_of(Rec::TERMS),
            entry: span(Rec::ENTRY_AT, Rec::ENTRY_LEN),
            descs: Span {
                at: u32_of(Rec::DESC_AT),
                len: usize::from(u16::from_le_bytes(Rec::DESC_LEN.get(r))),
            },
            valid: u32_of(Rec::VALID) != 0,
            confidence: f64::from_le_bytes(Rec::CONFIDENCE.get(r)),
            updated: i64::from_le_bytes(Rec::UPDATED.get(r)),
            review_by: i64::from_le_bytes(Rec::REVIEW_BY.get(r)),
            rank: Rec::RANK.get(r)[0],
            clean: u32_of(Rec::FLAGS) & 1 != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory::Memory;

    fn sample() -> Cache {
        let mut cache = Cache::default();
        for (i, text) in ["alpha beta", "beta gamma 测试命令", "delta"]
            .iter()
            .enumerate()
        {
            let m = Memory::parse(&format!(
                "---\nname: m{i}\ndescription: {text}\ntype: project\n---\nbody {text}\n"
            ))
            .expect("memory");
            let (counts, len) = crate::index::terms::term_counts(&m);
            let terms = TermList::of(
                counts
                    .into_iter()
                    .map(|(t, (tf, mask))| (cache.dict.intern(&t), tf, mask))
                    .collect(),
            );
            cache.files.insert(
                format!("memory/project/m{i}.md"),
                FileEntry {
                    stamp: Stamp {
                        size: i as u64,
                        mtime: 7,
                    },
                    hash: 42,
                    summary: Some(Summary::of(&m)),
                    error: None,
                    terms,
                    len,
                    clean: i != 1,
                },
            );
        }
        cache.keys.insert(
            "project/m0".into(),
            KeyState {
                heads: vec!["h".into()],
                view: None,
                view_hash: None,
                conflict: true,
            },
        );
        cache
    }

    /// A cache built by hand (no tokenizer, no clock, no randomness), so its
    /// encoding depends only on this file's layout and the formats it embeds.
    fn fixture() -> Cache {
        let mut cache = Cache::default();
        for t in ["alpha", "beta", "gamma", "delta", "测试", "zeta"] {
            cache.dict.intern(t);
        }
        fixture_files(&mut cache);
        fixture_logs(&mut cache);
        cache
    }

    /// The fixture's memory files: summaries with and without their
    /// optional fields, one that did not parse, description terms.
    fn fixture_files(cache: &mut Cache) {
        let summary = |name: &str, kind: &str| Summary {
            name: name.into(),
            description: format!("about {name}"),
            kind: kind.into(),
            tags: vec!["t1".into(), "t2".into()],
            source: Some("src".into()),
            confidence: 0.75,
            updated: 1_700_000_000_123,
            review_by: Some(20_000),
            expires: Some(20_500),
        };
        let files = [
            (
                "memory/feedback/b.md",
                Some(Summary {
                    review_by: None,
                    expires: None,
                    source: None,
                    tags: vec![],
                    confidence: 1.0,
                    ..summary("b", "feedback")
                }),
                vec![(1, 3, DESCRIPTION | 1), (4, 1, DESCRIPTION), (5, 2, 1)],
            ),
            (
                "memory/project/a.md",
                Some(summary("a", "project")),
                vec![(0, 2, DESCRIPTION), (1, 1, 1), (2, 7, 4)],
            ),
            ("memory/project/broken.md", None, vec![]),
            (
                "memory/user/c.md",
                Some(summary("c", "user")),
                vec![(3, 1, DESCRIPTION), (5, 9, 1 | 4)],
            ),
        ];
        for (i, (path, summary, terms)) in files.into_iter().enumerate() {
            let error = summary.is_none().then(|| "no frontmatter".to_string());
            cache.files.insert(
                path.into(),
                FileEntry {
                    stamp: Stamp {
                        size: 100 + i as u64,
                        mtime: 1_700_000_000_000_000_000 + i as i128,
                    },
                    hash: 0x1234_5678_9abc_def0 ^ i as u64,
                    summary,
                    error,
                    len: terms.iter().map(|t| u32::from(t.1)).sum(),
                    terms: TermList::of(terms),
                    clean: i % 2 == 0,
                },
            );
        }
    }

    /// The fixture's log side: a log stamp, key states (one in conflict),
    /// pending proposals.
    fn fixture_logs(cache: &mut Cache) {
        use crate::model::event::{id_from, Event, Op};
        use crate::model::time::Timestamp;
        cache.logs.insert(
            "logs/2026-01-01.md".into(),
            Stamp {
                size: 4096,
                mtime: 17,
            },
        );
        let state = |heads: &[&str], conflict: bool| KeyState {
            heads: heads.iter().map(|h| h.to_string()).collect(),
            view: heads.first().map(|h| h.to_string()),
            view_hash: Some(99),
            conflict,
        };
        cache
            .keys
            .insert("feedback/b".into(), state(&["v1"], false));
        cache
            .keys
            .insert("project/a".into(), state(&["v2", "v3"], true));
        cache.keys.insert("user/c".into(), state(&[], false));
        let time = Timestamp(1_767_225_600_000);
        for (n, body) in ["---\nname: p\n---\nproposed\n", "second"]
            .iter()
            .enumerate()
        {
            cache.pending.push(Event {
                id: id_from(time, [n as u8; 10]),
                op: Op::Propose,
                time,
                actor: "Ada <ada@example.com>".into(),
                key: Some(crate::model::key::Key::parse("project/p").expect("key").0),
                prev: vec![],
                reason: None,
                consumed: vec![],
                redacted: None,
                body: body.to_string(),
            });
        }
        let note = Event {
            id: id_from(time, [9; 10]),
            op: Op::Note,
            time,
            actor: "Ada <ada@example.com>".into(),
            key: None,
            prev: vec![],
            reason: None,
            consumed: vec![],
            redacted: None,
            body: "the cache misses on Mondays".into(),
        };
        // Its terms interned into the fixture's dictionary: the format
        // test pins those too.
        cache.add_notes([note]);
    }

    #[test]
    fn encodes_and_decodes_losslessly() {
        let cache = sample();
        let view = OpenIndex::parse(encode(&cache, 9), 9).expect("parses");
        assert_eq!(view.len(), 3);
        assert_eq!(view.head.conflicts, ["project/m0"]);
        let beta = view.lookup("beta").expect("beta");
        let docs: Vec<u32> = view.postings(beta).iter().map(|p| p.0).collect();
        assert_eq!(docs, [0, 1]);
        assert!(view.lookup("测试").is_some() && view.lookup("nope").is_none());
        let back = view.into_cache(0).expect("decodes");
        assert_eq!(back.files, cache.files);
        assert_eq!(back.keys, cache.keys);
        assert_eq!(back.dict.terms, cache.dict.terms);
        assert!(
            OpenIndex::parse(encode(&cache, 9), 10).is_none(),
            "another version is refused"
        );
    }

    #[test]
    fn a_write_reads_key_states_and_descriptions_in_place() {
        let cache = sample();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("index.bin");
        std::fs::write(&path, encode(&cache, 9)).expect("write");
        let view = OpenIndex::open(&path, 9, Load::InPlace).expect("opens");
        assert_eq!(
            view.key_state("project/m0"),
            cache.keys.get("project/m0").cloned()
        );
        assert_eq!(view.key_state("project/m1"), None);
        assert_eq!(view.key_state("a"), None);
        assert_eq!(view.prefixed("memory/project/"), 0..3);
        assert_eq!(view.prefixed("memory/user/"), 3..3);
        let beta = view.lookup("beta").expect("beta");
        assert!(view.description_terms(1).any(|id| id == beta));
        assert!(!view.description_terms(2).any(|id| id == beta));
        assert_eq!(view.postings(beta).len(), 2);
        assert_eq!(view.entry(2).0, cache.files["memory/project/m2.md"].summary);
    }

    #[test]
    fn damaged_files_are_refused_without_panic() {
        let bytes = encode(&sample(), 1);
        for cut in 0..bytes.len() {
            assert!(
                OpenIndex::parse(bytes[..cut].to_vec(), 1).is_none(),
                "truncated at {cut}"
            );
        }
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut b = bytes.clone();
            let at = (state % b.len() as u64) as usize;
            b[at] ^= (state >> 32) as u8 | 1;
            // A query and a write check in constant time, and each record
            // as they read it: what they open must be safe to read too.
            for load in LOADS {
                if let Some(v) = OpenIndex::parse_as(b.clone(), 1, load) {
                    read_all(v);
                }
            }
            if let Some(v) = OpenIndex::parse(b, 1) {
                // Whatever survives the checks must be safe to read.
                for i in 0..v.len() {
                    let _ = (v.path(i), v.entry(i), v.postings(i as u32));
                }
                let _ = v.lookup("beta");
                let _ = v.into_cache(0);
            }
        }
    }

    const LOADS: [Load; 2] = [Load::InPlace, Load::Decode];

    /// `(length, fingerprint)` of bytes.
    fn print(bytes: &[u8]) -> (usize, u64) {
        (bytes.len(), crate::model::fingerprint::fingerprint(bytes))
    }

    /// Reads everything a view offers (what survives the checks must be
    /// safe to read).
    fn read_all(v: OpenIndex) {
        for i in 0..v.len() {
            let _ = (v.path(i), v.entry(i), v.rec(i), v.postings(i as u32));
            let _ = v.description_terms(i).count();
        }
        let _ = (v.lookup("beta"), v.key_state("project/a"), v.proposals());
        let _ = v.prefixed("memory/");
        let _ = v.into_cache(0);
    }

    fn assert_same_cache(back: &Cache, cache: &Cache) {
        assert_eq!(back.logs, cache.logs);
        assert_eq!(back.keys, cache.keys);
        assert_eq!(back.pending, cache.pending);
        assert_eq!(back.notes, cache.notes);
        assert_eq!(back.files, cache.files);
        assert_eq!(back.dict.terms, cache.dict.terms);
    }

    /// A secret rules' fingerprint for the pinned format, whatever the
    /// rule table says today.
    const RULES: u64 = 0x0102_0304_0506_0708;

    #[test]
    fn the_format_is_unchanged() {
        // Written by the code of index version 12 (version 11's sections
        // and the lengths, sections 16 and 17): the same cache must still
        // make the same bytes.
        assert_eq!(
            print(&encode_with(&fixture(), 12, RULES)),
            (2402, 0x15c2_c395_134b_2066)
        );
        assert_eq!(
            print(&encode_with(&Cache::default(), 12, RULES)),
            (339, 0x3a67_f0a7_b828_c4e9)
        );
        // Written after other bytes, the index is the same, and the writer
        // is left at its end.
        let mut out = std::io::Cursor::new(b"prefix".to_vec());
        out.set_position(6);
        write(&mut out, &fixture(), 9).expect("write");
        assert_eq!(out.position() as usize, out.get_ref().len());
        assert_eq!(out.get_ref()[6..], encode(&fixture(), 9));
    }

    #[test]
    fn the_lengths_section_says_what_the_records_say() {
        // A search counts live docs and reads lengths from `Lens` and
        // `Expiring`; the records, which everything else reads, must agree.
        let view = OpenIndex::parse(encode(&fixture(), 12), 12).expect("parsed");
        for today in [0, 20_499, 20_500, 20_501, i64::MAX] {
            let from_records: Vec<Option<u32>> = (0..view.len())
                .map(|i| view.rec(i))
                .map(|r| (r.valid && r.expires >= today).then_some(r.len))
                .collect();
            let lens: Vec<Option<u32>> = (0..view.len()).map(|i| view.live_len(i, today)).collect();
            assert_eq!(lens, from_records, "day {today}");
            let live = from_records.iter().flatten();
            let totals = (live.clone().count(), live.map(|&l| u64::from(l)).sum());
            assert_eq!(view.live_totals(today), totals, "day {today}");
            let mut ascending = view.live_len_ascending(today);
            let walked: Vec<Option<u32>> = (0..view.len()).map(&mut ascending).collect();
            assert_eq!(walked, from_records, "day {today}");
        }
        assert!(view.live_totals(20_501).0 < view.live_totals(0).0);
        let invalid: Vec<usize> = (0..view.len()).filter(|&i| !view.rec(i).valid).collect();
        assert_eq!(view.invalid().collect::<Vec<_>>(), invalid);
        assert!(!invalid.is_empty());
        for j in 0..view.note_count() {
            assert_eq!(view.note_len(j), view.note_rec(j).map(|n| n.len));
        }
        // A lengths section one length short is a damaged index, however
        // it is opened.
        let mut bytes = encode(&fixture(), 12);
        let len_at = TABLE_AT + Section::Lens as usize * TABLE_ENTRY + 8;
        let len = u64_at(&bytes, len_at).expect("the table") - 4;
        bytes[len_at..len_at + 8].copy_from_slice(&len.to_le_bytes());
        for load in LOADS {
            assert!(
                OpenIndex::parse_as(bytes.clone(), 12, load).is_none(),
                "{load:?}"
            );
        }
    }

    #[test]
    fn the_watchers_mark_reads_back_from_the_head() {
        let mut cache = fixture();
        let mark = crate::index::cache::WatchMark {
            token: crate::watch::protocol::Token {
                instance: 0xfeed,
                seq: 12,
            },
            scopes: 7,
        };
        cache.watch = Some(mark);
        let view = OpenIndex::parse(encode(&cache, 10), 10).expect("parsed");
        assert_eq!(view.head.watch, Some(mark));
        assert_eq!(view.into_cache(0).expect("decoded").watch, Some(mark));
    }

    #[test]
    fn an_index_written_under_other_secret_rules_is_not_trusted() {
        // Its "holds no secret" flags were computed by another rule table:
        // the index is refused (and so rebuilt), whichever way it is read.
        let cache = fixture();
        let ours = crate::policy::secrets::rules_fingerprint();
        assert!(OpenIndex::parse(encode_with(&cache, 9, ours), 9).is_some());
        assert!(OpenIndex::parse(encode_with(&cache, 9, ours ^ 1), 9).is_none());
        assert!(OpenIndex::parse(encode_with(&cache, 9, RULES), 9).is_none());
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("index");
        std::fs::write(&path, encode_with(&cache, 9, ours ^ 1)).expect("write");
        for load in LOADS {
            assert!(OpenIndex::open(&path, 9, load).is_none(), "{load:?}");
        }
        std::fs::write(&path, encode_with(&cache, 9, ours)).expect("write");
        for load in LOADS {
            assert!(OpenIndex::open(&path, 9, load).is_some(), "{load:?}");
        }
    }

    #[test]
    fn the_secret_flags_round_trip() {
        let cache = fixture();
        let view = OpenIndex::parse(encode(&cache, 9), 9).expect("parses");
        let flags: Vec<bool> = (0..view.len()).map(|i| view.rec(i).clean).collect();
        assert_eq!(flags, [true, false, true, false]);
        assert!(view.note_rec(0).expect("note").clean);
        let mut dirty = cache.clone();
        dirty.notes[0].clean = false;
        let view = OpenIndex::parse(encode(&dirty, 9), 9).expect("parses");
        assert!(!view.note_rec(0).expect("note").clean);
        let back = view.into_cache(0).expect("decodes");
        assert!(!back.notes[0].clean);
        assert_eq!(back.files, dirty.files);
    }

    #[test]
    fn sections_are_numbered_by_their_place_in_the_table() {
        for (i, s) in Section::TABLE.iter().enumerate() {
            assert_eq!(*s as usize, i, "{s:?}");
        }
        let mut physical: Vec<usize> = Section::PHYSICAL.iter().map(|s| *s as usize).collect();
        physical.sort_unstable();
        assert_eq!(physical, (0..Section::COUNT).collect::<Vec<_>>());
    }

    /// Each field of a record: name, offset, size.
    fn record_fields() -> Vec<(&'static str, usize, usize)> {
        fn f<const N: usize>(name: &'static str, field: Field<N>) -> (&'static str, usize, usize) {
            (name, field.at, N)
        }
        vec![
            f("path at", Rec::PATH_AT),
            f("path len", Rec::PATH_LEN),
            f("size", Rec::SIZE),
            f("mtime", Rec::MTIME),
            f("hash", Rec::HASH),
            f("expires", Rec::EXPIRES),
            f("len", Rec::LEN),
            f("flags", Rec::FLAGS),
            f("terms", Rec::TERMS),
            f("entry at", Rec::ENTRY_AT),
            f("entry len", Rec::ENTRY_LEN),
            f("valid", Rec::VALID),
            f("confidence", Rec::CONFIDENCE),
            f("updated", Rec::UPDATED),
            f("review by", Rec::REVIEW_BY),
            f("desc at", Rec::DESC_AT),
            f("desc len", Rec::DESC_LEN),
            f("rank", Rec::RANK),
            f("pad", Rec::PAD),
        ]
    }

    #[test]
    fn a_record_is_its_fields_back_to_back() {
        let fields = record_fields();
        assert_eq!(fields.iter().map(|f| f.2).sum::<usize>(), REC);
        let mut end = 0;
        for (name, at, size) in fields {
            assert_eq!(at, end, "{name} follows the field before it");
            end += size;
        }
        // The format's record size and a few of its offsets.
        assert_eq!(REC, 104);
        assert_eq!((Rec::MTIME.at, Rec::VALID.at, Rec::RANK.at), (16, 68, 102));
    }

    #[test]
    fn a_record_round_trips_through_its_bytes() {
        // Every field distinct and using its high bytes, so that fields
        // that overlapped or were read from the wrong place would show.
        let rec = Rec {
            path: Span {
                at: 0x0102_0304,
                len: 0x0506_0708,
            },
            stamp: Stamp {
                size: 0x1112_1314_1516_1718,
                mtime: -0x2122_2324_2526_2728_292a_2b2c_2d2e_2f30,
            },
            hash: 0x3132_3334_3536_3738,
            expires: -0x4142_4344_4546_4748,
            len: 0x5152_5354,
            terms: 0x6162_6364,
            entry: Span {
                at: 0x7172_7374,
                len: 0x7576_7778,
            },
            descs: Span {
                at: 0x8182_8384,
                len: 0x8586,
            },
            valid: true,
            confidence: 0.123_456_789,
            updated: 0x1a1b_1c1d_1e1f_2a2b,
            review_by: i64::MIN + 3,
            rank: 0x9a,
            clean: true,
        };
        let bytes = rec.encode();
        assert_eq!(Rec::decode(&bytes), rec);
        assert_eq!(bytes[..4], 0x0102_0304u32.to_le_bytes());
        assert_eq!(bytes[52..56], [1, 0, 0, 0], "flags: holds no secret");
        let dirty = Rec {
            clean: false,
            ..rec
        };
        assert_eq!(Rec::decode(&dirty.encode()), dirty);
        assert_eq!(dirty.encode()[52..56], [0; 4], "flags: none");
        assert_eq!(bytes[100..], [0x86, 0x85, 0x9a, 0]);
        let invalid = Rec {
            valid: false,
            ..rec
        };
        assert_eq!(Rec::decode(&invalid.encode()), invalid);
    }

    #[test]
    fn a_cache_round_trips_through_the_file() {
        let cache = fixture();
        let view = OpenIndex::parse(encode(&cache, 9), 9).expect("parses");
        assert_eq!(view.len(), cache.files.len());
        assert_eq!(view.head.logs, cache.logs);
        let ids: Vec<_> = cache.pending.iter().map(|e| e.id.clone()).collect();
        assert_eq!(view.head.pending, ids);
        assert_eq!(view.head.conflicts, ["project/a"]);
        for (i, (path, e)) in cache.files.iter().enumerate() {
            assert_eq!(view.path(i), path);
            let (r, s) = (view.rec(i), e.summary.as_ref());
            assert_eq!((r.stamp, r.hash, r.len), (e.stamp, e.hash, e.len));
            assert_eq!(r.valid, s.is_some());
            assert_eq!(r.expires, s.and_then(|s| s.expires).unwrap_or(i64::MAX));
            assert_eq!(r.review_by, s.and_then(|s| s.review_by).unwrap_or(i64::MAX));
            assert_eq!(r.confidence, s.map_or(1.0, |s| s.confidence));
            assert_eq!(r.updated, s.map_or(0, |s| s.updated));
            let rank = s.map_or(9, |s| crate::render::memory_md::type_rank(&s.kind));
            assert_eq!(r.rank, rank);
            assert_eq!(view.entry(i), (e.summary.clone(), e.error.clone()));
            let descs: Vec<u32> = (e.terms.iter())
                .filter(|t| t.2 & DESCRIPTION != 0)
                .map(|t| t.0)
                .collect();
            assert_eq!(
                view.description_terms(i).collect::<Vec<_>>(),
                descs,
                "{path}"
            );
        }
        for (id, term) in cache.dict.terms.iter().enumerate() {
            let id = id as u32;
            assert_eq!(view.lookup(term), Some(id));
            // The memory files' docs, then the notes'.
            let want: Vec<_> = doc_term_lists(&cache)
                .enumerate()
                .filter_map(|(doc, terms)| {
                    let t = terms.iter().find(|t| t.0 == id)?;
                    Some((doc as u32, t.1, t.2))
                })
                .collect();
            assert_eq!(view.postings(id), want, "{term}");
        }
        assert_eq!(view.lookup("omega"), None);
        for (key, state) in &cache.keys {
            assert_eq!(view.key_state(key).as_ref(), Some(state));
        }
        assert_eq!(view.proposals().as_ref(), Some(&cache.pending));
        let back = view.into_cache(5).expect("decodes");
        assert_same_cache(&back, &cache);
        assert!(back.loaded_mtime == 5 && !back.dirty);
    }

    #[test]
    fn description_terms_are_the_postings_with_the_description_bit() {
        // A write finds near-duplicates through the postings; consolidation
        // through the descriptions section: both must name the same terms.
        let view = OpenIndex::parse(encode(&fixture(), 9), 9).expect("parses");
        let mut by_postings = vec![Vec::new(); view.len()];
        for id in 0..view.term_count() as u32 {
            for (doc, _, mask) in view.postings(id) {
                if mask & DESCRIPTION != 0 && (doc as usize) < view.len() {
                    by_postings[doc as usize].push(id);
                }
            }
        }
        assert!(by_postings.iter().any(|ids| !ids.is_empty()));
        for (i, ids) in by_postings.iter().enumerate() {
            assert_eq!(
                &view.description_terms(i).collect::<Vec<_>>(),
                ids,
                "doc {i}"
            );
            assert_eq!(view.description_len(i), ids.len());
        }
    }

    #[test]
    fn each_load_reads_the_same_file() {
        let cache = fixture();
        let whole = OpenIndex::parse(encode(&cache, 9), 9).expect("parses");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("index.bin");
        std::fs::write(&path, encode(&cache, 9)).expect("write");
        for load in LOADS {
            let view = OpenIndex::open(&path, 9, load).expect("opens");
            assert_eq!(view.len(), whole.len());
            for i in 0..view.len() {
                assert_eq!(view.rec(i), whole.rec(i), "{load:?}");
                assert_eq!(view.path(i), whole.path(i));
                assert_eq!(view.entry(i), whole.entry(i));
            }
            for key in cache.keys.keys() {
                assert_eq!(view.key_state(key), whole.key_state(key), "{load:?}");
            }
            assert_eq!(view.proposals(), whole.proposals(), "{load:?}");
            assert_same_cache(&view.into_cache(0).expect("decodes"), &cache);
        }
    }

    #[test]
    fn a_file_cut_at_a_section_boundary_is_refused() {
        let bytes = encode(&fixture(), 9);
        let sec = OpenIndex::parse(bytes.clone(), 9).expect("parses").sec;
        let mut cuts = vec![0, MAGIC.len(), TABLE_AT, HEADER - 1, HEADER];
        for s in Section::TABLE {
            cuts.extend([sec[s].at, sec[s].at + sec[s].len]);
        }
        cuts.retain(|&cut| cut < bytes.len());
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("index.bin");
        for cut in cuts {
            assert!(
                OpenIndex::parse(bytes[..cut].to_vec(), 9).is_none(),
                "cut at {cut}"
            );
            std::fs::write(&path, &bytes[..cut]).expect("write");
            for load in LOADS {
                assert!(
                    OpenIndex::open(&path, 9, load).is_none(),
                    "cut at {cut}, {load:?}"
                );
            }
        }
    }

    #[test]
    fn a_damaged_section_table_is_refused_without_panic() {
        let bytes = encode(&fixture(), 9);
        let total = bytes.len() as u64;
        let with = |s: Section, at: u64, len: u64| {
            let mut b = bytes.clone();
            let entry = TABLE_AT + s as usize * TABLE_ENTRY;
            b[entry..entry + 8].copy_from_slice(&at.to_le_bytes());
            b[entry + 8..entry + 16].copy_from_slice(&len.to_le_bytes());
            b
        };
        let sec = OpenIndex::parse(bytes.clone(), 9).expect("parses").sec;
        for s in Section::TABLE {
            let (at, len) = (sec[s].at as u64, sec[s].len as u64);
            // Out of the file, in the header, or overflowing.
            for (a, l) in [
                (total, 1),
                (at, total),
                (0, len),
                (HEADER as u64 - 1, len),
                (u64::MAX, 1),
                (at, u64::MAX),
            ] {
                assert!(
                    OpenIndex::parse(with(s, a, l), 9).is_none(),
                    "{s:?} at {a}, {l}"
                );
            }
            // Shifted, resized or pointing at another section: whatever
            // passes the checks reads safely.
            let others = Section::TABLE.map(|t| (sec[t].at as u64, sec[t].len as u64));
            for (a, l) in [(at + 1, len), (at, len + 1), (at, len.saturating_sub(1))]
                .into_iter()
                .chain(others)
            {
                if let Some(v) = OpenIndex::parse(with(s, a, l), 9) {
                    read_all(v);
                }
            }
        }
        // One byte short: every section the checks cover is refused (the
        // postings, proposals, notes and MEMORY.md's cut are checked when
        // read).
        let checked = Section::TABLE.into_iter().filter(|s| {
            ![
                Section::Postings,
                Section::PostingOffsets,
                Section::Proposals,
                Section::Notes,
                Section::MemoryMdCut,
            ]
            .contains(s)
        });
        for s in checked {
            let (at, len) = (sec[s].at as u64, sec[s].len as u64);
            assert!(OpenIndex::parse(with(s, at, len - 1), 9).is_none(), "{s:?}");
        }
        // The magic, the version and the section count.
        for (at, byte) in [(0, b'X'), (VERSION_AT, 8), (COUNT_AT, 15), (COUNT_AT, 17)] {
            let mut b = bytes.clone();
            b[at] = byte;
            assert!(OpenIndex::parse(b, 9).is_none(), "byte {at}");
        }
    }
}
