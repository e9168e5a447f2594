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
//! - **Ranking.** Reciprocal rank fusion of the similarity order and, with
//!   weight [`KEYWORD_WEIGHT`], the keyword order: no calibration between a
//!   BM25 score and a cosine is needed.

use crate::search::rank::{Hit, Item, Results};
use std::collections::HashMap;

/// Reciprocal rank fusion's constant: how much the first places dominate.
pub const RRF_K: f64 = 60.0;
/// The weight of a memory's keyword place against its similarity place.
pub const KEYWORD_WEIGHT: f64 = 0.1;
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

/// The keyword answer fused with the semantic one: every memory either
/// found relevant, ranked by reciprocal rank fusion of its place in
/// `by_similarity` (every live memory's path, most similar first) and,
/// weighted by [`KEYWORD_WEIGHT`], in the keyword order; notes keep their
/// keyword place alone. `semantic` are the semantically relevant memories'
/// hits. At most `limit` items; each hit's `rank` is its fused score.
pub fn fuse(keyword: Results, semantic: Vec<Hit>, by_similarity: &[&str], limit: usize) -> Results {
    let similar_at: HashMap<&str, usize> = by_similarity
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, i))
        .collect();
    let rrf = |place: usize| 1.0 / (RRF_K + place as f64 + 1.0);
    let similar = |path: &str| similar_at.get(path).map_or(0.0, |&p| rrf(p));
    let mut fused: HashMap<String, Hit> = HashMap::new();
    for (place, mut hit) in keyword.hits.into_iter().enumerate() {
        hit.rank = KEYWORD_WEIGHT * rrf(place) + similar(&hit.path);
        fused.insert(hit.path.clone(), hit);
    }
    for mut hit in semantic {
        if fused.contains_key(&hit.path) {
            continue;
        }
        hit.rank = similar(&hit.path);
        fused.insert(hit.path.clone(), hit);
    }
    let mut hits: Vec<Hit> = fused.into_values().collect();
    hits.sort_by(|a, b| b.rank.total_cmp(&a.rank).then_with(|| a.path.cmp(&b.path)));
    let mut notes = keyword.notes;
    for (place, note) in notes.iter_mut().enumerate() {
        note.rank = KEYWORD_WEIGHT * rrf(place);
    }
    let mut out = Results {
        hits,
        notes,
        best: keyword.best,
    };
    // The limit cuts the merged order, as a keyword search's does.
    let (mut h, mut n) = (0, 0);
    for item in out.ranked().into_iter().take(limit) {
        match item {
            Item::Memory(_) => h += 1,
            Item::Note(_) => n += 1,
        }
    }
    out.hits.truncate(h);
    out.notes.truncate(n);
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
