//! The persistent index's file layout: flat sections a query reads in place.
//!
//! A query must not decode tens of thousands of entries (each a handful of
//! allocations) just to check their stamps and score a few terms. So the
//! index is written as fixed-size records and blobs: a query maps the file
//! into one buffer and reads records, paths and term lists where they lie,
//! decoding summaries only for its hits. Commands that change the store
//! decode the whole of it into a [`Cache`].
//!
//! ```text
//! "MEMOIRIX" | version u32 | section count u32 | (offset u64, length u64) per section | sections
//! 0 head     postcard Head: log stamps, pending proposals, keys with an open conflict
//! 1 keys     postcard BTreeMap<key, KeyState>
//! 2 dict     u32 offsets (n + 1) into 3
//! 3 terms    the term strings, by id
//! 4 sorted   u32 term ids in string order (for lookup by binary search)
//! 5 docs     one 92-byte record per memory file, sorted by path (see Rec)
//! 6 paths    the paths
//! 7 postings (id u32, weighted tf u16, field mask u8) per term, per doc
//! 8 entries  postcard (Option<Summary>, Option<error>) per doc
//! ```
//! All integers little-endian.

use crate::memory::Summary;
use crate::state::{Cache, Dict, FileEntry, KeyState, Stamp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const MAGIC: &[u8; 8] = b"MEMOIRIX";
const SECTIONS: usize = 9;
const REC: usize = 92;
const TERM: usize = 7;
/// Sections in file order: a query reads the file up to the end of 7.
const PHYSICAL: [usize; SECTIONS] = [0, 2, 3, 4, 5, 6, 7, 8, 1];
/// Sections a query may leave on disk.
const LAZY: [usize; 2] = [8, 1];
/// Bytes before the first section.
const HEADER: usize = 16 + SECTIONS * 16;

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

/// Encodes a cache as an index file.
pub fn encode(cache: &Cache, version: u32) -> Vec<u8> {
    let mut out = Vec::new();
    write_sections(&mut out, &sections(cache), version)
        .map(|_| out)
        .unwrap_or_default()
}

/// The sections of an index file, by section number.
pub fn sections(cache: &Cache) -> Vec<Vec<u8>> {
    let head = Head {
        logs: cache.logs.clone(),
        pending: cache.pending.clone(),
        conflicts: cache
            .keys
            .iter()
            .filter(|(_, k)| k.conflict)
            .map(|(k, _)| k.clone())
            .collect(),
    };
    let mut sec: Vec<Vec<u8>> = vec![Vec::new(); SECTIONS];
    sec[0] = postcard::to_stdvec(&head).unwrap_or_default();
    sec[1] = postcard::to_stdvec(&cache.keys).unwrap_or_default();
    let mut offset = 0u32;
    put_u32(&mut sec[2], 0);
    for t in &cache.dict.terms {
        sec[3].extend_from_slice(t.as_bytes());
        offset += t.len() as u32;
        put_u32(&mut sec[2], offset);
    }
    let mut sorted: Vec<u32> = (0..cache.dict.terms.len() as u32).collect();
    sorted.sort_by(|a, b| cache.dict.terms[*a as usize].cmp(&cache.dict.terms[*b as usize]));
    for id in sorted {
        put_u32(&mut sec[4], id);
    }
    put_u32(&mut sec[5], cache.files.len() as u32);
    for (path, e) in &cache.files {
        let entry = postcard::to_stdvec(&(&e.summary, &e.error)).unwrap_or_default();
        let (path_at, terms_at, entry_at) = (sec[6].len(), sec[7].len() / TERM, sec[8].len());
        let rec = &mut sec[5];
        put_u32(rec, path_at as u32);
        put_u32(rec, path.len() as u32);
        put_u64(rec, e.stamp.size);
        rec.extend_from_slice(&e.stamp.mtime.to_le_bytes());
        put_u64(rec, e.hash);
        let expires = e
            .summary
            .as_ref()
            .and_then(|s| s.expires)
            .unwrap_or(i64::MAX);
        rec.extend_from_slice(&expires.to_le_bytes());
        put_u32(rec, e.len);
        put_u32(rec, terms_at as u32);
        put_u32(rec, e.terms.len() as u32);
        put_u32(rec, entry_at as u32);
        put_u32(rec, entry.len() as u32);
        put_u32(rec, u32::from(e.summary.is_some()));
        // What ranking needs, so that a query decodes only the summaries it shows.
        let s = e.summary.as_ref();
        rec.extend_from_slice(&(s.map_or(1.0, |s| s.confidence) as f32).to_le_bytes());
        rec.extend_from_slice(&s.map_or(0, |s| s.updated).to_le_bytes());
        rec.extend_from_slice(
            &s.and_then(|s| s.review_by)
                .unwrap_or(i64::MAX)
                .to_le_bytes(),
        );
        sec[6].extend_from_slice(path.as_bytes());
        for (id, tf, mask) in &e.terms {
            sec[7].extend_from_slice(&id.to_le_bytes());
            sec[7].extend_from_slice(&tf.to_le_bytes());
            sec[7].push(*mask);
        }
        sec[8].extend_from_slice(&entry);
    }
    sec
}

/// Writes an encoded index: the header, then the sections in file order.
pub fn write_sections(
    w: &mut impl std::io::Write,
    sec: &[Vec<u8>],
    version: u32,
) -> std::io::Result<()> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    put_u32(&mut header, version);
    put_u32(&mut header, SECTIONS as u32);
    // What a query reads comes first; the entries (read only for hits) and
    // the keys (read only by commands that change the store) come last.
    let mut at = HEADER as u64;
    let mut offsets = [0u64; SECTIONS];
    for &i in &PHYSICAL {
        offsets[i] = at;
        at += sec[i].len() as u64;
    }
    for (i, s) in sec.iter().enumerate() {
        put_u64(&mut header, offsets[i]);
        put_u64(&mut header, s.len() as u64);
    }
    w.write_all(&header)?;
    for &i in &PHYSICAL {
        w.write_all(&sec[i])?;
    }
    Ok(())
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
    terms: (usize, usize),
    entry: (usize, usize),
    /// It parsed (has a summary).
    pub valid: bool,
    /// Its confidence (1 when absent).
    pub confidence: f64,
    /// Last change, ms since the epoch (0: unknown).
    pub updated: i64,
    /// `review_by` in days since the epoch (`i64::MAX`: none).
    pub review_by: i64,
}

/// An index file, read in place.
#[derive(Debug)]
pub struct View {
    /// The file, or its first part (up to the lazy sections).
    bytes: Vec<u8>,
    /// The file, for sections beyond `bytes`.
    file: Option<std::fs::File>,
    sec: [(usize, usize); SECTIONS],
    /// The head section, decoded.
    pub head: Head,
    recs: Vec<Rec>,
}

impl View {
    /// Opens an index file for a query: reads all but the sections it can
    /// leave on disk. `None` if it is not one this version wrote, or damaged.
    pub fn open(path: &std::path::Path, version: u32) -> Option<View> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).ok()?;
        let total = usize::try_from(file.metadata().ok()?.len()).ok()?;
        let mut header = vec![0u8; HEADER.min(total)];
        file.read_exact(&mut header).ok()?;
        let end = (0..SECTIONS)
            .filter(|i| !LAZY.contains(i))
            .map(|i| {
                usize::try_from(
                    u64_at(&header, 16 + i * 16)?.checked_add(u64_at(&header, 24 + i * 16)?)?,
                )
                .ok()
            })
            .collect::<Option<Vec<usize>>>()?
            .into_iter()
            .max()?
            .max(HEADER);
        if end > total {
            return None;
        }
        let mut bytes = header;
        bytes.resize(end, 0);
        file.read_exact(&mut bytes[HEADER.min(total)..]).ok()?;
        View::parse_prefix(bytes, total, Some(file), version)
    }

    /// Checks a whole index file and opens it; `None` if it is not one this
    /// version wrote, or is damaged anywhere.
    pub fn parse(bytes: Vec<u8>, version: u32) -> Option<View> {
        let total = bytes.len();
        View::parse_prefix(bytes, total, None, version)
    }

    fn parse_prefix(
        bytes: Vec<u8>,
        total: usize,
        file: Option<std::fs::File>,
        version: u32,
    ) -> Option<View> {
        if bytes.get(..8)? != MAGIC
            || u32_at(&bytes, 8)? != version
            || u32_at(&bytes, 12)? as usize != SECTIONS
        {
            return None;
        }
        let mut sec = [(0usize, 0usize); SECTIONS];
        for (i, s) in sec.iter_mut().enumerate() {
            let off = usize::try_from(u64_at(&bytes, 16 + i * 16)?).ok()?;
            let len = usize::try_from(u64_at(&bytes, 24 + i * 16)?).ok()?;
            let limit = if LAZY.contains(&i) {
                total
            } else {
                bytes.len()
            };
            if off.checked_add(len)? > limit {
                return None;
            }
            *s = (off, len);
        }
        let slice = |i: usize| &bytes[sec[i].0..sec[i].0 + sec[i].1];
        let head: Head = postcard::from_bytes(slice(0)).ok()?;
        let docs = slice(5);
        let n = u32_at(docs, 0)? as usize;
        if docs.len() != 4 + n.checked_mul(REC)? {
            return None;
        }
        let (paths_len, terms_len, entries_len) = (sec[6].1, sec[7].1 / TERM, sec[8].1);
        let mut recs = Vec::with_capacity(n);
        for i in 0..n {
            let r = 4 + i * REC;
            let field = |o: usize| u32_at(docs, r + o).map(|v| v as usize);
            let rec = Rec {
                path: (field(0)?, field(4)?),
                stamp: Stamp {
                    size: u64_at(docs, r + 8)?,
                    mtime: i128::from_le_bytes(docs.get(r + 16..r + 32)?.try_into().ok()?),
                },
                hash: u64_at(docs, r + 32)?,
                expires: i64::from_le_bytes(docs.get(r + 40..r + 48)?.try_into().ok()?),
                len: u32_at(docs, r + 48)?,
                terms: (field(52)?, field(56)?),
                entry: (field(60)?, field(64)?),
                valid: u32_at(docs, r + 68)? != 0,
                confidence: f64::from(f32::from_le_bytes(
                    docs.get(r + 72..r + 76)?.try_into().ok()?,
                )),
                updated: i64::from_le_bytes(docs.get(r + 76..r + 84)?.try_into().ok()?),
                review_by: i64::from_le_bytes(docs.get(r + 84..r + 92)?.try_into().ok()?),
            };
            let fits =
                |(o, l): (usize, usize), max: usize| o.checked_add(l).is_some_and(|e| e <= max);
            if !fits(rec.path, paths_len)
                || !fits(rec.terms, terms_len)
                || !fits(rec.entry, entries_len)
            {
                return None;
            }
            recs.push(rec);
        }
        let view = View {
            bytes,
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
        Some(view)
    }

    fn section(&self, i: usize) -> &[u8] {
        let (o, l) = self.sec[i];
        self.bytes.get(o..o + l).unwrap_or(&[])
    }

    /// Bytes `at..at + len` of section `i`, from memory or from the file.
    fn read(&self, i: usize, at: usize, len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let start = self.sec[i].0 + at;
        if let Some(b) = self.bytes.get(start..start + len) {
            return Some(b.into());
        }
        let mut buf = vec![0u8; len];
        std::os::unix::fs::FileExt::read_exact_at(self.file.as_ref()?, &mut buf, start as u64)
            .ok()?;
        Some(buf.into())
    }

    fn path_bytes(&self, i: usize) -> &[u8] {
        let (o, l) = self.recs[i].path;
        &self.section(6)[o..o + l]
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

    /// Doc `i`'s (weighted tf, field mask) for term `id`, if it has it.
    pub fn term(&self, i: usize, id: u32) -> Option<(u16, u8)> {
        let (off, n) = self.recs[i].terms;
        let terms = &self.section(7)[off * TERM..(off + n) * TERM];
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let t = &terms[mid * TERM..mid * TERM + TERM];
            let tid = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
            match tid.cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some((u16::from_le_bytes([t[4], t[5]]), t[6])),
            }
        }
        None
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

    /// Decodes everything into a [`Cache`] that commands can change.
    pub fn into_cache(self, loaded_mtime: i128) -> Option<Cache> {
        let keys: BTreeMap<String, KeyState> =
            postcard::from_bytes(&self.read(1, 0, self.sec[1].1)?).ok()?;
        let n_terms = self.sec[2].1 / 4 - 1;
        let terms = (0..n_terms as u32)
            .map(|id| String::from_utf8(self.dict_term(id).to_vec()).ok())
            .collect::<Option<Vec<_>>>()?;
        let mut files = BTreeMap::new();
        for i in 0..self.recs.len() {
            let r = self.recs[i];
            let (summary, error) = self.entry(i);
            let (off, n) = r.terms;
            let postings = &self.section(7)[off * TERM..(off + n) * TERM];
            let terms = postings
                .chunks_exact(TERM)
                .map(|t| {
                    (
                        u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
                        u16::from_le_bytes([t[4], t[5]]),
                        t[6],
                    )
                })
                .collect();
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
            pending: self.head.pending.clone(),
            files,
            dict: Dict::from_terms(terms),
            loaded_mtime,
            dirty: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Memory;

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
            let (counts, len) = crate::search::term_counts(&m);
            let mut terms: Vec<_> = counts
                .into_iter()
                .map(|(t, (tf, mask))| (cache.dict.intern(&t), tf, mask))
                .collect();
            terms.sort_unstable_by_key(|t| t.0);
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
        assert!(
            view.term(0, beta).is_some()
                && view.term(1, beta).is_some()
                && view.term(2, beta).is_none()
        );
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
                    let _ = (v.path(i), v.entry(i), v.term(i, 0));
                }
                let _ = v.lookup("beta");
                let _ = v.into_cache(0);
            }
        }
    }
}
