//! The index file opened and read in place: sections are read where they
//! lie, records decoded on use.
//!
//! On unix the file is mapped rather than read: a query touches a few
//! pages of a file of tens of megabytes (its terms' postings, the records
//! and paths of the docs they name), and a process that copied the whole
//! file, or even the sections a query might need, paid for the copy and
//! its page faults on every run (42% of a warm query at 60,000 memories).
//! Elsewhere the file is read whole (a mapped file there cannot be
//! replaced while it is open).

use super::*;

/// The index file's bytes: mapped, or read into memory.
#[derive(Debug)]
enum Bytes {
    /// The file, mapped read-only.
    #[cfg(unix)]
    Mapped(memmap2::Mmap),
    /// The file's bytes, owned.
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            #[cfg(unix)]
            Bytes::Mapped(map) => map,
            Bytes::Owned(bytes) => bytes,
        }
    }
}

impl Bytes {
    /// The bytes of the file at `path`, mapped where that is safe.
    fn of_file(path: &std::path::Path) -> Option<Bytes> {
        let file = std::fs::File::open(path).ok()?;
        #[cfg(unix)]
        {
            // SAFETY: a mapping is undefined behaviour if the file changes
            // under it. memoir never changes an index file in place: it
            // writes a new file and renames it over the old one
            // (`fs::replace`), or removes it; either leaves this inode, and
            // so this mapping, as it was. Another program truncating
            // `.git/memoir/<clone>/index.bin` by hand while a query runs
            // would fault that query, the exposure git accepts for its own
            // index and packs.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                return Some(Bytes::Mapped(map));
            }
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut &file, &mut bytes).ok()?;
        Some(Bytes::Owned(bytes))
    }
}

/// The persistent index's file opened and read in place (not a "view":
/// views are the memory files and MEMORY.md).
#[derive(Debug)]
pub struct OpenIndex {
    /// The file's bytes.
    bytes: Bytes,
    /// Where each section lies in the file.
    pub(super) sec: PerSection<Span>,
    /// The head section, decoded.
    pub head: Head,
    /// How many doc records the docs section holds.
    docs: usize,
}

impl OpenIndex {
    /// Opens an index file for the reader `load` names. `None` if it is not
    /// one this version wrote, or damaged where the checks of that load
    /// look.
    pub fn open(path: &std::path::Path, version: u32, load: Load) -> Option<OpenIndex> {
        OpenIndex::check(Bytes::of_file(path)?, version, load)
    }

    /// Checks a whole index file and opens it; `None` if it is not one this
    /// version wrote, or is damaged anywhere.
    pub fn parse(bytes: Vec<u8>, version: u32) -> Option<OpenIndex> {
        OpenIndex::check(Bytes::Owned(bytes), version, Load::Decode)
    }

    /// [`OpenIndex::open`]'s checks on bytes in memory.
    #[cfg(test)]
    pub(super) fn parse_as(bytes: Vec<u8>, version: u32, load: Load) -> Option<OpenIndex> {
        OpenIndex::check(Bytes::Owned(bytes), version, load)
    }

    /// Decodes the head and checks what readers rely on. Every load checks
    /// the header, the head and the sections' sizes (constant time); a
    /// whole decode also checks every record, path and key offset. The
    /// other loads check each record as they read it: a damaged one reads
    /// as empty or invalid, never out of its section.
    fn check(bytes: Bytes, version: u32, load: Load) -> Option<OpenIndex> {
        let sec = section_table(&bytes, bytes.len(), version)?;
        let slice = |s: Section| bytes.get(sec[s].at..sec[s].at + sec[s].len);
        let head: Head = postcard::from_bytes(slice(Section::Head)?).ok()?;
        // Its flags vouch for texts only under the rules they were
        // computed with: under others, the index is rebuilt.
        if head.rules != crate::policy::secrets::rules_fingerprint() {
            return None;
        }
        let docs_section = slice(Section::Docs)?;
        let docs = u32_at(docs_section, 0)? as usize;
        if docs_section.len() != 4 + docs.checked_mul(REC)? {
            return None;
        }
        let view = OpenIndex {
            bytes,
            sec,
            head,
            docs,
        };
        let notes = view.head.notes as usize;
        let notes_ok = notes.checked_mul(NOTE_REC) == Some(view.sec[Section::NoteRecs].len);
        let lens_ok = docs.checked_add(notes).and_then(|n| n.checked_mul(4))
            == Some(view.sec[Section::Lens].len)
            && view.sec[Section::Expiring].len % EXPIRING == 0;
        if !(notes_ok && lens_ok && view.dict_fits()?) {
            return None;
        }
        if load == Load::Decode
            && !(view.records_fit() && view.paths_sorted() && view.key_offsets_rise()?)
        {
            return None;
        }
        Some(view)
    }

    /// Every record lies within the sections it points into.
    fn records_fit(&self) -> bool {
        (0..self.docs).all(|i| {
            let rec = self.rec(i);
            rec.path.within(self.sec[Section::Paths].len)
                && rec.entry.within(self.sec[Section::Entries].len)
                && rec.descs.within(self.sec[Section::Descriptions].len / 4)
        })
    }

    /// Paths must be UTF-8 and sorted: lookups merge with a sorted listing.
    fn paths_sorted(&self) -> bool {
        let mut prev: Option<&str> = None;
        for i in 0..self.docs {
            let Ok(p) = std::str::from_utf8(self.path_bytes(i)) else {
                return false;
            };
            if prev.is_some_and(|q| q >= p) {
                return false;
            }
            prev = Some(p);
        }
        true
    }
    /// The dictionary's offsets end at the terms' end, and every term is
    /// in the sorted list.
    fn dict_fits(&self) -> Option<bool> {
        let dict_n = self.sec[Section::DictOffsets].len / 4;
        Some(
            dict_n != 0
                && self.sec[Section::Sorted].len == (dict_n - 1) * 4
                && u32_at(self.section(Section::DictOffsets), (dict_n - 1) * 4)? as usize
                    == self.sec[Section::Terms].len,
        )
    }

    /// Key offsets rise and stay within the keys section.
    fn key_offsets_rise(&self) -> Option<bool> {
        let offs = self.section(Section::KeyOffsets);
        let mut last = 0;
        for at in (0..offs.len()).step_by(4) {
            let o = u32_at(offs, at)? as usize;
            if o < last || o > self.sec[Section::Keys].len {
                return Some(false);
            }
            last = o;
        }
        Some(!offs.is_empty())
    }

    /// Section `s`'s bytes.
    fn section(&self, s: Section) -> &[u8] {
        let Span { at, len } = self.sec[s];
        // Within the file: `section_table` checked every span.
        self.bytes.get(at..at + len).unwrap_or(&[])
    }

    /// Bytes `at..at + len` of section `s`; `None` past its end.
    fn read(&self, s: Section, at: usize, len: usize) -> Option<&[u8]> {
        self.section(s).get(at..at.checked_add(len)?)
    }

    fn path_bytes(&self, i: usize) -> &[u8] {
        // Two fields of the record: a binary search reads tens of them.
        let span = self.rec_bytes(i).map(|r| {
            let at = u32::from_le_bytes(Rec::PATH_AT.get(r)) as usize;
            (at, u32::from_le_bytes(Rec::PATH_LEN.get(r)) as usize)
        });
        span.and_then(|(at, len)| self.read(Section::Paths, at, len))
            .unwrap_or(&[])
    }

    /// Doc `i`'s weighted length if it is live on day `today` (days since
    /// the epoch): parsed and not expired. Reads 4 bytes of the lengths
    /// section and, by binary search, the list of docs with an `expires`
    /// date, not the record.
    pub fn live_len(&self, i: usize, today: i64) -> Option<u32> {
        if i >= self.docs {
            return None;
        }
        let len = u32_at(self.section(Section::Lens), i.checked_mul(4)?)?;
        let expired = self.expires(i).is_some_and(|day| day < today);
        (len != NOT_PARSED && !expired).then_some(len)
    }

    /// [`OpenIndex::live_len`] for docs asked in ascending order (a
    /// search's matches): the list of docs with an `expires` date is
    /// walked alongside rather than searched for each.
    pub fn live_len_ascending(&self, today: i64) -> impl FnMut(usize) -> Option<u32> + '_ {
        let lens = self.section(Section::Lens);
        let mut expiring = self.expiring().peekable();
        move |i| {
            while expiring.next_if(|&(doc, _)| doc < i).is_some() {}
            let expired = expiring
                .peek()
                .is_some_and(|&(doc, day)| doc == i && day < today);
            let len = u32_at(lens, i.checked_mul(4)?).filter(|_| i < self.docs)?;
            (len != NOT_PARSED && !expired).then_some(len)
        }
    }

    /// How many docs are live on day `today`, and their weighted lengths
    /// summed: one pass over 4 bytes a doc, then the few that expire.
    pub fn live_totals(&self, today: i64) -> (usize, u64) {
        let (mut docs, mut total) = (0usize, 0u64);
        for len in self.lens().take(self.docs) {
            if len != NOT_PARSED {
                docs += 1;
                total += u64::from(len);
            }
        }
        let lens = self.section(Section::Lens);
        for (doc, _) in self
            .expiring()
            .filter(|&(doc, day)| day < today && doc < self.docs)
        {
            if let Some(len) = doc.checked_mul(4).and_then(|at| u32_at(lens, at)) {
                if len != NOT_PARSED {
                    docs = docs.saturating_sub(1);
                    total = total.saturating_sub(u64::from(len));
                }
            }
        }
        (docs, total)
    }

    /// Every doc's length, then every note's, as [`Section::Lens`] holds them.
    fn lens(&self) -> impl Iterator<Item = u32> + '_ {
        (self.section(Section::Lens).chunks_exact(4))
            .map(|b| b.try_into().map_or(NOT_PARSED, u32::from_le_bytes))
    }

    /// (doc, `expires` day) of each doc with an `expires` date, by doc.
    fn expiring(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        let entries = self.section(Section::Expiring).chunks_exact(EXPIRING);
        entries.filter_map(expiring_entry)
    }

    /// Doc `i`'s `expires` day, if it has one (a binary search of
    /// [`Section::Expiring`]).
    fn expires(&self, i: usize) -> Option<i64> {
        let entries = self.section(Section::Expiring);
        let n = entries.len() / EXPIRING;
        let entry = |k: usize| expiring_entry(entries.get(k * EXPIRING..(k + 1) * EXPIRING)?);
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match entry(mid)? {
                (doc, day) if doc == i => return Some(day),
                (doc, _) if doc < i => lo = mid + 1,
                _ => hi = mid,
            }
        }
        None
    }

    /// The positions of the docs that did not parse, in one pass (over
    /// their lengths, 4 bytes each).
    pub fn invalid(&self) -> impl Iterator<Item = usize> + '_ {
        (self.lens().take(self.docs).enumerate())
            .filter(|&(_, len)| len == NOT_PARSED)
            .map(|(i, _)| i)
    }

    /// Memory files indexed.
    pub fn len(&self) -> usize {
        self.docs
    }

    /// Is the index empty?
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// The record of doc `i`, decoded now (an invalid, empty one past the
    /// last).
    pub fn rec(&self, i: usize) -> Rec {
        let at = i.checked_mul(REC).and_then(|a| a.checked_add(4));
        at.and_then(|at| self.read(Section::Docs, at, REC))
            .and_then(|r| r.try_into().ok())
            .map_or(Rec::decode(&[0; REC]), Rec::decode)
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
        self.postings_of(id).collect()
    }

    /// As [`OpenIndex::postings`], read where they lie: a search goes
    /// over a common term's list twice rather than copy it.
    pub fn postings_of(&self, id: u32) -> impl Iterator<Item = (u32, u16, u8)> + Clone + '_ {
        let offs = self.section(Section::PostingOffsets);
        let at = |i: usize| u32_at(offs, i * 4).map(|v| v as usize);
        let bytes = match (at(id as usize), at(id as usize + 1)) {
            (Some(from), Some(to)) => to
                .checked_sub(from)
                .and_then(|n| self.read(Section::Postings, from * TERM, n * TERM)),
            _ => None,
        };
        let docs = self.docs + self.note_count();
        postings_in(bytes.unwrap_or(&[])).filter(move |p| (p.0 as usize) < docs)
    }

    /// The ids of doc `i`'s description terms, sorted.
    pub fn description_terms(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let Span { at, len } = self.rec(i).descs;
        self.read(Section::Descriptions, at * 4, len * 4)
            .unwrap_or(&[])
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// How many docs MEMORY.md ranks (valid memory files), and the
    /// positions of the most valuable of them (at most `CUT`, 1,024), most
    /// valuable first; `None` if damaged.
    pub fn memory_md_cut(&self) -> Option<(usize, Vec<usize>)> {
        let cut = self.section(Section::MemoryMdCut);
        let ranked = u32_at(cut, 0)? as usize;
        let docs: Vec<usize> = (cut.get(4..)?.chunks_exact(4))
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .collect();
        let fits = cut.len() % 4 == 0 && docs.len() == ranked.min(CUT);
        (fits && ranked <= self.docs && docs.iter().all(|&i| i < self.docs))
            .then_some((ranked, docs))
    }

    /// The position of the doc at `path`, by binary search.
    pub fn position(&self, path: &str) -> Option<usize> {
        let found = self.prefixed(path).start;
        (found < self.docs && self.path(found) == path).then_some(found)
    }

    /// Doc `i`'s record as bytes, undecoded: for the accessors that read
    /// one or two fields of every doc.
    fn rec_bytes(&self, i: usize) -> Option<&[u8; REC]> {
        let at = i.checked_mul(REC)?.checked_add(4)?;
        self.read(Section::Docs, at, REC)?.try_into().ok()
    }

    /// Doc `i`'s content fingerprint if it is live on day `today`, as
    /// [`OpenIndex::live_len`] decides: three fields read, for semantic
    /// recall's list of every live memory.
    pub fn live_hash(&self, i: usize, today: i64) -> Option<u64> {
        let r = self.rec_bytes(i)?;
        live(r, today).then(|| u64::from_le_bytes(Rec::HASH.get(r)))
    }

    /// Did doc `i` parse? Reads that field only: a search's warnings and
    /// MEMORY.md's ranking ask it of every doc.
    pub fn is_valid(&self, i: usize) -> bool {
        self.rec_bytes(i).is_some_and(valid)
    }

    /// Does the index vouch that the memory file at `rel`, whose content
    /// has fingerprint `hash`, holds no secret (the write policy's whole
    /// secret check passes on it)?
    pub fn vouches_clean(&self, rel: &str, hash: u64) -> bool {
        self.position(rel).is_some_and(|i| {
            let rec = self.rec(i);
            rec.clean && rec.hash == hash
        })
    }

    /// How many description terms doc `i` has.
    pub fn description_len(&self, i: usize) -> usize {
        self.rec(i).descs.len
    }

    /// Doc `i`'s summary (decoded now) and parse error.
    pub fn entry(&self, i: usize) -> (Option<Summary>, Option<String>) {
        let Span { at, len } = self.rec(i).entry;
        self.read(Section::Entries, at, len)
            .and_then(|b| postcard::from_bytes(b).ok())
            .unwrap_or((None, Some("unreadable index entry".into())))
    }

    fn dict_term(&self, id: u32) -> &[u8] {
        let offs = self.section(Section::DictOffsets);
        let at = id as usize * 4;
        let terms = self.section(Section::Terms);
        match (u32_at(offs, at), u32_at(offs, at + 4)) {
            (Some(a), Some(b)) if a <= b => terms.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The id of a term, by binary search over the sorted dictionary.
    pub fn lookup(&self, term: &str) -> Option<u32> {
        let sorted = self.section(Section::Sorted);
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

    /// How many terms the dictionary has.
    pub(super) fn term_count(&self) -> usize {
        (self.sec[Section::DictOffsets].len / 4).saturating_sub(1)
    }

    /// Memories with a replayed state.
    fn key_count(&self) -> usize {
        (self.sec[Section::KeyOffsets].len / 4).saturating_sub(1)
    }

    /// Key state `i` (in key order), decoded now.
    fn key_entry(&self, i: usize) -> Option<(String, KeyState)> {
        let offs = self.read(Section::KeyOffsets, i * 4, 8)?;
        let (a, b) = (u32_at(offs, 0)? as usize, u32_at(offs, 4)? as usize);
        postcard::from_bytes(self.read(Section::Keys, a, b.checked_sub(a)?)?).ok()
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
        let bytes = self.read(Section::Proposals, 0, self.sec[Section::Proposals].len)?;
        let text = std::str::from_utf8(bytes).ok()?;
        let parsed = crate::model::event::parse_log(text).ok()?;
        let ids = parsed.events.iter().map(|e| &e.id);
        (parsed.torn.is_empty() && ids.eq(self.head.pending.iter())).then_some(parsed.events)
    }

    /// Every note, oldest first (read from the file: a search and
    /// whole-index readers need them); `None` if damaged.
    pub fn notes(&self) -> Option<Vec<crate::model::event::Event>> {
        let bytes = self.read(Section::Notes, 0, self.sec[Section::Notes].len)?;
        let text = std::str::from_utf8(bytes).ok()?;
        let parsed = crate::model::event::parse_log(text).ok()?;
        (parsed.torn.is_empty() && parsed.events.len() == self.note_count())
            .then_some(parsed.events)
    }

    /// How many notes the index holds (their docs follow the memory
    /// files' in the postings).
    pub fn note_count(&self) -> usize {
        self.head.notes as usize
    }

    /// The notes' weighted lengths, summed.
    pub fn notes_len(&self) -> u64 {
        self.head.notes_len
    }

    /// Note `i`'s record, read from the file; `None` if damaged.
    pub fn note_rec(&self, i: usize) -> Option<NoteRec> {
        let b = self.note_bytes(i)?;
        let id: [u8; 26] = b.get(20..46)?.try_into().ok()?;
        std::str::from_utf8(&id).ok()?;
        Some(NoteRec {
            entry: Span {
                at: u32_at(b, 0)? as usize,
                len: u32_at(b, 4)? as usize,
            },
            time: i64::from_le_bytes(b.get(8..16)?.try_into().ok()?),
            len: u32_at(b, 16)?,
            id,
            clean: b.get(46)? & 1 != 0,
        })
    }

    /// Note `i`'s record as bytes, undecoded.
    fn note_bytes(&self, i: usize) -> Option<&[u8]> {
        self.read(Section::NoteRecs, i.checked_mul(NOTE_REC)?, NOTE_REC)
    }

    /// Note `i`'s weighted length, without decoding its record: a search
    /// asks it of every note with a query term.
    pub fn note_len(&self, i: usize) -> Option<u32> {
        let at = self.docs.checked_add(i)?.checked_mul(4)?;
        u32_at(self.section(Section::Lens), at)
    }

    /// When note `i` was written (ms since the epoch), without decoding
    /// its record.
    pub fn note_time(&self, i: usize) -> Option<i64> {
        Some(i64::from_le_bytes(
            self.note_bytes(i)?.get(8..16)?.try_into().ok()?,
        ))
    }

    /// Note `i`'s event id, where it lies; empty if damaged.
    pub fn note_id(&self, i: usize) -> &str {
        let id = self
            .note_bytes(i)
            .and_then(|b| b.get(20..46))
            .unwrap_or(&[]);
        std::str::from_utf8(id).unwrap_or("").trim_end()
    }

    /// Note `i`, parsed from its entry alone; `None` if damaged.
    pub fn note(&self, rec: &NoteRec) -> Option<crate::model::event::Event> {
        let bytes = self.read(Section::Notes, rec.entry.at, rec.entry.len)?;
        let parsed = crate::model::event::parse_log(std::str::from_utf8(bytes).ok()?).ok()?;
        let mut events = parsed.events.into_iter();
        let e = events.next()?;
        (events.next().is_none() && e.id == rec.id()).then_some(e)
    }

    /// Decodes everything into a [`Cache`] that commands can change.
    pub fn into_cache(self, loaded_mtime: i128) -> Option<Cache> {
        let keys: BTreeMap<String, KeyState> = (0..self.key_count())
            .map(|i| self.key_entry(i))
            .collect::<Option<_>>()?;
        let terms = (0..self.term_count() as u32)
            .map(|id| String::from_utf8(self.dict_term(id).to_vec()).ok())
            .collect::<Option<Vec<_>>>()?;
        let mut doc_terms = self.doc_terms()?;
        let note_terms = doc_terms.split_off(self.docs);
        let notes = self
            .notes()?
            .into_iter()
            .zip(note_terms)
            .enumerate()
            .map(|(i, (event, mut terms))| {
                terms.shrink_to_fit();
                let rec = self.note_rec(i)?;
                Some(NoteEntry {
                    event,
                    terms,
                    len: rec.len,
                    clean: rec.clean,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let files = self.files(doc_terms);
        Some(Cache {
            logs: self.head.logs.clone(),
            keys,
            pending: self.proposals()?,
            notes,
            files,
            dict: Dict::from_terms(terms),
            loaded_mtime,
            dirty: false,
            note_ids: None,
            watch: self.head.watch,
        })
    }

    /// Each doc's term list, from the postings. They are term-major: each
    /// doc's list comes out sorted by term id, as a file entry keeps it.
    /// They are read a range of terms at a time (the whole section is tens
    /// of megabytes).
    fn doc_terms(&self) -> Option<Vec<TermList>> {
        let mut doc_terms: Vec<TermList> = (0..self.docs)
            .map(|i| TermList::with_capacity(self.rec(i).terms.min(1 << 16)))
            .chain((0..self.note_count()).map(|_| TermList::default()))
            .collect();
        let n_terms = self.term_count();
        let offs = self.read(
            Section::PostingOffsets,
            0,
            self.sec[Section::PostingOffsets].len,
        )?;
        let at = |id: usize| u32_at(offs, id * 4).map(|v| v as usize);
        let mut lo = 0;
        while lo < n_terms {
            // Terms lo..hi: about a million postings (at least one term).
            let start = at(lo)?;
            let mut hi = lo + 1;
            while hi < n_terms && at(hi + 1)?.saturating_sub(start) <= 1 << 20 {
                hi += 1;
            }
            let end = at(hi)?;
            let postings = self.read(
                Section::Postings,
                start * TERM,
                end.checked_sub(start)? * TERM,
            )?;
            for id in lo..hi {
                let (from, to) = (at(id)?.checked_sub(start)?, at(id + 1)?.checked_sub(start)?);
                for (doc, tf, mask) in postings_in(postings.get(from * TERM..to * TERM)?) {
                    doc_terms.get_mut(doc as usize)?.push(id as u32, tf, mask);
                }
            }
            lo = hi;
        }
        Some(doc_terms)
    }

    /// The file entries, by path, with these term lists.
    fn files(&self, doc_terms: Vec<TermList>) -> BTreeMap<String, FileEntry> {
        let mut files = BTreeMap::new();
        for (i, mut terms) in doc_terms.into_iter().enumerate() {
            terms.shrink_to_fit();
            let r = self.rec(i);
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
                    clean: r.clean,
                },
            );
        }
        files
    }
}

/// An entry of [`Section::Expiring`]: (doc, day).
fn expiring_entry(e: &[u8]) -> Option<(usize, i64)> {
    let doc = u32_at(e, 0)? as usize;
    Some((doc, i64::from_le_bytes(e.get(4..12)?.try_into().ok()?)))
}

/// Did the doc of record `r` parse? (One field, read where it lies.)
fn valid(r: &[u8; REC]) -> bool {
    u32::from_le_bytes(Rec::VALID.get(r)) != 0
}

/// Is the doc of record `r` live on day `today` (days since the epoch):
/// parsed and not expired?
fn live(r: &[u8; REC], today: i64) -> bool {
    valid(r) && i64::from_le_bytes(Rec::EXPIRES.get(r)) >= today
}
