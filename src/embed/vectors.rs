//! The vector cache: each embedded text's vector, kept in local state
//! (`vectors-<model>.bin`, never committed) so that a text is embedded once
//! per model, not once per recall.
//!
//! Keyed by the fingerprint of the exact text embedded (prefix included:
//! a new prefix is new text), per model name, at one dimension. The file
//! is small and versioned, loaded whole and written whole (temp file, then
//! rename): a missing, damaged, other version's or other model's file reads
//! as an empty cache, and the service fills it again.
//!
//! Layout, little-endian: the magic `MEMOIRVC`, the version (u32), the
//! dimension (u32, 0 for no vector yet), the model name's length (u32)
//! and bytes, the number of records (u64), then each record: the text's
//! fingerprint (u64) and its `dimension` numbers (f32), by fingerprint.

use super::{check_vectors, EmbedError, Embedder, MAX_DIM};
use crate::model::fingerprint::{fingerprint, FnvBuild};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"MEMOIRVC";
/// The layout's version: a file of another is ignored and rebuilt.
pub(crate) const VECTORS_VERSION: u32 = 1;
/// The largest cache file read (4 GiB): a million memories of 1,024
/// dimensions; a larger one is not read into memory.
const MAX_FILE_BYTES: u64 = 4 << 30;

/// The fingerprint a text is cached under: FNV-1a-64 of its bytes.
pub fn text_hash(text: &str) -> u64 {
    fingerprint(text.as_bytes())
}

/// Cached vectors of one model: fingerprint of the text embedded → vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Vectors {
    model: String,
    /// The vectors' dimension; 0 while there is none.
    dim: usize,
    /// Each vector's start in `data`, by its text's fingerprint.
    slots: HashMap<u64, usize, FnvBuild>,
    /// The vectors, one after the other.
    data: Vec<f32>,
    /// Vectors were added or dropped since the load.
    changed: bool,
}

impl Vectors {
    /// An empty cache for `model`.
    pub fn new(model: &str) -> Vectors {
        Vectors {
            model: model.to_string(),
            dim: 0,
            slots: HashMap::default(),
            data: Vec::new(),
            changed: false,
        }
    }

    /// Loads the cache of `model` from `path`; a missing, unreadable,
    /// damaged or other version's or model's file gives an empty cache.
    pub fn load(path: &Path, model: &str) -> Vectors {
        match crate::fs::safe_file::read(path, MAX_FILE_BYTES) {
            Ok(Some(bytes)) => decode(&bytes, model).unwrap_or_else(|| Vectors::new(model)),
            _ => Vectors::new(model),
        }
    }

    /// The vector cached for exactly `text`, if any (tests).
    #[cfg(test)]
    pub(crate) fn get(&self, text: &str) -> Option<&[f32]> {
        let at = *self.slots.get(&text_hash(text))?;
        self.data.get(at..at + self.dim)
    }

    /// The vector cached under `key` (see [`embed_query`]), if any.
    pub fn get_key(&self, key: u64) -> Option<&[f32]> {
        let at = *self.slots.get(&key)?;
        self.data.get(at..at + self.dim)
    }

    /// The model whose vectors these are.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The vectors' dimension, `None` while the cache is empty of any.
    pub fn dim(&self) -> Option<usize> {
        (self.dim > 0).then_some(self.dim)
    }

    /// How many texts have a vector.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no text has a vector.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Whether vectors were added or dropped since the load: the cache is
    /// worth saving.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// Adds `text`'s fingerprint's vector (of the cache's dimension).
    fn insert(&mut self, hash: u64, vector: &[f32]) {
        match self.slots.get(&hash) {
            Some(&at) => self.data[at..at + self.dim].copy_from_slice(vector),
            None => {
                self.slots.insert(hash, self.data.len());
                self.data.extend_from_slice(vector);
            }
        }
        self.changed = true;
    }

    /// Drops every vector and takes `dim` as the dimension.
    fn reset(&mut self, dim: usize) {
        self.slots.clear();
        self.data.clear();
        self.dim = dim;
        self.changed = true;
    }

    /// Writes the cache to `path` (a temp file beside it, then a rename),
    /// keeping only the vectors whose text fingerprint `keep` accepts: the
    /// caller passes the fingerprints of the texts it still has (the
    /// memories' texts as embedded), so the file stays bounded by them.
    pub fn save(&self, path: &Path, keep: impl Fn(u64) -> bool) -> io::Result<()> {
        let mut kept: Vec<(u64, usize)> = self
            .slots
            .iter()
            .filter(|(h, _)| keep(**h))
            .map(|(h, at)| (*h, *at))
            .collect();
        // By fingerprint: the same cache makes the same file.
        kept.sort_unstable();
        let write = |w: &mut io::BufWriter<std::fs::File>| -> io::Result<()> {
            w.write_all(MAGIC)?;
            w.write_all(&VECTORS_VERSION.to_le_bytes())?;
            w.write_all(&u32_of(self.dim)?.to_le_bytes())?;
            w.write_all(&u32_of(self.model.len())?.to_le_bytes())?;
            w.write_all(self.model.as_bytes())?;
            w.write_all(&(kept.len() as u64).to_le_bytes())?;
            for (hash, at) in kept {
                w.write_all(&hash.to_le_bytes())?;
                for x in &self.data[at..at + self.dim] {
                    w.write_all(&x.to_le_bytes())?;
                }
            }
            Ok(())
        };
        crate::fs::replace::replace_with(path, crate::fs::replace::Durability::Cached, write)
    }
}

fn u32_of(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too large"))
}

/// A cache file's vectors, if it is whole, of this version and of `model`.
fn decode(bytes: &[u8], model: &str) -> Option<Vectors> {
    let mut at = 0usize;
    let mut take = |n: usize| {
        let piece = bytes.get(at..at.checked_add(n)?)?;
        at += n;
        Some(piece)
    };
    if take(8)? != MAGIC {
        return None;
    }
    let u32_at = |b: &[u8]| b.try_into().ok().map(u32::from_le_bytes);
    if u32_at(take(4)?)? != VECTORS_VERSION {
        return None;
    }
    let dim = u32_at(take(4)?)? as usize;
    let name_len = u32_at(take(4)?)? as usize;
    if take(name_len)? != model.as_bytes() || dim > MAX_DIM {
        return None;
    }
    let count = usize::try_from(u64::from_le_bytes(take(8)?.try_into().ok()?)).ok()?;
    let record = 8 + 4 * dim;
    // Exactly the records it says, no more, no fewer: a torn or padded
    // file is not trusted.
    let body = take(count.checked_mul(record)?)?;
    if take(1).is_some() || (dim == 0 && count > 0) {
        return None;
    }
    let mut vectors = Vectors::new(model);
    vectors.dim = dim;
    vectors.data.reserve_exact(count * dim);
    vectors.slots.reserve(count);
    for r in body.chunks_exact(record) {
        let hash = u64::from_le_bytes(r[..8].try_into().ok()?);
        let start = vectors.data.len();
        for x in r[8..].chunks_exact(4) {
            let x = f32::from_le_bytes(x.try_into().ok()?);
            if !x.is_finite() {
                return None;
            }
            vectors.data.push(x);
        }
        if vectors.slots.insert(hash, start).is_some() {
            return None;
        }
    }
    Some(vectors)
}

/// Embeds the texts that have no vector in `vectors` yet (each once, in
/// calls of the embedder's batch size) and adds them; returns how many
/// calls were made (0: all were cached).
///
/// On an error the vectors of the calls that answered stay added. Vectors
/// of another dimension than the cached ones mean another model behind the
/// same name: the cache is emptied, keeps the new vectors, and the call
/// returns [`EmbedError::WrongDimension`]; saved so, the error is reported
/// once and the next refresh embeds the rest. The tests' way into
/// `embed_batches` without a query.
#[cfg(test)]
pub(crate) fn refresh(
    vectors: &mut Vectors,
    embedder: &dyn Embedder,
    texts: &[String],
) -> Result<usize, EmbedError> {
    let items: Vec<(u64, &str)> = texts.iter().map(|t| (text_hash(t), t.as_str())).collect();
    embed_batches(vectors, embedder, &items, None).map(|(calls, _)| calls)
}

/// Embeds `query` and the `items` (cache key, text) not cached yet, in as
/// few calls as the batch size allows: the query rides in the last call,
/// so a query over a warm cache, or one a few memories changed under,
/// costs one call. The items are cached, the query is not. Returns the
/// query's vector and the calls made.
pub fn embed_query(
    vectors: &mut Vectors,
    embedder: &dyn Embedder,
    items: &[(u64, &str)],
    query: &str,
) -> Result<(Vec<f32>, usize), EmbedError> {
    let (calls, vector) = embed_batches(vectors, embedder, items, Some(query))?;
    match vector {
        Some(v) => Ok((v, calls)),
        None => Err(EmbedError::BadResponse("no vector for the query".into())),
    }
}

/// The one loop of [`embed_query`] (and of the tests' `refresh`).
fn embed_batches(
    vectors: &mut Vectors,
    embedder: &dyn Embedder,
    items: &[(u64, &str)],
    query: Option<&str>,
) -> Result<(usize, Option<Vec<f32>>), EmbedError> {
    let mut seen = HashSet::with_hasher(FnvBuild);
    let missing: Vec<(u64, &str)> = items
        .iter()
        .filter(|(h, _)| !vectors.slots.contains_key(h) && seen.insert(*h))
        .copied()
        .collect();
    let per_call = embedder.batch_size().max(1);
    let mut batches: Vec<&[(u64, &str)]> = missing.chunks(per_call).collect();
    // The query needs a call of its own only when the last batch is full.
    if query.is_some() && batches.last().is_none_or(|b| b.len() == per_call) {
        batches.push(&[]);
    }
    let (mut calls, mut query_vector) = (0, None);
    let last = batches.len().saturating_sub(1);
    for (i, batch) in batches.into_iter().enumerate() {
        let mut sent: Vec<String> = batch.iter().map(|(_, t)| (*t).to_string()).collect();
        let with_query = i == last && query.is_some();
        sent.extend(query.filter(|_| with_query).map(str::to_string));
        calls += 1;
        let answer = embedder.embed(&sent)?;
        // Whatever the embedder, the cache takes only checked vectors.
        let dim = check_vectors(sent.len(), &answer)?;
        let mut changed_dim = None;
        if vectors.dim != dim {
            if vectors.dim != 0 {
                changed_dim = Some(vectors.dim);
            }
            vectors.reset(dim);
        }
        for ((hash, _), vector) in batch.iter().zip(&answer) {
            vectors.insert(*hash, vector);
        }
        if with_query {
            query_vector = answer.last().cloned();
        }
        if let Some(expected) = changed_dim {
            return Err(EmbedError::WrongDimension { expected, got: dim });
        }
    }
    Ok((calls, query_vector))
}

/// The cosine similarity of two vectors, in -1..=1; 0 when they differ in
/// length or either is all zeros.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    // Summed in f64: 8,192 products in f32 lose digits a ranking can see.
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    ((dot / (na.sqrt() * nb.sqrt())) as f32).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Answers each text with a vector of `dim` numbers from its length;
    /// records each call's texts.
    struct Fake {
        dim: RefCell<usize>,
        batch: usize,
        calls: RefCell<Vec<Vec<String>>>,
        fail_after: Option<usize>,
    }

    impl Fake {
        fn new(dim: usize, batch: usize) -> Fake {
            Fake {
                dim: RefCell::new(dim),
                batch,
                calls: RefCell::new(Vec::new()),
                fail_after: None,
            }
        }
    }

    impl Embedder for Fake {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            let mut calls = self.calls.borrow_mut();
            if self.fail_after.is_some_and(|n| calls.len() >= n) {
                return Err(EmbedError::Timeout { ms: 1 });
            }
            calls.push(texts.to_vec());
            let dim = *self.dim.borrow();
            Ok(texts
                .iter()
                .map(|t| (0..dim).map(|i| (t.len() + i) as f32).collect())
                .collect())
        }
        fn batch_size(&self) -> usize {
            self.batch
        }
    }

    fn strings(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("text {i}")).collect()
    }

    #[test]
    fn embed_refresh_embeds_only_what_is_missing_in_batches() {
        let fake = Fake::new(3, 2);
        let mut v = Vectors::new("m");
        let mut texts = strings(5);
        texts.push("text 0".into()); // twice: embedded once
        assert_eq!(refresh(&mut v, &fake, &texts).unwrap(), 3);
        assert_eq!(
            fake.calls.borrow().iter().map(Vec::len).collect::<Vec<_>>(),
            [2, 2, 1]
        );
        assert_eq!((v.len(), v.dim(), v.changed()), (5, Some(3), true));
        assert_eq!(v.get("text 4"), Some(&[6.0, 7.0, 8.0][..]));
        assert_eq!(v.get("text 9"), None);
        assert_eq!(refresh(&mut v, &fake, &texts).unwrap(), 0);
        texts.push("new".into());
        assert_eq!(refresh(&mut v, &fake, &texts).unwrap(), 1);
        assert_eq!(fake.calls.borrow().last().unwrap(), &["new".to_string()]);
    }

    #[test]
    fn embed_refresh_keeps_what_answered_before_an_error() {
        let mut fake = Fake::new(2, 2);
        fake.fail_after = Some(1);
        let mut v = Vectors::new("m");
        let e = refresh(&mut v, &fake, &strings(5)).unwrap_err();
        assert_eq!(e, EmbedError::Timeout { ms: 1 });
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn embed_cache_round_trip_and_keep() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        assert_eq!(Vectors::load(&path, "m"), Vectors::new("m"));
        let fake = Fake::new(4, 64);
        let mut v = Vectors::new("m");
        refresh(&mut v, &fake, &strings(10)).unwrap();
        v.save(&path, |_| true).unwrap();
        let loaded = Vectors::load(&path, "m");
        assert!(!loaded.changed());
        assert_eq!(loaded.len(), 10);
        for t in strings(10) {
            assert_eq!(loaded.get(&t), v.get(&t));
        }
        // Saved twice, the same bytes.
        let first = std::fs::read(&path).unwrap();
        loaded.save(&path, |_| true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), first);
        // Another model's name never reads it.
        assert!(Vectors::load(&path, "other").is_empty());
        // Only the texts still there are kept.
        let keep: HashSet<u64> = strings(3).iter().map(|t| text_hash(t)).collect();
        v.save(&path, |h| keep.contains(&h)).unwrap();
        let loaded = Vectors::load(&path, "m");
        assert_eq!(loaded.len(), 3);
        assert!(loaded.get("text 2").is_some() && loaded.get("text 3").is_none());
        // No temp file left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn embed_cache_damaged_or_other_version_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut v = Vectors::new("m");
        refresh(&mut v, &Fake::new(4, 64), &strings(3)).unwrap();
        v.save(&path, |_| true).unwrap();
        let good = std::fs::read(&path).unwrap();
        let header = 8 + 4 + 4 + 4 + 1 + 8;
        let mut cases: Vec<Vec<u8>> = vec![
            good[..good.len() - 1].to_vec(),
            [&good[..], b"x"].concat(),
            b"garbage".to_vec(),
            Vec::new(),
        ];
        let mut other_version = good.clone();
        other_version[8] = 2;
        cases.push(other_version);
        let mut nan = good.clone();
        nan[header + 8..header + 12].copy_from_slice(&f32::NAN.to_le_bytes());
        cases.push(nan);
        let mut count = good.clone();
        count[header - 8] = 200;
        cases.push(count);
        let mut duplicate = good.clone();
        let second = header + 8 + 16;
        let first_hash = good[header..header + 8].to_vec();
        duplicate[second..second + 8].copy_from_slice(&first_hash);
        cases.push(duplicate);
        for (i, bytes) in cases.iter().enumerate() {
            std::fs::write(&path, bytes).unwrap();
            assert!(Vectors::load(&path, "m").is_empty(), "case {i}");
        }
        // And the damaged file is simply replaced by the next save.
        v.save(&path, |_| true).unwrap();
        assert_eq!(Vectors::load(&path, "m").len(), 3);
    }

    #[test]
    fn embed_dimension_change_empties_the_cache_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let fake = Fake::new(4, 2);
        let mut v = Vectors::new("m");
        refresh(&mut v, &fake, &strings(4)).unwrap();
        v.save(&path, |_| true).unwrap();
        // A new model behind the same name.
        *fake.dim.borrow_mut() = 6;
        let mut v = Vectors::load(&path, "m");
        let mut texts = strings(4);
        texts.push("fresh".into());
        let e = refresh(&mut v, &fake, &texts).unwrap_err();
        assert_eq!(
            e,
            EmbedError::WrongDimension {
                expected: 4,
                got: 6
            }
        );
        assert_eq!((v.len(), v.dim()), (1, Some(6)));
        v.save(&path, |_| true).unwrap();
        let mut v = Vectors::load(&path, "m");
        // Reported once: the next refresh embeds the rest.
        assert_eq!(refresh(&mut v, &fake, &texts).unwrap(), 2);
        assert_eq!(v.len(), 5);
        assert!(texts.iter().all(|t| v.get(t).is_some_and(|x| x.len() == 6)));
    }

    #[test]
    fn embed_refresh_refuses_unchecked_answers() {
        struct Short;
        impl Embedder for Short {
            fn embed(&self, _: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
                Ok(vec![vec![1.0]])
            }
        }
        let mut v = Vectors::new("m");
        let e = refresh(&mut v, &Short, &strings(2)).unwrap_err();
        assert!(matches!(e, EmbedError::BadResponse(_)));
        assert!(v.is_empty());
    }

    #[test]
    fn embed_cosine() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 2.0]).abs() < 1e-6);
        assert!((cosine(&[1.0, 1.0], &[-2.0, -2.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[], &[]), 0.0);
    }
}
