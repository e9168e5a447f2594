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

use crate::index::layout::View;
use crate::model::key::Key;
use crate::model::memory::{Memory, Summary};
use crate::model::text::words;
use crate::model::time::Date;

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

/// Terms with their weighted frequency and field mask.
pub type Terms = std::collections::HashMap<String, (u16, u8), crate::model::fingerprint::FnvBuild>;

/// A memory's terms: weighted frequency and mask of the fields each occurs
/// in (bit 0 name, 1 description, 2 tags, 3 body), and the weighted length.
pub fn term_counts(m: &Memory) -> (Terms, u32) {
    let fields = [
        words(&m.name),
        words(&m.description),
        words(&m.tags.join(" ")),
        words(&m.body),
    ];
    let mut acc: Terms = Terms::default();
    let mut len: u32 = 0;
    for (f, terms) in fields.into_iter().enumerate() {
        let w = FIELD_WEIGHTS[f];
        len = len.saturating_add(u32::from(w).saturating_mul(terms.len() as u32));
        for t in terms {
            let e = acc.entry(t).or_default();
            e.0 = e.0.saturating_add(w);
            e.1 |= 1 << f;
        }
    }
    (acc, len)
}

/// A memory file read since the index was written (or not in it yet).
#[derive(Debug, Clone)]
pub struct Fresh {
    /// Its path.
    pub path: String,
    /// What it says, if it parsed.
    pub summary: Option<Summary>,
    /// Why it did not.
    pub error: Option<String>,
    /// Its terms ([`term_counts`]).
    pub terms: Terms,
    /// Its weighted length.
    pub len: u32,
}

/// What a search runs over: the index as written, minus the files that
/// changed since, plus those files as they are now.
#[derive(Debug)]
pub struct Corpus {
    /// The persistent index, read in place.
    pub view: View,
    /// Index entries to ignore (changed or gone), by position.
    pub skip: Vec<bool>,
    /// Files read now.
    pub fresh: Vec<Fresh>,
}

impl Corpus {
    /// A corpus of the index alone.
    pub fn of(view: View) -> Corpus {
        Corpus {
            skip: vec![false; view.len()],
            view,
            fresh: Vec::new(),
        }
    }
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

/// A document of a [`Corpus`]: an index position or a fresh file.
#[derive(Clone, Copy)]
enum Doc<'a> {
    Indexed(usize),
    Fresh(&'a Fresh),
}

/// A query term a document has: its position in the query, weighted tf and
/// field mask.
#[derive(Clone, Copy, Default)]
struct Found {
    term: u32,
    tf: u16,
    mask: u8,
}

/// The query terms each indexed document has, read from the terms' posting
/// lists and grouped by document (a counting sort: no map, no allocation
/// per document). Each group is in query-term order.
struct Postings {
    /// Where each document's group starts in `found`; one more than docs.
    start: Vec<u32>,
    found: Vec<Found>,
}

impl Postings {
    fn of(view: &View, ids: &[Option<u32>]) -> Postings {
        let lists: Vec<Vec<(u32, u16, u8)>> = ids
            .iter()
            .map(|id| id.map(|id| view.postings(id)).unwrap_or_default())
            .collect();
        let mut start = vec![0u32; view.len() + 1];
        for &(doc, _, _) in lists.iter().flatten() {
            start[doc as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut found = vec![Found::default(); lists.iter().map(Vec::len).sum()];
        for (term, list) in lists.iter().enumerate() {
            for &(doc, tf, mask) in list {
                let at = &mut next[doc as usize];
                found[*at as usize] = Found {
                    term: term as u32,
                    tf,
                    mask,
                };
                *at += 1;
            }
        }
        Postings { start, found }
    }

    /// The query terms indexed document `i` has.
    fn of_doc(&self, i: usize) -> &[Found] {
        &self.found[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Finds the memories relevant to `query`, most relevant first. Expired
/// memories and files that do not parse are never returned.
pub fn search<'c>(corpus: &'c Corpus, query: &str, opts: &Options) -> Vec<Hit> {
    let mut q: Vec<String> = words(query);
    q.sort();
    q.dedup();
    if q.is_empty() {
        return Vec::new();
    }
    let view = &corpus.view;
    let ids: Vec<Option<u32>> = q.iter().map(|t| view.lookup(t)).collect();
    // Each query term's posting list, read where it lies: a query never
    // touches the postings of the terms it does not have.
    let postings = Postings::of(view, &ids);
    // Fresh files' query terms, as the index's postings give them.
    let fresh_found: Vec<Vec<Found>> = corpus
        .fresh
        .iter()
        .map(|f| {
            q.iter()
                .enumerate()
                .filter_map(|(term, t)| {
                    let &(tf, mask) = f.terms.get(t)?;
                    Some(Found {
                        term: term as u32,
                        tf,
                        mask,
                    })
                })
                .collect()
        })
        .collect();
    let indexed = (0..view.len()).filter_map(|i| {
        let r = view.rec(i);
        let live = !corpus.skip[i] && r.valid && r.expires >= opts.today.0;
        live.then(|| (Doc::Indexed(i), r.len, postings.of_doc(i)))
    });
    let fresh = corpus
        .fresh
        .iter()
        .zip(&fresh_found)
        .filter_map(|(f, found)| {
            let expires = f.summary.as_ref()?.expires;
            let live = expires.is_none_or(|d| d >= opts.today.0);
            live.then_some((Doc::Fresh(f), f.len, found.as_slice()))
        });
    let mut n_docs = 0usize;
    let mut total_len = 0u64;
    let mut df = vec![0usize; q.len()];
    // The documents matching some term: weighted length and terms found.
    let mut matched: Vec<(Doc<'c>, u32, &[Found])> = Vec::new();
    for (doc, len, found) in indexed.chain(fresh) {
        n_docs += 1;
        total_len += u64::from(len);
        if found.is_empty() {
            continue;
        }
        for f in found {
            df[f.term as usize] += 1;
        }
        matched.push((doc, len, found));
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
        .filter(|(t, d)| **d > 0 && t.chars().all(crate::model::text::is_cjk))
        .flat_map(|(t, _)| t.chars())
        .collect();
    let counts: Vec<bool> = q
        .iter()
        .zip(&df)
        .map(|(t, d)| {
            let seam = *d == 0
                && t.chars().count() == 2
                && t.chars().all(crate::model::text::is_cjk)
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
    let today_ms = opts.today.0 * 86_400_000;
    let conflicts: std::collections::HashSet<&str> =
        view.head.conflicts.iter().map(String::as_str).collect();
    // Score and rank from what the index records; decode summaries only
    // for the memories shown.
    struct Ranked<'c> {
        doc: Doc<'c>,
        score: f64,
        rank: f64,
        stale: bool,
    }
    let mut ranked = Vec::new();
    for (doc, len, found) in matched {
        let mut covered = 0.0;
        let mut bm25 = 0.0;
        let norm = K1 * (1.0 - B + B * f64::from(len) / avg_len);
        for f in found {
            let idf = idf[f.term as usize];
            covered += idf * if f.mask == 8 { BODY_ONLY } else { 1.0 };
            let tf = f64::from(f.tf);
            bm25 += idf * tf * (K1 + 1.0) / (tf + norm);
        }
        let score = if idf_total > 0.0 {
            covered / idf_total
        } else {
            0.0
        };
        if score <= 0.0 || score + 1e-9 < opts.min_score {
            continue;
        }
        let (confidence, updated, review_by) = match doc {
            Doc::Indexed(i) => {
                let r = view.rec(i);
                (r.confidence, r.updated, r.review_by)
            }
            Doc::Fresh(f) => f.summary.as_ref().map_or((1.0, 0, i64::MAX), |s| {
                (s.confidence, s.updated, s.review_by.unwrap_or(i64::MAX))
            }),
        };
        let stale = review_by < opts.today.0;
        let age_days = ((today_ms - updated).max(0) as f64) / 86_400_000.0;
        let recency = if updated > 0 {
            (-age_days / RECENCY_DAYS).exp()
        } else {
            0.0
        };
        let boost =
            (0.75 + 0.25 * confidence) * (1.0 + 0.1 * recency) * if stale { 0.8 } else { 1.0 };
        ranked.push(Ranked {
            doc,
            score,
            rank: bm25 * boost,
            stale,
        });
    }
    let path_of = |d: &Doc<'c>| -> &'c str {
        match *d {
            Doc::Indexed(i) => view.path(i),
            Doc::Fresh(f) => &f.path,
        }
    };
    let order = |a: &Ranked<'c>, b: &Ranked<'c>| {
        // A total order, as sorting and selecting need (a NaN rank, were
        // there one, would otherwise make the order inconsistent).
        b.rank
            .total_cmp(&a.rank)
            .then_with(|| path_of(&a.doc).cmp(path_of(&b.doc)))
    };
    // The hit a ranked memory makes, unless the filters pass over it.
    let shown = |r: &Ranked<'c>| -> Option<Hit> {
        let path = path_of(&r.doc);
        let key = Key::from_rel_path(path)?;
        if opts.scope.as_ref().is_some_and(|s| *s != key.scope) {
            return None;
        }
        let summary = match r.doc {
            Doc::Indexed(i) => view.entry(i).0,
            Doc::Fresh(f) => f.summary.clone(),
        }?;
        if opts.kind.as_ref().is_some_and(|k| *k != summary.kind)
            || opts
                .tag
                .as_ref()
                .is_some_and(|t| !summary.tags.iter().any(|x| x.eq_ignore_ascii_case(t)))
        {
            return None;
        }
        Some(Hit {
            conflict: conflicts.contains(key.to_string().as_str()),
            path: path.to_string(),
            summary,
            score: r.score,
            rank: r.rank,
            stale: r.stale,
            key,
        })
    };
    let mut hits = Vec::new();
    // Only the first hits are shown, but filters can pass over ranked
    // memories: sort a batch of the best at a time rather than them all.
    let batch = opts.limit.saturating_mul(2).max(64);
    let mut rest = &mut ranked[..];
    while hits.len() < opts.limit && !rest.is_empty() {
        let take = batch.min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, order);
        }
        let (best, after) = rest.split_at_mut(take);
        best.sort_by(order);
        for r in best.iter() {
            if hits.len() >= opts.limit {
                break;
            }
            if let Some(hit) = shown(r) {
                hits.push(hit);
            }
        }
        rest = after;
    }
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
