//! Relevance and ranking: which memories are relevant to a query, and in
//! what order. (`recall` and `context`, in `ops::recall`, search with it.)
//!
//! Two separate decisions. **Relevance** is a normalized measure that does
//! not grow with query length or store size: the IDF-weighted share of the
//! query's terms that a memory contains. The store answers when its best
//! memory's share reaches the threshold (`--min-score`, default
//! [`DEFAULT_MIN_SCORE`]), or when one memory holds [`DISTINCT_WORDS`] of
//! the query's words that no other has and a share of at least
//! [`DISTINCT_SHARE`] of the threshold (a long memory only with what one
//! passage of it holds: [`crate::search::passage`]); then every memory
//! with at least [`RELATIVE`] of
//! the best one's share is relevant, so a question whose answer spans
//! several memories keeps each of them. Notes of the logs are documents
//! too, ranked as memories of confidence
//! [`NOTE_CONFIDENCE`](crate::search::document::NOTE_CONFIDENCE). **Ranking**
//! among the relevant is BM25F over weighted fields, times small boosts for
//! confidence and recency and a penalty past `review_by`. All of it is
//! documented in `docs/search.md`.

use crate::index::{Corpus, NoteDoc, NoteSource, OpenIndex, Terms};
use crate::model::key::Key;
use crate::model::text::words;
use crate::model::time::Date;
use crate::search::document::{Doc, Standing};
use crate::search::results::{Hit, NoteHit, Options, Results};
use crate::search::shortlist::{Ranked, Shortlist};
use std::cmp::Ordering;
use std::collections::HashSet;

/// The default relevance threshold: the best memory must cover this share
/// of the query for the store to answer at all.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;
/// Once the store answers, a memory is relevant when it covers at least
/// this share of what the best one covers.
pub const RELATIVE: f64 = 0.3;
/// The store also answers when one document holds this many of the
/// query's words that no other live document has ...
pub const DISTINCT_WORDS: usize = 2;
/// ... and covers at least this share of the threshold (a tenth of the
/// query at the default): two words only it has are evidence that it is
/// what the question is about, however many other words the question has.
pub const DISTINCT_SHARE: f64 = 1.0 / 3.0;
/// What a CJK bigram no memory has weighs against relevance, as a share
/// of its idf (see [`Weights::of`]).
const UNKNOWN_CJK_BIGRAM: f64 = 0.5;
/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalization.
const B: f64 = 0.75;

/// Finds the memories (and, with [`Options::notes`], the notes) relevant
/// to `query`, most relevant first. Expired memories and files that do
/// not parse are never returned.
///
/// `texts` gives a memory file's text by path, for the passage gate
/// ([`crate::search::passage`]); a file it cannot give passes the gate.
pub fn search(
    corpus: &Corpus,
    query: &str,
    opts: &Options,
    texts: &dyn Fn(&str) -> Option<String>,
) -> Results {
    let terms = query_terms(query);
    if terms.is_empty() {
        return Results::default();
    }
    let view = &corpus.index;
    let ids: Vec<Option<u32>> = terms.iter().map(|t| view.lookup(t)).collect();
    let fresh_found = found_in(corpus.fresh.iter().map(|f| &f.terms), &terms);
    // The team's text is searched always; notes unless left out.
    let notes: Vec<&NoteDoc> = corpus
        .team
        .iter()
        .chain(corpus.notes.iter().filter(|_| opts.notes))
        .collect();
    let note_found = found_in(notes.iter().map(|n| &n.terms), &terms);
    let unmatched = |found: &[Vec<Found>]| found.iter().all(Vec::is_empty);
    if ids.iter().all(Option::is_none) && unmatched(&fresh_found) && unmatched(&note_found) {
        // No document has a query term: nothing to count or rank (a query
        // about what the store does not know costs no pass over it).
        return Results::default();
    }
    // Each query term's posting list, read where it lies: a query never
    // touches the postings of the terms it does not have.
    let postings = Postings::of(view, &ids);
    let live = Live::of(
        corpus,
        &postings,
        &fresh_found,
        Notes {
            tail: &notes,
            tail_found: &note_found,
            counted: opts.notes,
        },
        terms.len(),
        opts.today,
    );
    let weights = Weights::of(&terms, &live);
    let gate = Gate {
        terms: &terms,
        texts,
    };
    let (ranked, best, answered) = rank_relevant(view, live.matched, &weights, opts, &gate);
    let mut found = first_shown(view, ranked, opts);
    found.best = best;
    found.answered = answered;
    found
}

/// A query's distinct terms, sorted.
fn query_terms(query: &str) -> Vec<String> {
    let mut terms = words(query);
    terms.sort();
    terms.dedup();
    terms
}

/// A query term a document has: its position in the query and weighted tf.
/// (Where it occurs no longer matters: a term counts toward relevance in
/// any field, and the field weights are in the tf.)
#[derive(Clone, Copy, Default)]
struct Found {
    term: u32,
    tf: u16,
}

/// The query terms each indexed document has, read from the terms' posting
/// lists and grouped by document, only the documents that have one taking
/// room: a query's memory follows its matches, not the store (an array
/// over every document cost a page fault per thousand of them, on every
/// query). Each group is in query-term order.
struct Postings {
    /// The documents with a query term, ascending; past the memory files,
    /// the index's notes.
    docs: Vec<u32>,
    /// Where each one's group starts in `found`; one more than `docs`.
    start: Vec<u32>,
    found: Vec<Found>,
}

impl Postings {
    fn of(view: &OpenIndex, ids: &[Option<u32>]) -> Postings {
        let lists: Vec<_> = ids
            .iter()
            .filter_map(|id| *id)
            .map(|id| view.postings_of(id))
            .collect();
        let terms: Vec<u32> = (0..ids.len() as u32)
            .filter(|&t| ids[t as usize].is_some())
            .collect();
        // Which documents have a query term, a bit each (postings name
        // only documents of the index: `postings_of`).
        let mut bits = vec![0u64; (view.len() + view.note_count()).div_ceil(64)];
        for (doc, _, _) in lists.iter().cloned().flatten() {
            if let Some(word) = bits.get_mut(doc as usize / 64) {
                *word |= 1 << (doc % 64);
            }
        }
        let mut docs = Vec::with_capacity(bits.iter().map(|w| w.count_ones() as usize).sum());
        for (w, &word) in bits.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                docs.push(w as u32 * 64 + rest.trailing_zeros());
                rest &= rest - 1;
            }
        }
        drop(bits);
        // Each list names a subset of `docs` in the same order: a cursor
        // walks `docs` to each one's place (a list's walk is at most
        // `docs` long). First each group's count, at the place after its
        // own; summed, each group's start.
        let mut start = vec![0u32; docs.len() + 1];
        for list in &lists {
            let mut at = 0;
            for (doc, _, _) in list.clone() {
                while docs.get(at).is_some_and(|&d| d < doc) {
                    at += 1;
                }
                start[at + 1] += 1;
            }
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut found = vec![Found::default(); start[start.len() - 1] as usize];
        // Each group filled from its start, the start moved along as a
        // cursor: it ends at the next group's start, and one shift puts
        // every start back.
        for (list, &term) in lists.into_iter().zip(&terms) {
            let mut at = 0;
            for (doc, tf, _) in list {
                while docs.get(at).is_some_and(|&d| d < doc) {
                    at += 1;
                }
                let next = &mut start[at];
                found[*next as usize] = Found { term, tf };
                *next += 1;
            }
        }
        start.rotate_right(1);
        start[0] = 0;
        Postings { docs, start, found }
    }

    /// Each document with a query term from document `first` on, in
    /// order, with its terms.
    fn from(&self, first: usize) -> impl Iterator<Item = (usize, &[Found])> + '_ {
        let at = self.docs.partition_point(|&d| (d as usize) < first);
        (at..self.docs.len()).map(|k| {
            let group = &self.found[self.start[k] as usize..self.start[k + 1] as usize];
            (self.docs[k] as usize, group)
        })
    }
}

/// The query terms of documents read now (fresh files, notes), as the
/// index's postings give them.
fn found_in<'a>(docs: impl Iterator<Item = &'a Terms>, terms: &[String]) -> Vec<Vec<Found>> {
    docs.map(|doc| {
        terms
            .iter()
            .enumerate()
            .filter_map(|(term, t)| {
                let &(tf, _) = doc.get(t)?;
                Some(Found {
                    term: term as u32,
                    tf,
                })
            })
            .collect()
    })
    .collect()
}

/// A live document that has some query term.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    doc: Doc<'a>,
    /// Its weighted length.
    len: u32,
    /// The query terms it has.
    found: &'a [Found],
}

/// The live documents (parsed, not expired, not replaced by a fresh read),
/// as BM25 counts them: how many and their total weighted length, in how
/// many each query term occurs, and those that have some query term.
struct Live<'a> {
    docs: usize,
    total_len: u64,
    /// Document frequency of each query term.
    df: Vec<usize>,
    /// Indexed documents first, then fresh ones, each in corpus order.
    matched: Vec<Candidate<'a>>,
}

impl<'a> Live<'a> {
    fn of(
        corpus: &'a Corpus,
        postings: &'a Postings,
        fresh_found: &'a [Vec<Found>],
        notes: Notes<'a>,
        terms: usize,
        today: Date,
    ) -> Live<'a> {
        let view = &corpus.index;
        let (docs, total_len) = indexed_totals(corpus, today);
        let indexed = indexed_matches(corpus, postings, today);
        let fresh = corpus
            .fresh
            .iter()
            .zip(fresh_found)
            .filter_map(|(f, found)| {
                let expires = f.summary.as_ref()?.expires;
                let live = expires.is_none_or(|d| d >= today.0);
                live.then_some(Candidate {
                    doc: Doc::Fresh(f),
                    len: f.len,
                    found: found.as_slice(),
                })
            });
        // The index's notes that have a query term (their records are
        // read only if shown).
        let indexed_notes = notes
            .counted
            .then(|| indexed_notes(view, postings))
            .into_iter()
            .flatten();
        let tail_notes = notes
            .tail
            .iter()
            .zip(notes.tail_found)
            .map(|(n, found)| Candidate {
                doc: Doc::Note(n),
                len: n.len,
                found: found.as_slice(),
            });
        // Every note of the index counts, not only those read: their
        // number and lengths are in the index's head.
        let mut live = Live {
            docs: docs + if notes.counted { view.note_count() } else { 0 },
            total_len: total_len + if notes.counted { view.notes_len() } else { 0 },
            df: vec![0; terms],
            // Sized once: grown by doubling, the copies touched twice the
            // memory (a page fault per hundred matches).
            matched: Vec::with_capacity(
                postings.docs.len() + corpus.fresh.len() + notes.tail.len(),
            ),
        };
        let mut add = |c: Candidate<'a>| {
            if c.found.is_empty() {
                return;
            }
            for f in c.found {
                live.df[f.term as usize] += 1;
            }
            live.matched.push(c);
        };
        // Counted above.
        indexed.for_each(&mut add);
        // Counted here.
        let mut read_now = (0, 0);
        for c in fresh.chain(tail_notes) {
            read_now.0 += 1;
            read_now.1 += u64::from(c.len);
            add(c);
        }
        // Counted above.
        indexed_notes.for_each(&mut add);
        live.docs += read_now.0;
        live.total_len += read_now.1;
        live
    }
}

/// How many of the index's memory files are live on `today`, and their
/// weighted lengths summed: the index's totals, less the files a fresh
/// read replaces.
fn indexed_totals(corpus: &Corpus, today: Date) -> (usize, u64) {
    let view = &corpus.index;
    let (mut docs, mut total_len) = view.live_totals(today.0);
    let skipped = corpus.skip.iter().enumerate().filter(|(_, &skip)| skip);
    for (i, _) in skipped {
        if let Some(len) = view.live_len(i, today.0) {
            docs = docs.saturating_sub(1);
            total_len = total_len.saturating_sub(u64::from(len));
        }
    }
    (docs, total_len)
}

/// The index's live memory files that have a query term, as candidates.
fn indexed_matches<'a>(
    corpus: &'a Corpus,
    postings: &'a Postings,
    today: Date,
) -> impl Iterator<Item = Candidate<'a>> {
    let view = &corpus.index;
    let mut live_len = view.live_len_ascending(today.0);
    (postings.from(0))
        .take_while(|&(i, _)| i < view.len())
        .filter_map(move |(i, found)| {
            let len = live_len(i).filter(|_| !corpus.skip[i])?;
            Some(Candidate {
                doc: Doc::Indexed(i),
                len,
                found,
            })
        })
}

/// The index's notes that have a query term, as candidates.
fn indexed_notes<'a>(
    view: &'a OpenIndex,
    postings: &'a Postings,
) -> impl Iterator<Item = Candidate<'a>> {
    let first_note = view.len();
    (postings.from(first_note)).filter_map(move |(doc, found)| {
        let j = doc - first_note;
        Some(Candidate {
            doc: Doc::IndexedNote(j),
            len: view.note_len(j)?,
            found,
        })
    })
}

/// The notes a search reads: the index's that have a query term (the
/// postings name them), and those of the logs' tail.
struct Notes<'a> {
    tail: &'a [&'a NoteDoc],
    tail_found: &'a [Vec<Found>],
    /// The search counts the notes at all (all the index's in `N`) and
    /// reads the index's.
    counted: bool,
}

/// The fewest documents IDF assumes (measured: no change on the
/// evaluation sets, whose stores are larger; see docs/search.md).
const MIN_DOCS: f64 = 20.0;

/// What the query's terms weigh in the live documents.
struct Weights {
    /// Each query term's IDF.
    idf: Vec<f64>,
    /// The IDF of the terms that count toward relevance: its denominator.
    idf_total: f64,
    /// The average weighted document length (at least 1).
    avg_len: f64,
    /// Each query term is a word (not a CJK bigram or character) that
    /// exactly one live document has.
    distinct: Vec<bool>,
}

impl Weights {
    fn of(terms: &[String], live: &Live) -> Weights {
        let n = live.docs.max(1) as f64;
        // IDF as if the store held at least MIN_DOCS documents: in a young
        // store a word no memory has would otherwise outweigh several that
        // one has (with one memory, 4.8 to 1), and "which database do we
        // use" would not find "The database is Postgres 16".
        let n_idf = n.max(MIN_DOCS);
        let idf: Vec<f64> = live
            .df
            .iter()
            .map(|&d| (1.0 + (n_idf - d as f64 + 0.5) / (d as f64 + 0.5)).ln())
            .collect();
        let counts = counted(terms, &live.df);
        let idf_total: f64 = idf
            .iter()
            .zip(&counts)
            .zip(terms.iter().zip(&live.df))
            .filter(|((_, c), _)| **c)
            .map(|((i, _), (t, &df))| {
                // A CJK word the store lacks is a bigram and the seams at
                // its edges that share no character with a known bigram:
                // its bigrams count half, as about one English word.
                if df == 0 && t.chars().all(crate::model::text::is_cjk) {
                    i * UNKNOWN_CJK_BIGRAM
                } else {
                    *i
                }
            })
            .sum();
        // A CJK term is a bigram: one rare word gives two, so CJK terms
        // are not counted as distinct words.
        let distinct = terms
            .iter()
            .zip(&live.df)
            .map(|(t, &df)| df == 1 && !t.chars().any(crate::model::text::is_cjk))
            .collect();
        Weights {
            idf,
            idf_total,
            avg_len: (live.total_len as f64 / n).max(1.0),
            distinct,
        }
    }

    /// How many of the query's words a document with these terms has that
    /// no other live document has.
    fn distinct_words(&self, found: &[Found]) -> usize {
        found
            .iter()
            .filter(|f| self.distinct[f.term as usize])
            .count()
    }

    /// Relevance, 0..1: the IDF-weighted share of the query's terms that a
    /// document with these terms has.
    fn relevance(&self, found: &[Found]) -> f64 {
        let mut covered = 0.0;
        for f in found {
            covered += self.idf[f.term as usize];
        }
        if self.idf_total > 0.0 {
            covered / self.idf_total
        } else {
            0.0
        }
    }

    /// BM25F of a document of weighted length `len` with these terms.
    fn bm25(&self, len: u32, found: &[Found]) -> f64 {
        let norm = K1 * (1.0 - B + B * f64::from(len) / self.avg_len);
        let mut bm25 = 0.0;
        for f in found {
            let tf = f64::from(f.tf);
            bm25 += self.idf[f.term as usize] * tf * (K1 + 1.0) / (tf + norm);
        }
        bm25
    }
}

/// Which query terms count toward relevance: all but the CJK seams.
fn counted(terms: &[String], df: &[usize]) -> Vec<bool> {
    // A CJK query is cut into overlapping bigrams, so a bigram spanning two
    // words ("五可" in "周五可以") matches nothing. An unseen bigram sharing a
    // character with a bigram the store does have is such a seam: it does
    // not count against relevance.
    let seen_cjk: Vec<char> = terms
        .iter()
        .zip(df)
        .filter(|(t, d)| **d > 0 && t.chars().all(crate::model::text::is_cjk))
        .flat_map(|(t, _)| t.chars())
        .collect();
    terms
        .iter()
        .zip(df)
        .map(|(t, d)| {
            let seam = *d == 0
                && t.chars().count() == 2
                && t.chars().all(crate::model::text::is_cjk)
                && t.chars().any(|c| seen_cjk.contains(&c));
            !seam
        })
        .collect()
}

/// The candidates, with their ranking scores, in candidate order, and
/// whether the store answers: only if the best reaches `opts.min_score`
/// (the store knows what the query asks); then those at least
/// [`RELATIVE`] as relevant as the best are relevant (a question over
/// several memories keeps each). With [`Options::weaker`] every candidate
/// is kept, marked; without, only the relevant.
fn rank_relevant<'a>(
    view: &OpenIndex,
    matched: Vec<Candidate<'a>>,
    weights: &Weights,
    opts: &Options,
    gate: &Gate,
) -> (Shortlist<'a>, f64, bool) {
    let scores: Vec<f64> = matched.iter().map(|c| weights.relevance(c.found)).collect();
    let best = scores.iter().copied().fold(0.0, f64::max);
    let answers = gate.answers(view, &matched, &scores, weights, opts.min_score);
    if !answers && !opts.weaker {
        return (Shortlist::of(view, Vec::new(), opts), best, false);
    }
    let cut = if opts.min_score > 0.0 {
        RELATIVE * best
    } else {
        0.0
    };
    let unboosted = matched
        .into_iter()
        .zip(scores)
        .filter_map(|(c, score)| {
            let relevant = answers && score > 0.0 && score + 1e-9 >= cut;
            if score <= 0.0 || (!relevant && !opts.weaker) {
                return None;
            }
            Some(Ranked {
                doc: c.doc,
                score,
                rank: weights.bm25(c.len, c.found),
                stale: false,
                relevant,
            })
        })
        .collect();
    (Shortlist::of(view, unboosted, opts), best, answers)
}

/// A share reaches a threshold: a hair of tolerance, so a share equal to
/// it but for rounding reaches it.
fn reaches(score: f64, min: f64) -> bool {
    score > 0.0 && score + 1e-9 >= min
}

/// The passage gate looks at this many documents at most, best share
/// first: past that many long memories covering the query only here and
/// there, the store does not know it.
const PASSAGE_READS: usize = 16;

/// The passage gate ([`crate::search::passage`]): the query's terms, and
/// where the memory files' texts come from.
struct Gate<'q> {
    terms: &'q [String],
    texts: &'q dyn Fn(&str) -> Option<String>,
}

impl Gate<'_> {
    /// Whether the store answers: some document reaches `min` by its
    /// share, or holds [`DISTINCT_WORDS`] words only it has and
    /// [`DISTINCT_SHARE`] of `min`; a long memory must do so within one
    /// passage of its body. Short memories (a passage is all of one), notes
    /// (one observation each), queries with CJK terms and `min` 0 are not
    /// gated.
    fn answers(
        &self,
        view: &OpenIndex,
        matched: &[Candidate],
        scores: &[f64],
        weights: &Weights,
        min: f64,
    ) -> bool {
        let enough = |share: f64, distinct: usize| {
            reaches(share, min)
                || (distinct >= DISTINCT_WORDS && reaches(share, min * DISTINCT_SHARE))
        };
        // Best share first; only the first PASSAGE_READS are read, so only
        // they are kept, in order, as the matches go by (a common word
        // matches tens of thousands). Ties in matched order, as a stable
        // sort of them all had it.
        let by_share = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
        let mut order: Vec<usize> = Vec::with_capacity(PASSAGE_READS + 1);
        let mut any = false;
        for i in 0..matched.len() {
            if !enough(scores[i], weights.distinct_words(matched[i].found)) {
                continue;
            }
            any = true;
            let full = order.len() == PASSAGE_READS;
            if full && order.last().is_some_and(|last| by_share(last, &i).is_lt()) {
                continue;
            }
            let at = order.partition_point(|kept| by_share(kept, &i).is_lt());
            order.insert(at, i);
            order.truncate(PASSAGE_READS);
        }
        let cjk = |t: &String| t.chars().any(crate::model::text::is_cjk);
        if !any || min <= 0.0 || self.terms.iter().any(cjk) {
            return any;
        }
        for i in order {
            let c = &matched[i];
            let path = match c.doc {
                Doc::Indexed(j) => view.path(j),
                Doc::Fresh(f) => f.path.as_str(),
                Doc::Note(_) | Doc::IndexedNote(_) => return true,
            };
            // The weighted length bounds the body's words.
            if c.len as usize <= crate::search::passage::PASSAGE_WORDS {
                return true;
            }
            let passage = (self.texts)(path).and_then(|text| {
                crate::search::passage::best(
                    &text,
                    self.terms,
                    &weights.idf,
                    weights.idf_total,
                    &weights.distinct,
                )
            });
            match passage {
                Some(p) if !enough(p.share, p.distinct) => continue,
                // A file it cannot read or parse now passes, as it did.
                _ => return true,
            }
        }
        false
    }
}

/// The relevant first, then best rank first, then by path. A total order, as sorting and selecting
/// need (a NaN rank, were there one, would otherwise make the order
/// inconsistent).
fn best_first(view: &OpenIndex, a: &Ranked, b: &Ranked) -> Ordering {
    b.relevant
        .cmp(&a.relevant)
        .then_with(|| b.rank.total_cmp(&a.rank))
        .then_with(|| a.doc.path(view).cmp(b.doc.path(view)))
}

/// The first `opts.limit` hits, best first, among the ranked memories and
/// notes the filters keep.
fn first_shown(view: &OpenIndex, mut shortlist: Shortlist, opts: &Options) -> Results {
    let unboosted = shortlist.boosted < shortlist.ranked.len();
    let found = first_of(view, shortlist.boosted(), opts);
    if found.hits.len() + found.notes.len() < opts.limit && unboosted {
        // Something boosted was passed over (a damaged entry): what was
        // left unboosted may be shown after all.
        return first_of(view, shortlist.all(view, opts.today), opts);
    }
    found
}

/// As [`first_shown`], from candidates all boosted.
fn first_of(view: &OpenIndex, ranked: &mut [Ranked], opts: &Options) -> Results {
    let conflicts: HashSet<&str> = view.head.conflicts.iter().map(String::as_str).collect();
    let order = |a: &Ranked, b: &Ranked| best_first(view, a, b);
    let mut found = Results::default();
    let count = |r: &Results| r.hits.len() + r.notes.len();
    // Only the first hits are shown, but filters can pass over ranked
    // memories: sort a batch of the best at a time rather than them all.
    let batch = opts.limit.saturating_mul(2).max(64);
    let mut rest = ranked;
    while count(&found) < opts.limit && !rest.is_empty() {
        let take = batch.min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, order);
        }
        let (best, after) = rest.split_at_mut(take);
        best.sort_by(order);
        for r in best.iter() {
            if count(&found) >= opts.limit {
                break;
            }
            let note = match r.doc {
                Doc::Note(n) => Some(Some((
                    n.id.clone(),
                    n.source,
                    n.time,
                    n.actor.clone(),
                    n.text.clone(),
                    false,
                ))),
                // Parsed only now that it is shown; a damaged entry is passed over.
                Doc::IndexedNote(j) => Some(view.note_rec(j).and_then(|rec| {
                    view.note(&rec)
                        .map(|e| (e.id, NoteSource::Log, e.time, e.actor, e.body, rec.clean))
                })),
                _ => None,
            };
            if let Some(note) = note {
                // Notes have no scope, type or tags: a filter leaves them out.
                let unfiltered = opts.scope.is_none() && opts.kind.is_none() && opts.tag.is_none();
                if let (true, Some((id, source, time, actor, text, clean))) = (unfiltered, note) {
                    found.notes.push(NoteHit {
                        id,
                        source,
                        time,
                        actor,
                        text,
                        score: r.score,
                        rank: r.rank,
                        relevant: r.relevant,
                        clean,
                    });
                }
                continue;
            }
            found.hits.extend(shown(view, r, opts, &conflicts));
        }
        rest = after;
    }
    found
}

/// The hit a ranked memory makes, unless the filters pass over it.
fn shown(view: &OpenIndex, r: &Ranked, opts: &Options, conflicts: &HashSet<&str>) -> Option<Hit> {
    let path = r.doc.path(view);
    let key = Key::from_rel_path(path)?;
    // The scope is in the path: no summary decoded for another scope.
    if opts.scope.as_ref().is_some_and(|s| *s != key.scope) {
        return None;
    }
    let (summary, clean) = match r.doc {
        Doc::Indexed(i) => {
            let rec = view.rec(i);
            (view.entry(i).0, rec.clean.then_some(rec.hash))
        }
        // Read since the index was written: not vouched for.
        Doc::Fresh(f) => (f.summary.clone(), None),
        Doc::Note(_) | Doc::IndexedNote(_) => (None, None),
    };
    let summary = summary?;
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
        similarity: None,
        stale: r.stale,
        relevant: r.relevant,
        clean,
        key,
    })
}

/// The live memories of a corpus (parsed, not expired), each as its path
/// and the fingerprint of its content: what semantic recall embeds.
pub fn live_memories(corpus: &Corpus, today: Date) -> Vec<(&str, u64)> {
    let view = &corpus.index;
    let indexed = (0..view.len()).filter_map(|i| {
        let hash = view.live_hash(i, today.0).filter(|_| !corpus.skip[i])?;
        Some((view.path(i), hash))
    });
    let fresh = corpus.fresh.iter().filter_map(|f| {
        let expires = f.summary.as_ref()?.expires;
        expires
            .is_none_or(|d| d >= today.0)
            .then_some((f.path.as_str(), f.hash))
    });
    indexed.chain(fresh).collect()
}

/// The hit the live memory at `path` makes with these scores, unless the
/// filters of `opts` pass over it.
pub fn memory_hit(
    corpus: &Corpus,
    path: &str,
    score: f64,
    rank: f64,
    opts: &Options,
) -> Option<Hit> {
    let view = &corpus.index;
    let doc = match corpus.fresh.iter().find(|f| f.path == path) {
        Some(f) => Doc::Fresh(f),
        None => Doc::Indexed(view.position(path).filter(|&i| !corpus.skip[i])?),
    };
    let standing = Standing::of(doc, view);
    let ranked = Ranked {
        doc,
        score,
        rank,
        stale: standing.stale(opts.today),
        relevant: true,
    };
    let conflicts: HashSet<&str> = view.head.conflicts.iter().map(String::as_str).collect();
    shown(view, &ranked, opts, &conflicts)
}

/// The token estimate budgets use, where the search's readers have
/// always found it (it lives in `model::text`, below `render`).
pub use crate::model::text::estimate_tokens;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testing::{encode, entry_for, term_counts, CACHE_VERSION};
    use crate::index::{Cache, Fresh};
    use crate::log::transition::KeyState;
    use crate::model::memory::Summary;
    use crate::model::stamp::Stamp;
    use proptest::prelude::*;

    /// A memory file's text: `front` holds the frontmatter lines after the
    /// description (`type:` among them).
    fn file(name: &str, description: &str, front: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n{front}---\n{body}\n")
    }

    /// A project memory with nothing but a description and a body.
    fn plain(name: &str, description: &str, body: &str) -> String {
        file(name, description, "type: project\n", body)
    }

    /// A corpus as `recall` builds one: `indexed` files encoded into a
    /// persistent index and read back in place, `fresh` files read now
    /// (each replacing the indexed file of its path), and keys in conflict.
    fn corpus(indexed: &[(&str, String)], fresh: &[(&str, String)], conflicts: &[&str]) -> Corpus {
        let mut cache = Cache::default();
        for (path, text) in indexed {
            let stamp = Stamp { size: 1, mtime: 1 };
            let entry = entry_for(text, stamp, path, &mut cache.dict);
            assert!(entry.error.is_none(), "{path}: {:?}", entry.error);
            cache.files.insert(path.to_string(), entry);
        }
        for key in conflicts {
            let state = KeyState {
                heads: vec!["a".into(), "b".into()],
                view: None,
                view_hash: None,
                conflict: true,
            };
            cache.keys.insert(key.to_string(), state);
        }
        let bytes = encode(&cache, CACHE_VERSION);
        let view = OpenIndex::parse(bytes, CACHE_VERSION).expect("an index view");
        let mut corpus = Corpus::of(view);
        for (path, text) in fresh {
            if let Some(i) = (0..corpus.index.len()).find(|&i| corpus.index.path(i) == *path) {
                corpus.skip[i] = true;
            }
            let m = crate::policy::memory::validate_file(text, path).expect("a valid memory");
            let (terms, len) = term_counts(&m);
            corpus.fresh.push(Fresh {
                path: path.to_string(),
                summary: Some(Summary::of(&m)),
                error: None,
                terms,
                len,
                hash: crate::model::fingerprint::fingerprint(text.as_bytes()),
            });
        }
        corpus
    }

    fn opts(limit: usize, min_score: f64) -> Options {
        Options {
            limit,
            min_score,
            scope: None,
            kind: None,
            tag: None,
            today: Date::parse("2026-11-29").expect("a date"),
            notes: true,
            weaker: false,
        }
    }

    fn keys(hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| h.key.to_string()).collect()
    }

    /// The memories a search finds.
    fn hits_of(c: &Corpus, query: &str, o: &Options) -> Vec<Hit> {
        search(c, query, o, &|_| None).hits
    }

    fn small_store() -> Corpus {
        corpus(
            &[
                (
                    "memory/project/pnpm-test.md",
                    plain(
                        "pnpm-test",
                        "Run the test suite with pnpm test, never npm test",
                        "The lockfile is pnpm's; npm would rewrite it.",
                    ),
                ),
                (
                    "memory/project/test-data.md",
                    plain(
                        "test-data",
                        "Test data lives in fixtures",
                        "Run the suite after changing them.",
                    ),
                ),
                (
                    "memory/project/npm-publish.md",
                    plain("npm-publish", "Publish with npm from CI", "Never by hand."),
                ),
                (
                    "memory/user/editor.md",
                    file(
                        "editor",
                        "Prefers vim keybindings",
                        "type: user\n",
                        "Everywhere.",
                    ),
                ),
            ],
            &[],
            &[],
        )
    }

    #[test]
    fn an_exact_description_ranks_first() {
        let c = small_store();
        let query = "Run the test suite with pnpm test, never npm test";
        let hits = hits_of(&c, query, &opts(10, DEFAULT_MIN_SCORE));
        assert_eq!(keys(&hits)[0], "project/pnpm-test");
        assert!((hits[0].score - 1.0).abs() < 1e-9, "{}", hits[0].score);
        // Memories sharing only some of its words rank below it.
        assert!(hits[1..].iter().all(|h| h.rank < hits[0].rank));
    }

    #[test]
    fn a_query_the_store_has_no_word_of_finds_nothing() {
        let c = small_store();
        for min_score in [0.0, DEFAULT_MIN_SCORE] {
            let o = opts(10, min_score);
            assert!(hits_of(&c, "configure kafka on kubernetes", &o).is_empty());
            // Stop words only: no term at all.
            assert!(hits_of(&c, "the of with", &o).is_empty());
            assert!(hits_of(&c, "", &o).is_empty());
        }
        // Sharing one common word is not enough to be relevant: the
        // unknown terms weigh most.
        let query = "configure kafka test";
        assert!(hits_of(&c, query, &opts(10, DEFAULT_MIN_SCORE)).is_empty());
        assert!(!hits_of(&c, query, &opts(10, 0.0)).is_empty());
    }

    #[test]
    fn two_words_only_one_memory_has_answer_a_long_question() {
        let filler: Vec<(String, String)> = (0..20)
            .map(|i| {
                let name = format!("filler-{i}");
                let text = plain(&name, "The cache warms up nightly", "Nothing more.");
                (format!("memory/project/{name}.md"), text)
            })
            .collect();
        let mut files: Vec<(&str, String)> = filler
            .iter()
            .map(|(p, t)| (p.as_str(), t.clone()))
            .collect();
        files.push((
            "memory/project/uploads.md",
            plain(
                "uploads",
                "Uploads go to S3 through presigned links",
                "They expire after 15 minutes.",
            ),
        ));
        let c = corpus(&files, &[], &[]);
        let o = opts(10, DEFAULT_MIN_SCORE);
        // presign, link and upload are only in this memory; most of the
        // question's words are in none, so its share is below the
        // threshold, and the words only it has answer.
        let query = "how long do the presigned links we hand out for uploaded files stay valid in a browser";
        let hits = hits_of(&c, query, &o);
        assert_eq!(keys(&hits), ["project/uploads"]);
        assert!(hits[0].score < DEFAULT_MIN_SCORE, "{}", hits[0].score);
        // One such word is not enough ...
        let one = "how long do the presigned tokens we hand out stay valid in a browser";
        assert!(hits_of(&c, one, &o).is_empty());
        // ... and words every memory has are no evidence.
        let common = "how long does the nightly cache take to warm up in a browser tab";
        assert!(hits_of(&c, common, &o).is_empty());
    }

    #[test]
    fn a_long_memory_answers_only_where_the_question_is_together() {
        let filler = |tag: &str| format!("{tag} ").repeat(200);
        let chat = plain(
            "chat",
            "A chat about moving house",
            &format!(
                "My manager signed off. {} We pack in May. {} The parental visit is in \
                 June. {} The movers arrive on the date we set.",
                filler("boxes"),
                filler("tape"),
                filler("lamps")
            ),
        );
        let mut files: Vec<(String, String)> = (0..20)
            .map(|i| {
                let name = format!("filler-{i}");
                let text = plain(&name, &format!("Fact {i} about the build"), "Nothing more.");
                (format!("memory/project/{name}.md"), text)
            })
            .collect();
        files.push(("memory/project/chat.md".to_string(), chat));
        let all: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
        let c = corpus(&all, &[], &[]);
        let texts = |path: &str| {
            files
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, t)| t.clone())
        };
        let o = opts(10, DEFAULT_MIN_SCORE);
        let found = |query: &str, texts: &dyn Fn(&str) -> Option<String>| {
            keys(&search(&c, query, &o, texts).hits)
        };
        // Its words are in the chat, far apart: by share it would answer.
        let scattered = "did my manager approve the parental leave before packing";
        assert_eq!(found(scattered, &|_| None), ["project/chat"]);
        assert!(found(scattered, &texts).is_empty());
        // Together in one passage, they answer.
        let together = "when do the movers arrive, on the date we set";
        assert_eq!(found(together, &texts), ["project/chat"]);
    }

    #[test]
    fn the_min_score_cuts_below_it_and_keeps_what_reaches_it() {
        let c = corpus(
            &[
                (
                    "memory/project/in-body.md",
                    plain(
                        "in-body",
                        "Deploys go through the pipeline",
                        "Ask zeta first.",
                    ),
                ),
                (
                    "memory/project/in-description.md",
                    plain("in-description", "zeta owns the cache", "Nothing more."),
                ),
                (
                    "memory/project/unrelated.md",
                    plain("unrelated", "The cache warms up nightly", "Nothing more."),
                ),
            ],
            &[],
            &[],
        );
        // A term counts wherever it is: conversation-sized memories carry
        // most of their words in the body.
        let hits = hits_of(&c, "zeta", &opts(10, 0.0));
        let score = |k: &str| {
            hits.iter()
                .find(|h| h.key.to_string() == k)
                .map(|h| h.score)
        };
        assert_eq!(score("project/in-description"), Some(1.0));
        assert_eq!(score("project/in-body"), Some(1.0));
        // The store answers when its best memory reaches the threshold;
        // then the memories with RELATIVE of the best one's share are kept.
        let all = hits_of(&c, "zeta cache", &opts(10, 0.0));
        assert!(all.len() >= 3);
        let best = all.iter().map(|h| h.score).fold(0.0, f64::max);
        for min in [0.05, best - 0.01, best, best + 0.01] {
            let kept = hits_of(&c, "zeta cache", &opts(10, min));
            let want: Vec<String> = all
                .iter()
                .filter(|x| best + 1e-9 >= min && x.score + 1e-9 >= RELATIVE * best)
                .map(|x| x.key.to_string())
                .collect();
            assert_eq!(keys(&kept), want, "min_score {min}");
        }
    }

    #[test]
    fn cjk_queries_match_cjk_memories_by_bigrams() {
        let c = corpus(
            &[
                (
                    "memory/project/test-command.md",
                    plain("test-command", "测试命令用 pnpm test", "不要用 npm。"),
                ),
                (
                    "memory/project/friday.md",
                    plain("friday", "周五 部署 要先通知", "值班的人确认。"),
                ),
                (
                    "memory/project/editor.md",
                    plain("editor", "Prefers vim keybindings", "Everywhere."),
                ),
            ],
            &[],
            &[],
        );
        let o = opts(10, DEFAULT_MIN_SCORE);
        let hits = hits_of(&c, "我们的测试命令是什么", &o);
        assert_eq!(keys(&hits), ["project/test-command"]);
        assert!((hits[0].score - 1.0).abs() < 1e-9);
        // 五部 spans the two words: a seam, which does not count against
        // relevance.
        let hits = hits_of(&c, "周五部署", &o);
        assert_eq!(keys(&hits), ["project/friday"]);
        assert!((hits[0].score - 1.0).abs() < 1e-9, "{}", hits[0].score);
        assert!(hits_of(&c, "数据库迁移", &opts(10, 0.0)).is_empty());
    }

    /// Three memories alike but for their names and `front`, searched for
    /// what they all say: their keys in rank order.
    fn order_of(fronts: [&str; 3]) -> Vec<String> {
        let names = ["xqa", "xqb", "xqc"];
        let files: Vec<(String, String)> = names
            .iter()
            .zip(fronts)
            .map(|(n, f)| {
                let text = file(n, "cache warmup runs nightly", f, "Check the cron.");
                (format!("memory/project/{n}.md"), text)
            })
            .collect();
        let files: Vec<(&str, String)> =
            files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
        keys(&hits_of(
            &corpus(&files, &[], &[]),
            "cache warmup",
            &opts(10, DEFAULT_MIN_SCORE),
        ))
    }

    #[test]
    fn confidence_then_recency_then_review_break_a_tie() {
        // Equal in everything: by key.
        let same = "type: project\n";
        assert_eq!(
            order_of([same; 3]),
            ["project/xqa", "project/xqb", "project/xqc"]
        );
        // Higher confidence first.
        let by_confidence = order_of([
            "type: project\nconfidence: 0.5\n",
            "type: project\nconfidence: 0.9\n",
            "type: project\nconfidence: 0.7\n",
        ]);
        assert_eq!(by_confidence, ["project/xqb", "project/xqc", "project/xqa"]);
        // The more recent change first; no date at all, last.
        let by_recency = order_of([
            "type: project\nupdated: 2026-01-01T00:00:00Z\n",
            "type: project\n",
            "type: project\nupdated: 2026-11-28T00:00:00Z\n",
        ]);
        assert_eq!(by_recency, ["project/xqc", "project/xqa", "project/xqb"]);
        // Past review_by: after the rest.
        let by_review = order_of([
            "type: project\nreview_by: 2026-01-01\n",
            "type: project\nreview_by: 2027-01-01\n",
            "type: project\n",
        ]);
        assert_eq!(by_review, ["project/xqb", "project/xqc", "project/xqa"]);
    }

    #[test]
    fn filters_flags_expiry_and_fresh_files() {
        let c = corpus(
            &[
                (
                    "memory/project/cache-a.md",
                    file(
                        "cache-a",
                        "cache rules",
                        "type: project\ntags: [Ops]\n",
                        "x",
                    ),
                ),
                (
                    "memory/user/cache-b.md",
                    file(
                        "cache-b",
                        "cache rules",
                        "type: feedback\nreview_by: 2026-01-01\n",
                        "x",
                    ),
                ),
                (
                    "memory/project/cache-gone.md",
                    file(
                        "cache-gone",
                        "cache rules",
                        "type: project\nexpires: 2026-11-28\n",
                        "x",
                    ),
                ),
                (
                    "memory/project/cache-old.md",
                    plain("cache-old", "nothing relevant", "x"),
                ),
            ],
            &[
                (
                    "memory/project/cache-old.md",
                    plain("cache-old", "cache rules now", "x"),
                ),
                (
                    "memory/task/cache-new.md",
                    file(
                        "cache-new",
                        "cache rules",
                        "type: project\nexpires: 2026-11-28\n",
                        "x",
                    ),
                ),
            ],
            &["project/cache-a"],
        );
        let all = hits_of(&c, "cache rules", &opts(10, DEFAULT_MIN_SCORE));
        let mut found = keys(&all);
        found.sort();
        // Expired memories are never returned, indexed or fresh; a fresh
        // file replaces what the index says of it.
        assert_eq!(
            found,
            ["project/cache-a", "project/cache-old", "user/cache-b"]
        );
        let hit = |k: &str| all.iter().find(|h| h.key.to_string() == k).expect(k);
        assert!(hit("project/cache-a").conflict && !hit("project/cache-a").stale);
        assert!(hit("user/cache-b").stale && !hit("user/cache-b").conflict);
        assert_eq!(
            hit("project/cache-old").summary.description,
            "cache rules now"
        );
        let with = |f: &dyn Fn(&mut Options)| {
            let mut o = opts(10, DEFAULT_MIN_SCORE);
            f(&mut o);
            keys(&hits_of(&c, "cache rules", &o))
        };
        assert_eq!(with(&|o| o.scope = Some("user".into())), ["user/cache-b"]);
        assert_eq!(
            with(&|o| o.kind = Some("feedback".into())),
            ["user/cache-b"]
        );
        assert_eq!(with(&|o| o.tag = Some("ops".into())), ["project/cache-a"]);
    }

    /// A boosted match that cannot be shown (its index entry damaged) is
    /// passed over, and the matches left unboosted below it are shown
    /// after all.
    #[test]
    fn a_match_that_cannot_be_shown_leaves_room_for_the_unboosted() {
        let mut cache = Cache::default();
        let files = [
            (
                "memory/project/top.md",
                plain("top", "cache cache ~@~@~", "cache cache cache cache"),
            ),
            (
                "memory/project/low.md",
                plain(
                    "low",
                    "cache among many other words that make it long",
                    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda",
                ),
            ),
        ];
        for (path, text) in &files {
            let entry = entry_for(text, Stamp { size: 1, mtime: 1 }, path, &mut cache.dict);
            cache.files.insert(path.to_string(), entry);
        }
        let mut bytes = encode(&cache, CACHE_VERSION);
        // The top memory's summary, where only its entry holds it: made
        // bytes that are no UTF-8, so its entry cannot be read.
        let marker = b"~@~@~";
        let at: Vec<usize> = (0..bytes.len())
            .filter(|&i| bytes[i..].starts_with(marker))
            .collect();
        assert_eq!(at.len(), 1, "the marker is in the entry alone");
        bytes[at[0]] = 0xff;
        let view = OpenIndex::parse(bytes, CACHE_VERSION).expect("an index view");
        let c = Corpus::of(view);
        for limit in [1, 5] {
            assert_eq!(
                keys(&hits_of(&c, "cache", &opts(limit, 0.0))),
                ["project/low"]
            );
        }
    }

    const VOCAB: [&str; 8] = [
        "cache", "deploy", "queue", "token", "build", "测试", "部署", "vault",
    ];

    /// A generated memory: description and body words (indexes into
    /// VOCAB), confidence in tenths, updated day of 2026-11.
    fn arb_memory() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, u8, u8)> {
        (
            proptest::collection::vec(0..VOCAB.len(), 1..5),
            proptest::collection::vec(0..VOCAB.len(), 0..6),
            0..=10u8,
            1..=28u8,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn results_are_ranked_distinct_relevant_and_within_the_limit(
            memories in proptest::collection::vec(arb_memory(), 1..12),
            fresh in 0usize..3,
            query in proptest::collection::vec(0..VOCAB.len() + 1, 1..4),
            limit in 0usize..8,
            min_score in prop_oneof![Just(0.0), Just(0.3), Just(0.6), Just(1.0)],
        ) {
            let files: Vec<(String, String)> = memories
                .iter()
                .enumerate()
                .map(|(i, (desc, body, conf, day))| {
                    let w = |ws: &[usize]| ws.iter().map(|&w| VOCAB[w]).collect::<Vec<_>>().join(" ");
                    let front = format!(
                        "type: project\nconfidence: {}\nupdated: 2026-11-{day:02}T00:00:00Z\n",
                        f64::from(*conf) / 10.0
                    );
                    let name = format!("m{i}");
                    (format!("memory/project/{name}.md"), file(&name, &w(desc), &front, &w(body)))
                })
                .collect();
            let all: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
            // The last few are read fresh, as files changed since the index.
            let split = all.len().saturating_sub(fresh);
            let c = corpus(&all[..split], &all[split..], &[]);
            // One more than the vocabulary: a word no memory has.
            let query_words = query.clone();
            let query: Vec<&str> = query.iter().map(|&w| VOCAB.get(w).copied().unwrap_or("kafka")).collect();
            let query = query.join(" ");
            let hits = hits_of(&c, &query, &opts(limit, min_score));
            prop_assert!(hits.len() <= limit);
            let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
            paths.sort();
            paths.dedup();
            prop_assert_eq!(paths.len(), hits.len());
            // The store answers only when its best memory reaches the
            // threshold, or one holds two query words (not CJK) that no
            // other has and a third of the threshold; then with those near
            // enough the best.
            let uncut = hits_of(&c, &query, &opts(64, 0.0));
            let best = uncut.iter().map(|h| h.score).fold(0.0, f64::max);
            let holds = |m: &(Vec<usize>, Vec<usize>, u8, u8), w: usize| m.0.contains(&w) || m.1.contains(&w);
            let mut words = query_words.clone();
            words.sort();
            words.dedup();
            let distinct = |i: usize| {
                words
                    .iter()
                    .filter(|&&w| w < VOCAB.len() && !VOCAB[w].chars().any(crate::model::text::is_cjk))
                    .filter(|&&w| holds(&memories[i], w))
                    .filter(|&&w| memories.iter().filter(|m| holds(m, w)).count() == 1)
                    .count()
            };
            let by_distinct = uncut.iter().any(|h| {
                let i: usize = h.key.slug.trim_start_matches('m').parse().expect("m<i>");
                distinct(i) >= DISTINCT_WORDS && h.score + 1e-9 >= min_score * DISTINCT_SHARE
            });
            prop_assert!(hits.is_empty() || best + 1e-9 >= min_score || by_distinct);
            for h in &hits {
                prop_assert!(h.score > 0.0 && h.score <= 1.0 + 1e-9, "{}", h.score);
                let cut = if min_score > 0.0 { RELATIVE * best } else { 0.0 };
                prop_assert!(h.score + 1e-9 >= cut);
            }
            for w in hits.windows(2) {
                prop_assert!(
                    w[0].rank > w[1].rank || (w[0].rank == w[1].rank && w[0].path < w[1].path),
                    "{} {} / {} {}", w[0].path, w[0].rank, w[1].path, w[1].rank
                );
            }
            // The limit cuts the full ranking, nothing else (a search boosts
            // only what may be shown: all of them when the limit is above
            // the matches), with or without the weaker matches.
            let more = hits_of(&c, &query, &opts(64, min_score));
            prop_assert_eq!(keys(&hits), keys(&more[..hits.len()]));
            prop_assert!(hits.len() == limit || hits.len() == more.len());
            let weaker = |limit| Options { weaker: true, ..opts(limit, min_score) };
            let (few, all) = (hits_of(&c, &query, &weaker(limit)), hits_of(&c, &query, &weaker(64)));
            let shown = |hits: &[Hit]| hits.iter().map(|h| (h.key.to_string(), h.rank, h.relevant, h.stale)).collect::<Vec<_>>();
            prop_assert_eq!(shown(&few), shown(&all[..few.len()]));
            prop_assert!(few.len() == limit || few.len() == all.len());
        }
    }
}
