//! Hybrid ranking: the keyword answer ([`crate::search::rank`]) fused with
//! the similarity of the memories' embeddings to the query's.
//!
//! Measured with multilingual-e5-small (`bench/semantic.sh`): embeddings
//! rank far better than words (on the long conversations, 0.98 of the
//! answering sessions in the top 5 by similarity alone, 0.85 by keywords),
//! but a similarity says little about whether the store knows the answer at
//! all (an unrelated question scores as high against some memory as many
//! related ones do). So the keywords keep deciding whether to answer, and
//! the embeddings decide most of the order:
//!
//! - **Relevance.** When the keywords answer, the memories whose
//!   similarity is at least [`ANSWERED_Z`] standard deviations above the
//!   rest's mean join the keywords' relevant ones. When they do not, the
//!   embeddings alone answer only if the best memory stands [`ANSWER_Z`]
//!   deviations above the rest and the keywords came within
//!   [`LEXICAL_FLOOR`] of the query; then those [`KEEP_Z`] above the mean
//!   are relevant. Deviations, not a cosine threshold, because every model
//!   puts its unrelated texts elsewhere (e5 near 0.8, a bag of words near 0).
//! - **Ranking.** Score-level fusion: `W · keyword + (1 − W) · similarity`,
//!   each normalised to 0..1 over the query's candidates (the keyword rank
//!   by the best one's, the similarity from the live memories' mean, 0, to
//!   the best, 1), with [`KEYWORD_WEIGHT`] as `W`. A memory that covers
//!   the whole query keeps its lead over one that is only a little more
//!   similar, and a paraphrase with no word in common still ranks by its
//!   similarity (rank fusion gave every similarity place the same weight
//!   whatever the gap, and let a cosine of 0.80 outrank a whole match).

use crate::search::results::{Hit, Results};
use std::collections::{HashMap, HashSet};

/// The weight of a memory's keyword rank against its similarity, both
/// normalised to 0..1 (measured: `docs/search.md`, Semantic recall).
pub const KEYWORD_WEIGHT: f64 = 0.5;
/// When the keywords answer: a memory this many standard deviations above
/// the mean similarity of the rest is relevant too.
pub const ANSWERED_Z: f64 = 0.5;
/// When they do not: the best memory must stand this many standard
/// deviations above the rest for the embeddings alone to answer...
pub const ANSWER_Z: f64 = 4.0;
/// ... and the keywords must have covered this share of the query.
pub const LEXICAL_FLOOR: f64 = 0.1;
/// Once the embeddings alone answer, a memory this many standard
/// deviations above the mean is relevant.
pub const KEEP_Z: f64 = 2.0;
/// Fewer live memories than this: too few to know what stands out, so the
/// embeddings only reorder what the keywords found.
pub const MIN_MEMORIES: usize = 8;

/// Which of the memories (positions in `similarity`, sorted most similar
/// first) are semantically relevant, given the keywords' answer
/// (`answered`) and their best share of the query (`keyword_best`).
///
/// "Stands out" is measured against the rest: the mean and standard
/// deviation of every similarity but the best one (with it, one memory far
/// above the others could never stand more than √(n−1) deviations above the
/// mean).
pub fn relevant(similarity: &[f64], answered: bool, keyword_best: f64) -> Vec<usize> {
    let n = similarity.len();
    if n < MIN_MEMORIES {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| similarity[b].total_cmp(&similarity[a]).then(a.cmp(&b)));
    let rest = &order[1..];
    let mean = rest.iter().map(|&i| similarity[i]).sum::<f64>() / rest.len() as f64;
    let var = rest
        .iter()
        .map(|&i| (similarity[i] - mean).powi(2))
        .sum::<f64>()
        / rest.len() as f64;
    let sd = var.sqrt();
    if sd <= f64::EPSILON {
        return Vec::new();
    }
    let z = |i: usize| (similarity[i] - mean) / sd;
    let keep = if answered {
        ANSWERED_Z
    } else if z(order[0]) >= ANSWER_Z && keyword_best + 1e-9 >= LEXICAL_FLOOR {
        KEEP_Z
    } else {
        return Vec::new();
    };
    order.into_iter().take_while(|&i| z(i) >= keep).collect()
}

/// Each live memory's similarity (`similar`: path and cosine, in any
/// order) normalised to 0..1: 0 at the mean of them all or below, 1 for
/// the best. What a cosine means moves with the model (e5 puts unrelated
/// texts near 0.8, a bag of words near 0); its place between the store's
/// average and its best does not.
pub fn normalised<'a>(similar: &[(&'a str, f64)]) -> HashMap<&'a str, f64> {
    let n = similar.len().max(1) as f64;
    let mean = similar.iter().map(|(_, s)| s).sum::<f64>() / n;
    let best = similar.iter().map(|(_, s)| *s).fold(f64::MIN, f64::max);
    let span = best - mean;
    similar
        .iter()
        .map(|&(p, s)| {
            let v = if span > f64::EPSILON {
                ((s - mean) / span).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (p, v)
        })
        .collect()
}

/// The keyword answer fused with the similarities: every keyword hit and
/// note, and `similar_only` (memories the keywords did not find, brought
/// by their similarity), each ranked by `W · keyword + (1 − W) ·
/// similarity` (see the module's doc; `similarity` is [`normalised`]); a
/// note has its keyword term alone. Relevant are the keyword answer's
/// relevant hits and notes and the memories in `semantic` (paths of the
/// semantically relevant); with `weaker` false, only they are kept. The
/// relevant first, each part by fused rank, at most `limit` items.
pub fn fuse(
    keyword: Results,
    similar_only: Vec<Hit>,
    similarity: &HashMap<&str, f64>,
    semantic: &HashSet<&str>,
    limit: usize,
    weaker: bool,
) -> Results {
    // The keyword ranks normalised by the best of memories and notes alike.
    let best_rank = keyword
        .hits
        .iter()
        .map(|h| h.rank)
        .chain(keyword.notes.iter().map(|n| n.rank))
        .fold(0.0, f64::max);
    let kw = |rank: f64| {
        if best_rank > 0.0 {
            rank / best_rank
        } else {
            0.0
        }
    };
    let sim = |path: &str| similarity.get(path).copied().unwrap_or(0.0);
    let mut hits: Vec<Hit> = Vec::with_capacity(keyword.hits.len() + similar_only.len());
    for mut hit in keyword.hits {
        hit.rank = KEYWORD_WEIGHT * kw(hit.rank) + (1.0 - KEYWORD_WEIGHT) * sim(&hit.path);
        hit.relevant |= semantic.contains(hit.path.as_str());
        hits.push(hit);
    }
    for mut hit in similar_only {
        hit.rank = (1.0 - KEYWORD_WEIGHT) * sim(&hit.path);
        hit.relevant = semantic.contains(hit.path.as_str());
        hits.push(hit);
    }
    let mut notes = keyword.notes;
    for note in &mut notes {
        note.rank = KEYWORD_WEIGHT * kw(note.rank);
    }
    if !weaker {
        hits.retain(|h| h.relevant);
        notes.retain(|n| n.relevant);
    }
    let answered = hits.iter().any(|h| h.relevant) || notes.iter().any(|n| n.relevant);
    let mut out = Results {
        hits,
        notes,
        best: keyword.best,
        answered,
    };
    out.sort();
    // The limit cuts the merged order, as a keyword search's does.
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_memory_that_stands_out_makes_the_embeddings_answer_alone() {
        // All alike: nothing stands out, whatever the keywords said.
        assert!(relevant(&[0.8; 20], true, 1.0).is_empty());
        // One far above the rest, one above too, the others alike.
        let mut sims = vec![0.80, 0.84, 0.79, 0.80, 0.80, 0.81, 0.79, 0.80, 0.80, 0.80];
        sims[3] = 0.97;
        sims[6] = 0.90;
        // (Against the rest: 3 stands 4.7 deviations above, 6 2.6, 1 0.75.)
        assert_eq!(relevant(&sims, false, 0.2), [3, 6]);
        // The keywords nowhere near the query: the embeddings alone do not answer.
        assert!(relevant(&sims, false, 0.0).is_empty());
        // The keywords answered: the memories half a deviation above join.
        assert_eq!(relevant(&sims, true, 0.5), [3, 6, 1]);
        // Too few memories to tell.
        assert!(relevant(&[0.1, 0.1, 0.9], false, 1.0).is_empty());
    }
}

#[cfg(test)]
mod fusion_tests {
    use super::*;

    #[test]
    fn similarity_is_placed_between_the_mean_and_the_best() {
        let n = normalised(&[("a", 0.9), ("b", 0.8), ("c", 0.7)]);
        assert!((n["a"] - 1.0).abs() < 1e-9);
        assert!(n["b"].abs() < 1e-9);
        assert_eq!(n["c"], 0.0);
        // All alike: nothing stands out.
        assert_eq!(normalised(&[("a", 0.5), ("b", 0.5)])["a"], 0.0);
    }
}
