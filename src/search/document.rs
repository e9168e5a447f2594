//! A document of a search (a memory of the index or read now, a note) and
//! its standing: what BM25F is multiplied by once a document is relevant
//! (confidence, recency, the penalty past `review_by`).

use crate::index::{Fresh, NoteDoc, NoteSource, OpenIndex};
use crate::model::time::{Date, DAY_MS};

/// Days over which the recency boost decays by a factor e.
const RECENCY_DAYS: f64 = 180.0;
/// The confidence a note ranks with: an unconfirmed observation ranks
/// after a confirmed memory of equal relevance.
pub const NOTE_CONFIDENCE: f64 = 0.5;
/// The most a document's standing multiplies BM25F by: full confidence,
/// changed today, not past review. A search boosts only the matches this
/// could lift among those it shows (`search::shortlist`).
pub const MAX_BOOST: f64 = (0.75 + 0.25 * 1.0) * (1.0 + 0.1 * 1.0);

/// A document of a [`Corpus`]: an index position, a fresh file, a note of
/// the index (its place among the notes) or one of the logs' tail.
#[derive(Clone, Copy)]
pub(crate) enum Doc<'a> {
    Indexed(usize),
    Fresh(&'a Fresh),
    IndexedNote(usize),
    Note(&'a NoteDoc),
}

impl<'a> Doc<'a> {
    /// Its file's path, or a note's id: what breaks ties of rank.
    pub(crate) fn path(self, view: &'a OpenIndex) -> &'a str {
        match self {
            Doc::Indexed(i) => view.path(i),
            Doc::Fresh(f) => &f.path,
            Doc::IndexedNote(j) => view.note_id(j),
            Doc::Note(n) => &n.id,
        }
    }
}

/// What the boosts read of a memory.
pub(crate) struct Standing {
    confidence: f64,
    /// Last change, ms since the epoch (0: unknown).
    updated: i64,
    /// `review_by`, days since the epoch (`i64::MAX`: none).
    review_by: i64,
}

impl Standing {
    /// A document's standing: from the index's record, or from the
    /// summary of a fresh file (absent fields as the record has them).
    pub(crate) fn of(doc: Doc, view: &OpenIndex) -> Standing {
        match doc {
            Doc::Indexed(i) => {
                let r = view.rec(i);
                Standing {
                    confidence: r.confidence,
                    updated: r.updated,
                    review_by: r.review_by,
                }
            }
            Doc::Note(n) => Standing {
                confidence: match n.source {
                    NoteSource::Log => NOTE_CONFIDENCE,
                    NoteSource::MemoryMd { .. } => 1.0,
                },
                updated: n.time.0,
                review_by: i64::MAX,
            },
            Doc::IndexedNote(j) => Standing {
                confidence: NOTE_CONFIDENCE,
                updated: view.note_time(j).unwrap_or(0),
                review_by: i64::MAX,
            },
            Doc::Fresh(f) => f.summary.as_ref().map_or(
                Standing {
                    confidence: 1.0,
                    updated: 0,
                    review_by: i64::MAX,
                },
                |s| Standing {
                    confidence: s.confidence,
                    updated: s.updated,
                    review_by: s.review_by.unwrap_or(i64::MAX),
                },
            ),
        }
    }

    /// Past its `review_by` date.
    pub(crate) fn stale(&self, today: Date) -> bool {
        self.review_by < today.0
    }

    /// What BM25F is multiplied by: boosts for confidence and recency, and
    /// the penalty past `review_by`.
    pub(crate) fn boost(&self, today: Date) -> f64 {
        let age_days = ((today.0 * DAY_MS - self.updated).max(0) as f64) / DAY_MS as f64;
        let recency = if self.updated > 0 {
            (-age_days / RECENCY_DAYS).exp()
        } else {
            0.0
        };
        let stale = if self.stale(today) { 0.8 } else { 1.0 };
        // A memory's confidence is 0..1 (a damaged index record could say
        // otherwise, and then outrank MAX_BOOST).
        let confidence = self.confidence.clamp(0.0, 1.0);
        (0.75 + 0.25 * confidence) * (1.0 + 0.1 * recency) * stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_standing_boosts_past_max_boost() {
        let today = Date::parse("2026-11-29").expect("a date");
        let now = today.0 * DAY_MS;
        let best = Standing {
            confidence: 1.0,
            updated: now,
            review_by: i64::MAX,
        };
        assert_eq!(best.boost(today), MAX_BOOST);
        // A damaged index record's confidence is held to 0..1.
        let damaged = Standing {
            confidence: 7.0,
            ..best
        };
        assert_eq!(damaged.boost(today), MAX_BOOST);
        let future = Standing {
            updated: now + 30 * DAY_MS,
            ..best
        };
        assert!(future.boost(today) <= MAX_BOOST);
    }
}
