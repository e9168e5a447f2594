//! Recall: which memories are relevant to a query, and in what order.
//!
//! Two separate decisions. **Relevance** is a normalized measure that does
//! not grow with query length or store size: the IDF-weighted share of the
//! query's terms that a memory contains (a term found only in the body
//! counts [`BODY_ONLY`]). A memory is relevant when that share reaches the
//! threshold (`--min-score`, default [`DEFAULT_MIN_SCORE`]). **Ranking**
//! among the relevant is BM25F over weighted fields, times small boosts for
//! confidence and recency and a penalty past `review_by`. All of it is
//! documented in `docs/search.md`.

use crate::key::Key;
use crate::memory::{Memory, Summary};
use crate::state::{Cache, Dict, FileEntry};
use crate::text::words;
use crate::time::Date;
use std::collections::BTreeMap;

/// Field weights: name, description, tags, body.
pub const FIELD_WEIGHTS: [u16; 4] = [3, 2, 2, 1];
/// The default relevance threshold.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;
/// How much a query term found only in a memory's body counts toward relevance.
pub const BODY_ONLY: f64 = 0.7;
/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalization.
const B: f64 = 0.75;
/// Days over which the recency boost decays by a factor e.
const RECENCY_DAYS: f64 = 180.0;

/// The terms of a memory for the index: sorted by id, with weighted
/// frequency and field mask, and the weighted length.
pub fn doc_terms(m: &Memory, dict: &mut Dict) -> (Vec<(u32, u16, u8)>, u32) {
    let fields = [
        words(&m.name),
        words(&m.description),
        words(&m.tags.join(" ")),
        words(&m.body),
    ];
    let mut acc: BTreeMap<u32, (u32, u8)> = BTreeMap::new();
    let mut len: u32 = 0;
    for (f, terms) in fields.iter().enumerate() {
        let w = u32::from(FIELD_WEIGHTS[f]);
        len = len.saturating_add(w.saturating_mul(terms.len() as u32));
        for t in terms {
            let e = acc.entry(dict.intern(t)).or_default();
            e.0 = e.0.saturating_add(w);
            e.1 |= 1 << f;
        }
    }
    let terms = acc
        .into_iter()
        .map(|(id, (tf, mask))| (id, tf.min(u32::from(u16::MAX)) as u16, mask))
        .collect();
    (terms, len)
}

/// What to search for and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// At most this many hits.
    pub limit: usize,
    /// Relevance threshold (0..1); 0 shows every memory matching any term.
    pub min_score: f64,
    /// Only this scope.
    pub scope: Option<String>,
    /// Only this type.
    pub kind: Option<String>,
    /// Only memories with this tag.
    pub tag: Option<String>,
    /// Today, for expiry, review dates and recency.
    pub today: Date,
}

/// One relevant memory.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Its key.
    pub key: Key,
    /// Its file.
    pub path: String,
    /// What its frontmatter says.
    pub summary: Summary,
    /// Relevance, 0..1: the IDF-weighted share of query terms it contains.
    pub score: f64,
    /// The ranking score: BM25F times the boosts.
    pub rank: f64,
    /// Its versions disagree (an open conflict).
    pub conflict: bool,
    /// Past its `review_by` date.
    pub stale: bool,
}

/// A memory matching some query term: its path, index entry, and per query
/// term its (weighted tf, field mask) if it has the term.
type Matched<'a> = (&'a String, &'a FileEntry, Vec<Option<(u16, u8)>>);

/// Finds the memories relevant to `query`, most relevant first. Expired
/// memories and files that do not parse are never returned.
pub fn search(cache: &Cache, query: &str, opts: &Options) -> Vec<Hit> {
    let mut q: Vec<String> = words(query);
    q.sort();
    q.dedup();
    if q.is_empty() {
        return Vec::new();
    }
    let ids: Vec<Option<u32>> = q.iter().map(|t| cache.dict.get(t)).collect();
    let today_ms = opts.today.0 * 86_400_000;
    let live = |e: &FileEntry| {
        e.summary
            .as_ref()
            .is_some_and(|s| s.expires.is_none_or(|d| d >= opts.today.0))
    };
    let mut n_docs = 0usize;
    let mut total_len = 0u64;
    let mut df = vec![0usize; q.len()];
    let mut matched: Vec<Matched<'_>> = Vec::new();
    for (path, e) in &cache.files {
        if !live(e) {
            continue;
        }
        n_docs += 1;
        total_len += u64::from(e.len);
        let found: Vec<Option<(u16, u8)>> = ids
            .iter()
            .map(|id| {
                let id = (*id)?;
                e.terms
                    .binary_search_by_key(&id, |t| t.0)
                    .ok()
                    .map(|i| (e.terms[i].1, e.terms[i].2))
            })
            .collect();
        if found.iter().all(Option::is_none) {
            continue;
        }
        for (i, f) in found.iter().enumerate() {
            if f.is_some() {
                df[i] += 1;
            }
        }
        matched.push((path, e, found));
    }
    let n = n_docs.max(1) as f64;
    let idf: Vec<f64> = df
        .iter()
        .map(|&d| (1.0 + (n - d as f64 + 0.5) / (d as f64 + 0.5)).ln())
        .collect();
    // A CJK query is cut into overlapping bigrams, so a bigram spanning two
    // words ("五可" in "周五可以") matches nothing. An unseen bigram sharing a
    // character with a bigram the store does have is such a seam: it does
    // not count against relevance.
    let seen_cjk: Vec<char> = q
        .iter()
        .zip(&df)
        .filter(|(t, d)| **d > 0 && t.chars().all(crate::text::is_cjk))
        .flat_map(|(t, _)| t.chars())
        .collect();
    let counts: Vec<bool> = q
        .iter()
        .zip(&df)
        .map(|(t, d)| {
            let seam = *d == 0
                && t.chars().count() == 2
                && t.chars().all(crate::text::is_cjk)
                && t.chars().any(|c| seen_cjk.contains(&c));
            !seam
        })
        .collect();
    let idf_total: f64 = idf
        .iter()
        .zip(&counts)
        .filter(|(_, c)| **c)
        .map(|(i, _)| i)
        .sum();
    let avg_len = (total_len as f64 / n).max(1.0);
    let mut hits = Vec::new();
    for (path, e, found) in matched {
        let Some(summary) = e.summary.as_ref() else {
            continue;
        };
        let Some(key) = Key::from_rel_path(path) else {
            continue;
        };
        if opts.scope.as_ref().is_some_and(|s| *s != key.scope)
            || opts.kind.as_ref().is_some_and(|k| *k != summary.kind)
            || opts
                .tag
                .as_ref()
                .is_some_and(|t| !summary.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
        {
            continue;
        }
        let mut covered = 0.0;
        let mut bm25 = 0.0;
        for (i, f) in found.iter().enumerate() {
            let Some((tf, mask)) = f else { continue };
            covered += idf[i] * if *mask == 8 { BODY_ONLY } else { 1.0 };
            let tf = f64::from(*tf);
            let norm = K1 * (1.0 - B + B * f64::from(e.len) / avg_len);
            bm25 += idf[i] * tf * (K1 + 1.0) / (tf + norm);
        }
        let score = if idf_total > 0.0 {
            covered / idf_total
        } else {
            0.0
        };
        if score <= 0.0 || score + 1e-9 < opts.min_score {
            continue;
        }
        let stale = summary.review_by.is_some_and(|d| d < opts.today.0);
        let age_days = ((today_ms - summary.updated).max(0) as f64) / 86_400_000.0;
        let recency = if summary.updated > 0 {
            (-age_days / RECENCY_DAYS).exp()
        } else {
            0.0
        };
        let boost = (0.75 + 0.25 * summary.confidence)
            * (1.0 + 0.1 * recency)
            * if stale { 0.8 } else { 1.0 };
        hits.push(Hit {
            conflict: cache.keys.get(&key.to_string()).is_some_and(|k| k.conflict),
            path: path.clone(),
            summary: summary.clone(),
            score,
            rank: bm25 * boost,
            stale,
            key,
        });
    }
    hits.sort_by(|a, b| {
        b.rank
            .partial_cmp(&a.rank)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.key.cmp(&b.key))
    });
    hits.truncate(opts.limit);
    hits
}

/// A rough token count for budgets: a quarter token per ASCII character,
/// one per other character (CJK is about a token a character), rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(a, o), c| {
        if c.is_ascii() {
            (a + 1, o)
        } else {
            (a, o + 1)
        }
    });
    ascii.div_ceil(4) + other
}
