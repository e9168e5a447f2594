//! The candidates a search may show, and which of them have their boosts
//! read: a common word matches most of a large store, and reading every
//! match's standing (confidence, last update, review date) from its index
//! record cost more than the rest of a query. `search::rank` decides what
//! is relevant and ranks by bare BM25F; this boosts only what the boosts
//! could lift into the first `limit`.

use crate::index::OpenIndex;
use crate::model::time::Date;
use crate::search::document::{Doc, Standing, MAX_BOOST};
use crate::search::results::Options;

/// A relevant memory, scored and ranked from what the index records: its
/// summary is decoded only if it is shown.
pub(crate) struct Ranked<'a> {
    /// Which document.
    pub(crate) doc: Doc<'a>,
    /// Its share of the query (relevance, 0..1).
    pub(crate) score: f64,
    /// BM25F, times its boosts once boosted.
    pub(crate) rank: f64,
    /// Past its `review_by` date (known once boosted).
    pub(crate) stale: bool,
    /// The store's decision keeps it.
    pub(crate) relevant: bool,
}

/// The ranked candidates a search may show, those whose boosts were read
/// first (their `rank` is final), then those left unboosted (their `rank`
/// is bare BM25F) because even [`MAX_BOOST`] would not lift them into the
/// first `limit`.
///
/// Why: a common word matches most of a large store, and reading every
/// match's standing from its record costs more than the rest of a query.
/// No boost exceeds [`MAX_BOOST`], so once the candidates of best BM25F
/// are boosted, the `limit`-th of them bounds the rank any shown memory
/// has; a candidate whose BM25F times `MAX_BOOST` falls below that bound
/// cannot be shown. All of it is done in place: a copy of tens of
/// thousands of candidates costs what the boosts saved.
pub(crate) struct Shortlist<'a> {
    /// The candidates, the boosted first.
    pub(crate) ranked: Vec<Ranked<'a>>,
    /// How many of `ranked`, from the first, are boosted.
    pub(crate) boosted: usize,
}

impl<'a> Shortlist<'a> {
    /// Boosts what can be shown of `ranked` (bare BM25F ranks) for
    /// `opts`: everything when a filter may pass over candidates.
    pub(crate) fn of(
        view: &OpenIndex,
        mut ranked: Vec<Ranked<'a>>,
        opts: &Options,
    ) -> Shortlist<'a> {
        let filtered = opts.scope.is_some() || opts.kind.is_some() || opts.tag.is_some();
        if filtered || ranked.len() <= opts.limit {
            boost_all(view, &mut ranked, opts.today);
            let boosted = ranked.len();
            return Shortlist { ranked, boosted };
        }
        // The relevant are shown before every weaker match: the weaker
        // compete only for what the relevant leave of the limit. When they
        // compete at all, every relevant one is boosted, so the boosted
        // are always the first of `ranked`.
        let relevant = partition(&mut ranked, |r| r.relevant);
        let (rel, weaker) = ranked.split_at_mut(relevant);
        let mut boosted = best_boosted(view, rel, opts.limit, opts.today);
        if let Some(left) = opts.limit.checked_sub(relevant).filter(|&n| n > 0) {
            boosted += best_boosted(view, weaker, left, opts.today);
        }
        Shortlist { ranked, boosted }
    }

    /// The boosted candidates.
    pub(crate) fn boosted(&mut self) -> &mut [Ranked<'a>] {
        &mut self.ranked[..self.boosted]
    }

    /// Every candidate, boosted: what is shown when the boosted run short
    /// (an entry of the index that cannot be read is passed over).
    pub(crate) fn all(&mut self, view: &OpenIndex, today: Date) -> &mut [Ranked<'a>] {
        boost_all(view, &mut self.ranked[self.boosted..], today);
        self.boosted = self.ranked.len();
        &mut self.ranked
    }
}

/// Multiplies each bare BM25F rank by its document's boosts.
fn boost_all(view: &OpenIndex, ranked: &mut [Ranked], today: Date) {
    for r in ranked {
        let standing = Standing::of(r.doc, view);
        r.rank *= standing.boost(today);
        r.stale = standing.stale(today);
    }
}

/// Moves the items `keep` holds for before the others (in no particular
/// order) and says how many they are.
fn partition<T>(items: &mut [T], keep: impl Fn(&T) -> bool) -> usize {
    let mut kept = 0;
    for i in 0..items.len() {
        if keep(&items[i]) {
            items.swap(kept, i);
            kept += 1;
        }
    }
    kept
}

/// Boosts the candidates of `ranked` (bare BM25F ranks) that may be among
/// its first `need` once boosted, moved to its start, and says how many.
fn best_boosted(view: &OpenIndex, ranked: &mut [Ranked], need: usize, today: Date) -> usize {
    if ranked.len() <= need {
        boost_all(view, ranked, today);
        return ranked.len();
    }
    if need == 0 {
        return 0;
    }
    // The best `need` × [`WIDEN`] (and any tied with the last of them)
    // are boosted first: found in one pass keeping the highest ranks, not
    // by selecting among tens of thousands.
    let nth = nth_highest(ranked.iter().map(|r| r.rank), need.saturating_mul(WIDEN));
    let first = partition(ranked, |r| r.rank.total_cmp(&nth).is_ge());
    let (best, rest) = ranked.split_at_mut(first);
    boost_all(view, best, today);
    // Once boosted, the `need`-th best of all ranks at least as high as
    // the `need`-th best of them: the more were boosted, the tighter.
    let bound = nth_highest(best.iter().map(|r| r.rank), need);
    let may = partition(rest, |r| r.rank * MAX_BOOST >= bound);
    boost_all(view, &mut rest[..may], today);
    first + may
}

/// How many times `limit` of the best bare ranks are boosted before the
/// bound is taken (measured at 60,000 memories, the bench's query: 13,465
/// more candidates boosted with 1, 3,851 with 4, 3,006 with 16).
const WIDEN: usize = 4;

/// The `n`-th highest of `ranks` (n at least 1; the lowest when there are
/// fewer), in the order `total_cmp` gives, from one pass keeping the `n`
/// highest seen in a heap whose top is the lowest of them: a pass costs
/// `log n` a rank at any `--limit`.
fn nth_highest(ranks: impl Iterator<Item = f64>, n: usize) -> f64 {
    use std::collections::BinaryHeap;
    let mut top: BinaryHeap<Lowest> = BinaryHeap::with_capacity(n + 1);
    for rank in ranks {
        if top.len() == n && top.peek().is_some_and(|low| rank.total_cmp(&low.0).is_le()) {
            continue;
        }
        top.push(Lowest(rank));
        if top.len() > n {
            top.pop();
        }
    }
    top.peek().map_or(f64::NEG_INFINITY, |low| low.0)
}

/// A rank ordered so that a max-heap's top is the lowest, in `total_cmp`'s order.
struct Lowest(f64);

impl PartialEq for Lowest {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Lowest {}

impl PartialOrd for Lowest {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Lowest {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::nth_highest;

    #[test]
    fn the_nth_highest_is_the_nth_of_a_descending_sort() {
        let ranks: [f64; 10] = [3.0, 1.5, 7.25, 3.0, -2.0, 7.25, 0.0, 9.5, 3.0, 1.0];
        let mut sorted = ranks.to_vec();
        sorted.sort_by(|a, b| b.total_cmp(a));
        for n in 1..=ranks.len() {
            assert_eq!(
                nth_highest(ranks.iter().copied(), n),
                sorted[n - 1],
                "n = {n}"
            );
        }
        // Fewer than n: the lowest.
        assert_eq!(nth_highest(ranks.iter().copied(), 20), -2.0);
        assert_eq!(nth_highest(std::iter::empty(), 3), f64::NEG_INFINITY);
    }
}
