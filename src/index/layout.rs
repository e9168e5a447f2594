//! The persistent index's file layout: flat sections read in place.
//!
//! A query must not decode tens of thousands of entries (each a handful of
//! allocations) just to check their stamps and score a few terms, and a
//! write must not decode them to look up one memory's heads. So the index
//! is written as fixed-size records and blobs: a reader loads only the
//! sections it needs ([`Load`]) and reads records, paths, term lists and key
//! states where they lie, decoding summaries only for what it shows.
//! Commands over the whole store decode all of it into a [`Cache`].
//!
//! ```text
//! "MEMOIRIX" | version u32 | section count u32 | (offset u64, length u64) per section | sections
//!  0 head     postcard Head: log stamps, pending proposals, keys with an open conflict
//!  1 keyoffs  u32 offsets (n + 1) into 10
//!  2 dict     u32 offsets (n + 1) into 3
//!  3 terms    the term strings, by id
//!  4 sorted   u32 term ids in string order (for lookup by binary search)
//!  5 docs     count u32, then one 104-byte record per memory file, sorted by path (see Rec)
//!  6 paths    the paths
//!  7 postings (doc u32, weighted tf u16, field mask u8) per doc, per term (term-major:
//!             a query reads only its terms' lists)
//!  8 entries  postcard (Option<Summary>, Option<error>) per doc
//!  9 descs    u32 ids of each doc's description terms, sorted
//! 10 keys     postcard (key, KeyState) per memory, sorted by key
//! 11 proposals the pending proposals, oldest first, as log entries (a log's format)
//! 12 postoffs u32 offsets (n + 1) into 7, in postings, by term id
//! ```
//! All integers little-endian.

use crate::index::cache::{Cache, Dict, FileEntry, TermList};
use crate::log::transition::KeyState;
use crate::model::memory::Summary;
use crate::model::stamp::Stamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const MAGIC: &[u8; 8] = b"MEMOIRIX";
const SECTIONS: usize = 13;
const REC: usize = 104;
const TERM: usize = 7;
/// Sections in file order: what most readers load comes first.
const PHYSICAL: [usize; SECTIONS] = [0, 2, 3, 4, 5, 6, 9, 12, 1, 7, 8, 10, 11];
/// Bytes before the first section.
const HEADER: usize = 16 + SECTIONS * 16;
/// The description bit of a posting's field mask.
pub const DESCRIPTION: u8 = 1 << 1;

/// Which sections a reader loads; the others are read from the file on use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    /// A search: records, paths, dictionary, posting offsets and key
    /// offsets (its terms' postings are read on use).
    Query,
    /// A write: records, paths, dictionary, descriptions and key offsets.
    Write,
    /// A consolidation: a write's sections, the key states and the pending
    /// proposals (it looks up many keys: a read per probe would be tens of
    /// thousands of reads).
    Plan,
    /// Decoding it all ([`View::into_cache`]): everything but the postings
    /// and the proposals, which are read a part at a time.
    Decode,
}

impl Load {
    fn sections(self) -> &'static [usize] {
        match self {
            Load::Query => &[0, 1, 2, 3, 4, 5, 6, 12],
            Load::Write => &[0, 1, 2, 3, 4, 5, 6, 9],
            Load::Plan => &[0, 1, 2, 3, 4, 5, 6, 9, 10, 11],
            Load::Decode => &[0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 12],
        }
    }
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
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn i64_at(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Encodes a cache as an index file.
pub fn encode(cache: &Cache, version: u32) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    write(&mut out, cache, version)
        .map(|_| out.into_inner())
        .unwrap_or_default()
}

/// Counts what goes through it.
struct Counting<'a, W> {
    inner: &'a mut W,
    n: u64,
}

impl<W: std::io::Write> std::io::Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes a cache as an index file, a section at a time straight to `w`
/// (never the whole encoded index in memory: it is tens of megabytes at
/// 50,000 memories, on top of the cache), then the header.
pub fn write(
    w: &mut (impl std::io::Write + std::io::Seek),
    cache: &Cache,
    version: u32,
) -> std::io::Result<()> {
    let start = w.stream_position()?;
    w.write_all(&[0u8; HEADER])?;
    let mut table = [(0u64, 0u64); SECTIONS];
    let mut at = HEADER as u64;
    for &i in &PHYSICAL {
        let mut counting = Counting { inner: w, n: 0 };
        write_section(&mut counting, cache, i)?;
        table[i] = (at, counting.n);
        at += counting.n;
    }
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    put_u32(&mut header, version);
    put_u32(&mut header, SECTIONS as u32);
    for (offset, len) in table {
        put_u64(&mut header, offset);
        put_u64(&mut header, len);
    }
    w.seek(std::io::SeekFrom::Start(start))?;
    w.write_all(&header)?;
    w.seek(std::io::SeekFrom::Start(start + at))?;
    Ok(())
}

/// A file's entry section record: its summary and parse error.
fn entry_bytes(e: &FileEntry) -> Vec<u8> {
    postcard::to_stdvec(&(&e.summary, &e.error)).unwrap_or_default()
}

/// How many description terms a doc's record lists (at most `u16::MAX`).
fn description_count(e: &FileEntry) -> u16 {
    let n = e.terms.iter().filter(|t| t.2 & DESCRIPTION != 0).count();
    n.min(usize::from(u16::MAX)) as u16
}

/// How many docs have each term, by term id.
fn posting_counts(cache: &Cache) -> Vec<usize> {
    let mut counts = vec![0usize; cache.dict.terms.len()];
    for e in cache.files.values() {
        for (id, _, _) in e.terms.iter() {
            if let Some(c) = counts.get_mut(id as usize) {
                *c += 1;
            }
        }
    }
    counts
}

/// Writes section `i` of the index file for `cache`.
fn write_section(w: &mut impl std::io::Write, cache: &Cache, i: usize) -> std::io::Result<()> {
    let mut buf = Vec::new();
    // Small pieces are gathered in `buf` and written when it fills.
    let mut flush = |buf: &mut Vec<u8>, force: bool| -> std::io::Result<()> {
        if force || buf.len() >= 1 << 16 {
            w.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    };
    match i {
        0 => {
            let head = Head {
                logs: cache.logs.clone(),
                pending: cache.pending.iter().map(|e| e.id.clone()).collect(),
                conflicts: cache
                    .keys
                    .iter()
                    .filter(|(_, k)| k.conflict)
                    .map(|(k, _)| k.clone())
                    .collect(),
            };
            buf = postcard::to_stdvec(&head).unwrap_or_default();
        }
        1 | 10 => {
            let mut offset = 0u32;
            if i == 1 {
                put_u32(&mut buf, 0);
            }
            for entry in &cache.keys {
                let bytes = postcard::to_stdvec(&entry).unwrap_or_default();
                offset += bytes.len() as u32;
                match i {
                    1 => put_u32(&mut buf, offset),
                    _ => buf.extend_from_slice(&bytes),
                }
                flush(&mut buf, false)?;
            }
        }
        2 => {
            let mut offset = 0u32;
            put_u32(&mut buf, 0);
            for t in &cache.dict.terms {
                offset += t.len() as u32;
                put_u32(&mut buf, offset);
                flush(&mut buf, false)?;
            }
        }
        3 => {
            for t in &cache.dict.terms {
                buf.extend_from_slice(t.as_bytes());
                flush(&mut buf, false)?;
            }
        }
        4 => {
            let terms = &cache.dict.terms;
            let mut sorted: Vec<u32> = (0..terms.len() as u32).collect();
            sorted.sort_by(|a, b| terms[*a as usize].cmp(&terms[*b as usize]));
            for id in sorted {
                put_u32(&mut buf, id);
                flush(&mut buf, false)?;
            }
        }
        5 => {
            put_u32(&mut buf, cache.files.len() as u32);
            let (mut path_at, mut entry_at, mut desc_at) = (0, 0, 0);
            for (path, e) in &cache.files {
                let entry_len = entry_bytes(e).len();
                let descs = description_count(e);
                put_u32(&mut buf, path_at as u32);
                put_u32(&mut buf, path.len() as u32);
                put_u64(&mut buf, e.stamp.size);
                buf.extend_from_slice(&e.stamp.mtime.to_le_bytes());
                put_u64(&mut buf, e.hash);
                let s = e.summary.as_ref();
                buf.extend_from_slice(&s.and_then(|s| s.expires).unwrap_or(i64::MAX).to_le_bytes());
                put_u32(&mut buf, e.len);
                put_u32(&mut buf, 0);
                put_u32(&mut buf, e.terms.len() as u32);
                put_u32(&mut buf, entry_at as u32);
                put_u32(&mut buf, entry_len as u32);
                put_u32(&mut buf, u32::from(s.is_some()));
                // What ranking and MEMORY.md's cut need, so that readers
                // decode only the summaries they show.
                buf.extend_from_slice(&s.map_or(1.0, |s| s.confidence).to_le_bytes());
                buf.extend_from_slice(&s.map_or(0, |s| s.updated).to_le_bytes());
                buf.extend_from_slice(
                    &s.and_then(|s| s.review_by)
                        .unwrap_or(i64::MAX)
                        .to_le_bytes(),
                );
                put_u32(&mut buf, desc_at as u32);
                buf.extend_from_slice(&descs.to_le_bytes());
                buf.push(s.map_or(9, |s| crate::render::memory_md::type_rank(&s.kind)));
                buf.push(0);
                path_at += path.len();
                entry_at += entry_len;
                desc_at += usize::from(descs);
                flush(&mut buf, false)?;
            }
        }
        6 => {
            for path in cache.files.keys() {
                buf.extend_from_slice(path.as_bytes());
                flush(&mut buf, false)?;
            }
        }
        7 => {
            // Term-major from the docs' term lists, a range of terms per pass
            // over them, so that saving never holds a second copy of every
            // posting (tens of megabytes at 50,000 memories).
            let counts = posting_counts(cache);
            let mut cursors = vec![crate::index::cache::TermCursor::default(); cache.files.len()];
            let mut lo = 0;
            while lo < counts.len() {
                let (mut hi, mut n) = (lo, 0usize);
                while hi < counts.len() && (hi == lo || n + counts[hi] <= 1 << 20) {
                    n += counts[hi];
                    hi += 1;
                }
                let mut lists: Vec<Vec<u8>> = counts[lo..hi]
                    .iter()
                    .map(|c| Vec::with_capacity(c * TERM))
                    .collect();
                // Each doc's list is sorted by id: a pass resumes where
                // the last one stopped.
                for ((doc, e), at) in cache.files.values().enumerate().zip(&mut cursors) {
                    while let Some(((id, tf, mask), next)) = at.next(&e.terms) {
                        let id = id as usize;
                        let Some(list) = id.checked_sub(lo).filter(|_| id < hi) else {
                            break;
                        };
                        let list = &mut lists[list];
                        list.extend_from_slice(&(doc as u32).to_le_bytes());
                        list.extend_from_slice(&tf.to_le_bytes());
                        list.push(mask);
                        *at = next;
                    }
                }
                for list in lists {
                    buf.extend_from_slice(&list);
                    flush(&mut buf, false)?;
                }
                lo = hi;
            }
        }
        12 => {
            let mut offset = 0u32;
            put_u32(&mut buf, 0);
            for c in posting_counts(cache) {
                offset += c as u32;
                put_u32(&mut buf, offset);
                flush(&mut buf, false)?;
            }
        }
        8 => {
            for e in cache.files.values() {
                buf.extend_from_slice(&entry_bytes(e));
                flush(&mut buf, false)?;
            }
        }
        9 => {
            for e in cache.files.values() {
                let ids = e.terms.iter().filter(|t| t.2 & DESCRIPTION != 0);
                for (id, _, _) in ids.take(usize::from(description_count(e))) {
                    put_u32(&mut buf, id);
                }
                flush(&mut buf, false)?;
            }
        }
        11 => {
            for e in &cache.pending {
                buf.extend_from_slice(e.render().as_bytes());
                flush(&mut buf, false)?;
            }
        }
        _ => {}
    }
    flush(&mut buf, true)
}

/// One memory file's record.
#[derive(Debug, Clone, Copy)]
pub struct Rec {
    path: (usize, usize),
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
    entry: (usize, usize),
    descs: (usize, usize),
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
}

impl Rec {
    fn parse(docs: &[u8], r: usize) -> Option<Rec> {
        let field = |o: usize| u32_at(docs, r + o).map(|v| v as usize);
        Some(Rec {
            path: (field(0)?, field(4)?),
            stamp: Stamp {
                size: u64_at(docs, r + 8)?,
                mtime: i128::from_le_bytes(docs.get(r + 16..r + 32)?.try_into().ok()?),
            },
            hash: u64_at(docs, r + 32)?,
            expires: i64_at(docs, r + 40)?,
            len: u32_at(docs, r + 48)?,
            terms: field(56)?,
            entry: (field(60)?, field(64)?),
            valid: u32_at(docs, r + 68)? != 0,
            confidence: f64::from_le_bytes(docs.get(r + 72..r + 80)?.try_into().ok()?),
            updated: i64_at(docs, r + 80)?,
            review_by: i64_at(docs, r + 88)?,
            descs: (
                field(96)?,
                usize::from(u16::from_le_bytes(
                    docs.get(r + 100..r + 102)?.try_into().ok()?,
                )),
            ),
            rank: *docs.get(r + 102)?,
        })
    }
}

/// An index file, read in place.
#[derive(Debug)]
pub struct View {
    /// The file's bytes where a section was loaded; zero pages elsewhere
    /// (allocated, never touched, so they cost no memory).
    bytes: Vec<u8>,
    /// Which sections `bytes` holds.
    loaded: [bool; SECTIONS],
    /// The file, for sections not loaded.
    file: Option<std::fs::File>,
    sec: [(usize, usize); SECTIONS],
    /// The head section, decoded.
    pub head: Head,
    recs: Vec<Rec>,
}

impl View {
    /// Opens an index file, loading the sections `load` names. `None` if it
    /// is not one this version wrote, or damaged.
    pub fn open(path: &std::path::Path, version: u32, load: Load) -> Option<View> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(path).ok()?;
        let total = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if total < HEADER {
            return None;
        }
        let mut bytes = vec![0u8; total];
        file.read_exact_at(&mut bytes[..HEADER], 0).ok()?;
        let sec = section_table(&bytes, total, version)?;
        let mut loaded = [false; SECTIONS];
        // One read per run of adjacent wanted sections.
        let mut run: Option<(usize, usize)> = None;
        for &i in &PHYSICAL {
            let (o, l) = sec[i];
            if !load.sections().contains(&i) {
                continue;
            }
            loaded[i] = true;
            run = match run {
                Some((a, b)) if b == o => Some((a, o + l)),
                Some((a, b)) => {
                    file.read_exact_at(&mut bytes[a..b], a as u64).ok()?;
                    Some((o, o + l))
                }
                None => Some((o, o + l)),
            };
        }
        if let Some((a, b)) = run {
            file.read_exact_at(&mut bytes[a..b], a as u64).ok()?;
        }
        View::check(bytes, loaded, sec, Some(file))
    }

    /// Checks a whole index file and opens it; `None` if it is not one this
    /// version wrote, or is damaged anywhere.
    pub fn parse(bytes: Vec<u8>, version: u32) -> Option<View> {
        let sec = section_table(&bytes, bytes.len(), version)?;
        View::check(bytes, [true; SECTIONS], sec, None)
    }

    fn check(
        bytes: Vec<u8>,
        loaded: [bool; SECTIONS],
        sec: [(usize, usize); SECTIONS],
        file: Option<std::fs::File>,
    ) -> Option<View> {
        let slice = |i: usize| &bytes[sec[i].0..sec[i].0 + sec[i].1];
        let head: Head = postcard::from_bytes(slice(0)).ok()?;
        let docs = slice(5);
        let n = u32_at(docs, 0)? as usize;
        if docs.len() != 4 + n.checked_mul(REC)? {
            return None;
        }
        let fits = |(o, l): (usize, usize), max: usize| o.checked_add(l).is_some_and(|e| e <= max);
        let mut recs = Vec::with_capacity(n);
        for i in 0..n {
            let rec = Rec::parse(docs, 4 + i * REC)?;
            if !fits(rec.path, sec[6].1)
                || !fits(rec.entry, sec[8].1)
                || !fits(rec.descs, sec[9].1 / 4)
            {
                return None;
            }
            recs.push(rec);
        }
        let view = View {
            bytes,
            loaded,
            file,
            sec,
            head,
            recs,
        };
        // Paths must be UTF-8 and sorted: lookups merge with a sorted listing.
        let mut prev: Option<&str> = None;
        for i in 0..view.recs.len() {
            let p = std::str::from_utf8(view.path_bytes(i)).ok()?;
            if prev.is_some_and(|q| q >= p) {
                return None;
            }
            prev = Some(p);
        }
        let dict_n = sec[2].1 / 4;
        if dict_n == 0
            || sec[4].1 != (dict_n - 1) * 4
            || u32_at(view.section(2), (dict_n - 1) * 4)? as usize != sec[3].1
        {
            return None;
        }
        if loaded[1] {
            // Key offsets rise and stay within the keys section.
            let offs = view.section(1);
            let mut last = 0;
            for at in (0..offs.len()).step_by(4) {
                let o = u32_at(offs, at)? as usize;
                if o < last || o > sec[10].1 {
                    return None;
                }
                last = o;
            }
            if offs.is_empty() {
                return None;
            }
        }
        Some(view)
    }

    /// A loaded section (empty if it was not loaded).
    fn section(&self, i: usize) -> &[u8] {
        if !self.loaded[i] {
            return &[];
        }
        let (o, l) = self.sec[i];
        self.bytes.get(o..o + l).unwrap_or(&[])
    }

    /// Bytes `at..at + len` of section `i`, from memory or from the file.
    fn read(&self, i: usize, at: usize, len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        if at.checked_add(len)? > self.sec[i].1 {
            return None;
        }
        let start = self.sec[i].0 + at;
        if self.loaded[i] {
            return Some(self.bytes.get(start..start + len)?.into());
        }
        let mut buf = vec![0u8; len];
        std::os::unix::fs::FileExt::read_exact_at(self.file.as_ref()?, &mut buf, start as u64)
            .ok()?;
        Some(buf.into())
    }

    fn path_bytes(&self, i: usize) -> &[u8] {
        let (o, l) = self.recs[i].path;
        self.section(6).get(o..o + l).unwrap_or(&[])
    }

    /// Memory files indexed.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Is the index empty?
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// The record of doc `i`.
    pub fn rec(&self, i: usize) -> &Rec {
        &self.recs[i]
    }

    /// The path of doc `i`.
    pub fn path(&self, i: usize) -> &str {
        std::str::from_utf8(self.path_bytes(i)).unwrap_or("")
    }

    /// The docs whose paths start with `prefix`, as a range of positions.
    pub fn prefixed(&self, prefix: &str) -> std::ops::Range<usize> {
        // The first position in lo..hi where `past` turns true (it is monotone).
        let first = |mut lo: usize, mut hi: usize, past: &dyn Fn(&str) -> bool| {
            while lo < hi {
                let mid = (lo + hi) / 2;
                if past(self.path(mid)) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            lo
        };
        let lo = first(0, self.len(), &|p| p >= prefix);
        let hi = first(lo, self.len(), &|p| !p.starts_with(prefix));
        lo..hi
    }

    /// The docs that have term `id`, each with its (weighted tf, field
    /// mask), in doc order; empty if damaged.
    pub fn postings(&self, id: u32) -> Vec<(u32, u16, u8)> {
        let offs = self.section(12);
        let at = |i: usize| u32_at(offs, i * 4).map(|v| v as usize);
        let (Some(from), Some(to)) = (at(id as usize), at(id as usize + 1)) else {
            return Vec::new();
        };
        let Some(bytes) = to
            .checked_sub(from)
            .and_then(|n| self.read(7, from * TERM, n * TERM))
        else {
            return Vec::new();
        };
        bytes
            .chunks_exact(TERM)
            .map(|t| {
                (
                    u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
                    u16::from_le_bytes([t[4], t[5]]),
                    t[6],
                )
            })
            .filter(|p| (p.0 as usize) < self.recs.len())
            .collect()
    }

    /// The ids of doc `i`'s description terms, sorted (needs [`Load::Write`]).
    pub fn description_terms(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let (off, n) = self.recs[i].descs;
        self.section(9)
            .get(off * 4..(off + n) * 4)
            .unwrap_or(&[])
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Doc `i`'s summary (decoded now) and parse error.
    pub fn entry(&self, i: usize) -> (Option<Summary>, Option<String>) {
        let (o, l) = self.recs[i].entry;
        self.read(8, o, l)
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or((None, Some("unreadable index entry".into())))
    }

    fn dict_term(&self, id: u32) -> &[u8] {
        let offs = self.section(2);
        let at = id as usize * 4;
        match (u32_at(offs, at), u32_at(offs, at + 4)) {
            (Some(a), Some(b)) if a <= b && b as usize <= self.sec[3].1 => {
                &self.section(3)[a as usize..b as usize]
            }
            _ => &[],
        }
    }

    /// The id of a term, by binary search over the sorted dictionary.
    pub fn lookup(&self, term: &str) -> Option<u32> {
        let sorted = self.section(4);
        let n = sorted.len() / 4;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let id = u32_at(sorted, mid * 4)?;
            match self.dict_term(id).cmp(term.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(id),
            }
        }
        None
    }

    /// Memories with a replayed state.
    fn key_count(&self) -> usize {
        (self.sec[1].1 / 4).saturating_sub(1)
    }

    /// Key state `i` (in key order), decoded now.
    fn key_entry(&self, i: usize) -> Option<(String, KeyState)> {
        let offs = self.read(1, i * 4, 8)?;
        let (a, b) = (u32_at(&offs, 0)? as usize, u32_at(&offs, 4)? as usize);
        postcard::from_bytes(&self.read(10, a, b.checked_sub(a)?)?).ok()
    }

    /// A memory's replayed state as of the index, by binary search.
    pub fn key_state(&self, key: &str) -> Option<KeyState> {
        let (mut lo, mut hi) = (0, self.key_count());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (k, state) = self.key_entry(mid)?;
            match k.as_str().cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(state),
            }
        }
        None
    }

    /// The pending proposals, whole (read from the file: only consolidation
    /// and whole-index readers need them); `None` if damaged.
    pub fn proposals(&self) -> Option<Vec<crate::model::event::Event>> {
        let bytes = self.read(11, 0, self.sec[11].1)?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let parsed = crate::model::event::parse_log(text).ok()?;
        let ids = parsed.events.iter().map(|e| &e.id);
        (parsed.torn.is_empty() && ids.eq(self.head.pending.iter())).then_some(parsed.events)
    }

    /// Decodes everything into a [`Cache`] that commands can change.
    pub fn into_cache(self, loaded_mtime: i128) -> Option<Cache> {
        let keys: BTreeMap<String, KeyState> = (0..self.key_count())
            .map(|i| self.key_entry(i))
            .collect::<Option<_>>()?;
        let n_terms = self.sec[2].1 / 4 - 1;
        let terms = (0..n_terms as u32)
            .map(|id| String::from_utf8(self.dict_term(id).to_vec()).ok())
            .collect::<Option<Vec<_>>>()?;
        // The postings are term-major: each doc's list comes out sorted by
        // term id, as a file entry keeps it. They are read a range of terms
        // at a time (the whole section is tens of megabytes).
        let mut doc_terms: Vec<TermList> = self
            .recs
            .iter()
            .map(|r| TermList::with_capacity(r.terms.min(1 << 16)))
            .collect();
        let offs = self.read(12, 0, self.sec[12].1)?;
        let at = |id: usize| u32_at(&offs, id * 4).map(|v| v as usize);
        let mut lo = 0;
        while lo < n_terms {
            let start = at(lo)?;
            let mut hi = lo + 1;
            while hi < n_terms && at(hi + 1)?.saturating_sub(start) <= 1 << 20 {
                hi += 1;
            }
            let end = at(hi)?;
            let postings = self.read(7, start * TERM, end.checked_sub(start)? * TERM)?;
            for id in lo..hi {
                let (from, to) = (at(id)?.checked_sub(start)?, at(id + 1)?.checked_sub(start)?);
                for t in postings.get(from * TERM..to * TERM)?.chunks_exact(TERM) {
                    let doc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
                    doc_terms
                        .get_mut(doc)?
                        .push(id as u32, u16::from_le_bytes([t[4], t[5]]), t[6]);
                }
            }
            lo = hi;
        }
        let mut files = BTreeMap::new();
        for (i, mut terms) in doc_terms.into_iter().enumerate() {
            terms.shrink_to_fit();
            let r = self.recs[i];
            let (summary, error) = self.entry(i);
            files.insert(
                self.path(i).to_string(),
                FileEntry {
                    stamp: r.stamp,
                    hash: r.hash,
                    summary,
                    error,
                    terms,
                    len: r.len,
                },
            );
        }
        Some(Cache {
            logs: self.head.logs.clone(),
            keys,
            pending: self.proposals()?,
            files,
            dict: Dict::from_terms(terms),
            loaded_mtime,
            dirty: false,
        })
    }
}

/// The header's section table, checked against the file's length.
fn section_table(bytes: &[u8], total: usize, version: u32) -> Option<[(usize, usize); SECTIONS]> {
    if bytes.get(..8)? != MAGIC
        || u32_at(bytes, 8)? != version
        || u32_at(bytes, 12)? as usize != SECTIONS
    {
        return None;
    }
    let mut sec = [(0usize, 0usize); SECTIONS];
    for (i, s) in sec.iter_mut().enumerate() {
        let off = usize::try_from(u64_at(bytes, 16 + i * 16)?).ok()?;
        let len = usize::try_from(u64_at(bytes, 24 + i * 16)?).ok()?;
        if off < HEADER || off.checked_add(len)? > total {
            return None;
        }
        *s = (off, len);
    }
    Some(sec)
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
            let (counts, len) = crate::search::rank::term_counts(&m);
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

    #[test]
    fn encodes_and_decodes_losslessly() {
        let cache = sample();
        let view = View::parse(encode(&cache, 9), 9).expect("parses");
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
            View::parse(encode(&cache, 9), 10).is_none(),
            "another version is refused"
        );
    }

    #[test]
    fn a_write_reads_key_states_and_descriptions_in_place() {
        let cache = sample();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("index.bin");
        std::fs::write(&path, encode(&cache, 9)).expect("write");
        let view = View::open(&path, 9, Load::Write).expect("opens");
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
        // Posting offsets were not loaded; summaries are read from the file.
        assert!(view.postings(beta).is_empty());
        assert_eq!(view.entry(2).0, cache.files["memory/project/m2.md"].summary);
        // A query reads its terms' postings from the file.
        let query = View::open(&path, 9, Load::Query).expect("opens");
        assert_eq!(query.postings(beta).len(), 2);
        assert_eq!(query.description_terms(1).count(), 0);
    }

    #[test]
    fn damaged_files_are_refused_without_panic() {
        let bytes = encode(&sample(), 1);
        for cut in 0..bytes.len() {
            assert!(
                View::parse(bytes[..cut].to_vec(), 1).is_none(),
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
            if let Some(v) = View::parse(b, 1) {
                // Whatever survives the checks must be safe to read.
                for i in 0..v.len() {
                    let _ = (v.path(i), v.entry(i), v.postings(i as u32));
                }
                let _ = v.lookup("beta");
                let _ = v.into_cache(0);
            }
        }
    }
}
