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
    ranked.select_nth_unstable_by(need - 1, |a, b| b.rank.total_cmp(&a.rank));
    let (best, rest) = ranked.split_at_mut(need);
    boost_all(view, best, today);
    // The best `need` are candidates: the `need`-th best of all ranks at
    // least as high as the lowest of them.
    let bound = best.iter().map(|r| r.rank).fold(f64::INFINITY, f64::min);
    let may = partition(rest, |r| r.rank * MAX_BOOST >= bound);
    boost_all(view, &mut rest[..may], today);
    need + may
}
