//! Writing the index file: a section at a time, then the header.

use super::*;

/// Encodes a cache as an index file.
pub fn encode(cache: &Cache, version: u32) -> Vec<u8> {
    encode_with(cache, version, crate::policy::secrets::rules_fingerprint())
}

/// [`encode`], with the secret flags said to be computed under the rules
/// of fingerprint `rules` (tests: an index of other rules; a format pinned
/// whatever the rule table).
pub(super) fn encode_with(cache: &Cache, version: u32, rules: u64) -> Vec<u8> {
    let mut out = io::Cursor::new(Vec::new());
    write_with(&mut out, cache, version, rules)
        .map(|_| out.into_inner())
        .unwrap_or_default()
}

/// Counts what goes through it.
struct Counting<'a, W> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes a cache as an index file, a section at a time straight to `w`
/// (never the whole encoded index in memory: it is tens of megabytes at
/// 50,000 memories, on top of the cache), then the header.
pub fn write(w: &mut (impl Write + io::Seek), cache: &Cache, version: u32) -> io::Result<()> {
    let rules = crate::policy::secrets::rules_fingerprint();
    write_with(w, cache, version, rules)
}

/// [`write`], the head naming the secret rules of fingerprint `rules`.
fn write_with(
    w: &mut (impl Write + io::Seek),
    cache: &Cache,
    version: u32,
    rules: u64,
) -> io::Result<()> {
    let start = w.stream_position()?;
    w.write_all(&[0u8; HEADER])?;
    // u64, not `Span`: the file may be larger than this platform's memory.
    let mut table = PerSection([(0u64, 0u64); Section::COUNT]);
    let mut at = HEADER as u64;
    for s in Section::PHYSICAL {
        let mut counting = Counting { inner: w, n: 0 };
        // Sections are written a term, a path, a record at a time: the
        // small pieces are gathered before they reach `w`.
        let mut buffered = io::BufWriter::with_capacity(1 << 16, &mut counting);
        write_section(&mut buffered, cache, s, rules)?;
        buffered.flush()?;
        drop(buffered);
        table[s] = (at, counting.n);
        at += counting.n;
    }
    w.seek(io::SeekFrom::Start(start))?;
    w.write_all(&header(&table, version))?;
    w.seek(io::SeekFrom::Start(start + at))?;
    Ok(())
}

/// The header of an index file whose sections lie at `table`.
fn header(table: &PerSection<(u64, u64)>, version: u32) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&version.to_le_bytes());
    header.extend_from_slice(&(Section::COUNT as u32).to_le_bytes());
    for s in Section::TABLE {
        let (offset, len) = table[s];
        header.extend_from_slice(&offset.to_le_bytes());
        header.extend_from_slice(&len.to_le_bytes());
    }
    header
}

/// Writes section `s` of the index file for `cache`.
fn write_section(w: &mut impl Write, cache: &Cache, s: Section, rules: u64) -> io::Result<()> {
    let terms = &cache.dict.terms;
    match s {
        Section::Head => w.write_all(&head_bytes(cache, rules)),
        Section::KeyOffsets => write_offsets(w, cache.keys.iter().map(|k| key_bytes(k).len())),
        Section::DictOffsets => write_offsets(w, terms.iter().map(String::len)),
        Section::Terms => write_each(w, terms),
        Section::Sorted => write_sorted(w, terms),
        Section::Docs => write_docs(w, cache),
        Section::Paths => write_each(w, cache.files.keys()),
        Section::Postings => write_postings(w, cache),
        Section::Entries => write_each(w, cache.files.values().map(entry_bytes)),
        Section::Descriptions => write_descriptions(w, cache),
        Section::Keys => write_each(w, cache.keys.iter().map(key_bytes)),
        Section::Proposals => write_each(w, cache.pending.iter().map(|e| e.render())),
        Section::Notes => write_each(w, cache.notes.iter().map(|n| n.event.render())),
        Section::NoteRecs => write_note_recs(w, cache),
        Section::PostingOffsets => write_offsets(w, posting_counts(cache)),
        Section::MemoryMdCut => write_memory_md_cut(w, cache),
        Section::Lens => write_lens(w, cache),
        Section::Expiring => write_expiring(w, cache),
    }
}

/// Writes each doc's weighted length (`u32::MAX`: it did not parse), then
/// each note's.
fn write_lens(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    let docs = (cache.files.values()).map(|e| e.summary.as_ref().map_or(NOT_PARSED, |_| e.len));
    let notes = cache.notes.iter().map(|n| n.len);
    docs.chain(notes)
        .try_for_each(|len| w.write_all(&len.to_le_bytes()))
}

/// Writes (doc, `expires`) for each doc that has an `expires` date.
fn write_expiring(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    for (doc, e) in cache.files.values().enumerate() {
        if let Some(expires) = e.summary.as_ref().and_then(|s| s.expires) {
            w.write_all(&(doc as u32).to_le_bytes())?;
            w.write_all(&expires.to_le_bytes())?;
        }
    }
    Ok(())
}

/// Writes how many docs MEMORY.md ranks and the most valuable [`CUT`] of
/// them, in its value order (the order `Snapshot::memory_md_block` ranks
/// records by).
fn write_memory_md_cut(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    use crate::render::memory_md::{pick, type_rank, Rank};
    let mut ranked: Vec<(Rank<(&str, &str)>, u32)> = (cache.files.iter().enumerate())
        .filter_map(|(i, (path, e))| {
            let s = e.summary.as_ref()?;
            let rank = Rank {
                kind: type_rank(&s.kind),
                confidence: s.confidence,
                updated: s.updated,
                key: crate::model::key::split_rel_path(path)?,
            };
            Some((rank, i as u32))
        })
        .collect();
    w.write_all(&(ranked.len() as u32).to_le_bytes())?;
    let order =
        |(a, _): &(Rank<(&str, &str)>, u32), (b, _): &(Rank<(&str, &str)>, u32)| a.value_order(b);
    pick(&mut ranked, CUT, order);
    ranked.sort_unstable_by(order);
    ranked
        .iter()
        .try_for_each(|(_, doc)| w.write_all(&doc.to_le_bytes()))
}

/// Writes the items back to back.
fn write_each<B: AsRef<[u8]>>(
    w: &mut impl Write,
    items: impl IntoIterator<Item = B>,
) -> io::Result<()> {
    items.into_iter().try_for_each(|b| w.write_all(b.as_ref()))
}

/// The head section: what a query needs from the logs' side.
fn head_bytes(cache: &Cache, rules: u64) -> Vec<u8> {
    let head = Head {
        logs: cache.logs.clone(),
        pending: cache.pending.iter().map(|e| e.id.clone()).collect(),
        conflicts: cache
            .keys
            .iter()
            .filter(|(_, k)| k.conflict)
            .map(|(k, _)| k.clone())
            .collect(),
        notes: cache.notes.len() as u64,
        notes_len: cache.notes.iter().map(|n| u64::from(n.len)).sum(),
        rules,
        watch: cache.watch,
    };
    postcard::to_stdvec(&head).unwrap_or_default()
}

/// A key state's record in the keys section.
fn key_bytes(entry: (&String, &KeyState)) -> Vec<u8> {
    postcard::to_stdvec(&entry).unwrap_or_default()
}

/// A file's entry section record: its summary and parse error.
fn entry_bytes(e: &FileEntry) -> Vec<u8> {
    postcard::to_stdvec(&(&e.summary, &e.error)).unwrap_or_default()
}

/// Writes u32 offsets into a section of items of these lengths: 0, then
/// where each item ends.
fn write_offsets(w: &mut impl Write, lens: impl IntoIterator<Item = usize>) -> io::Result<()> {
    let mut offset = 0u32;
    w.write_all(&offset.to_le_bytes())?;
    for len in lens {
        offset += len as u32;
        w.write_all(&offset.to_le_bytes())?;
    }
    Ok(())
}

/// Writes the term ids in the terms' string order.
fn write_sorted(w: &mut impl Write, terms: &[String]) -> io::Result<()> {
    let mut sorted: Vec<u32> = (0..terms.len() as u32).collect();
    sorted.sort_by(|a, b| terms[*a as usize].cmp(&terms[*b as usize]));
    sorted
        .into_iter()
        .try_for_each(|id| w.write_all(&id.to_le_bytes()))
}

/// Writes the docs section: the count, then each file's record.
fn write_docs(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    w.write_all(&(cache.files.len() as u32).to_le_bytes())?;
    // Where each file's path, entry and description terms start in their
    // sections, which list them in the same (path) order.
    let (mut path, mut entry, mut descs) = (Span::default(), Span::default(), Span::default());
    for (p, e) in &cache.files {
        path = path.then(p.len());
        entry = entry.then(entry_bytes(e).len());
        descs = descs.then(usize::from(description_count(e)));
        w.write_all(&Rec::of(e, path, entry, descs).encode())?;
    }
    Ok(())
}

/// How many description terms a doc's record lists (at most `u16::MAX`).
fn description_count(e: &FileEntry) -> u16 {
    let n = e.terms.iter().filter(|t| t.2 & DESCRIPTION != 0).count();
    n.min(usize::from(u16::MAX)) as u16
}

/// Writes each doc's description term ids, as many as its record counts.
fn write_descriptions(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    for e in cache.files.values() {
        let ids = e.terms.iter().filter(|t| t.2 & DESCRIPTION != 0);
        for (id, _, _) in ids.take(usize::from(description_count(e))) {
            w.write_all(&id.to_le_bytes())?;
        }
    }
    Ok(())
}

/// How many docs have each term, by term id.
fn posting_counts(cache: &Cache) -> Vec<usize> {
    let mut counts = vec![0usize; cache.dict.terms.len()];
    for terms in doc_term_lists(cache) {
        for (id, _, _) in terms.iter() {
            if let Some(c) = counts.get_mut(id as usize) {
                *c += 1;
            }
        }
    }
    counts
}

/// Writes one [`NoteRec`] per note.
fn write_note_recs(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    let mut at: u32 = 0;
    for n in &cache.notes {
        let len = n.event.render().len() as u32;
        let mut id = [b' '; 26];
        for (slot, b) in id.iter_mut().zip(n.event.id.bytes()) {
            *slot = b;
        }
        w.write_all(&at.to_le_bytes())?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(&n.event.time.0.to_le_bytes())?;
        w.write_all(&n.len.to_le_bytes())?;
        w.write_all(&id)?;
        w.write_all(&[u8::from(n.clean)])?;
        at = at.saturating_add(len);
    }
    Ok(())
}

/// Writes the postings, term-major, from the docs' term lists: a range of
/// terms per pass over them, so that saving never holds a second copy of
/// every posting (tens of megabytes at 50,000 memories).
fn write_postings(w: &mut impl Write, cache: &Cache) -> io::Result<()> {
    let counts = posting_counts(cache);
    let docs = cache.files.len() + cache.notes.len();
    let mut cursors = vec![crate::index::cache::TermCursor::default(); docs];
    let mut lo = 0;
    while lo < counts.len() {
        // Terms lo..hi: about a million postings (at least one term).
        let (mut hi, mut n) = (lo, 0usize);
        while hi < counts.len() && (hi == lo || n + counts[hi] <= 1 << 20) {
            n += counts[hi];
            hi += 1;
        }
        let mut lists: Vec<Vec<u8>> = counts[lo..hi]
            .iter()
            .map(|c| Vec::with_capacity(c * TERM))
            .collect();
        // Each doc's list is sorted by id: a pass resumes where the last
        // one stopped.
        for ((doc, terms), at) in doc_term_lists(cache).enumerate().zip(&mut cursors) {
            while let Some(((id, tf, mask), next)) = at.next(terms) {
                let id = id as usize;
                let Some(list) = id.checked_sub(lo).filter(|_| id < hi) else {
                    break;
                };
                put_posting(&mut lists[list], doc as u32, tf, mask);
                *at = next;
            }
        }
        lists.iter().try_for_each(|list| w.write_all(list))?;
        lo = hi;
    }
    Ok(())
}
