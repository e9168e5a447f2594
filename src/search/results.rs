//! What a search returns: the options it runs with, and its relevant and
//! weaker memories and notes, in the one order every reader shows them
//! (the relevant before the weaker, each part by rank).

use crate::index::NoteSource;
use crate::model::key::Key;
use crate::model::memory::Summary;
use crate::model::time::{Date, Timestamp};

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
    /// Search the notes too.
    pub notes: bool,
    /// Also return what matches the query but the store's decision does
    /// not keep, after the relevant ones and marked so (`recall`, whose
    /// reader judges them; `context` injects only the relevant).
    pub weaker: bool,
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
    /// Relevance, 0..1: the IDF-weighted share of query terms it contains
    /// (found by its embedding alone: its similarity).
    pub score: f64,
    /// The ranking score: BM25F times the boosts, or the fused score of
    /// a hybrid search (`search::hybrid`).
    pub rank: f64,
    /// The cosine similarity of its embedding to the query's, when a
    /// hybrid search ranked it.
    pub similarity: Option<f64>,
    /// Its versions disagree (an open conflict).
    pub conflict: bool,
    /// Past its `review_by` date.
    pub stale: bool,
    /// The store's decision keeps it (false: a weaker match, returned only
    /// with [`Options::weaker`]).
    pub relevant: bool,
    /// The fingerprint of its content when the index found no secret in
    /// it (`index::Rec::clean`); none for a file read since the
    /// index was written, or one that holds a secret. What it shows is
    /// vouched for while the file still has this content.
    pub clean: Option<u64>,
}

/// One relevant note (or piece of MEMORY.md's own text).
#[derive(Debug, Clone)]
pub struct NoteHit {
    /// Its event id, or `MEMORY.md:<line>`.
    pub id: String,
    /// Which kind of document it is.
    pub source: NoteSource,
    /// When it was written.
    pub time: Timestamp,
    /// Who wrote it.
    pub actor: String,
    /// What it says.
    pub text: String,
    /// Relevance, as a memory's.
    pub score: f64,
    /// The ranking score, as a memory's (a note counts as a memory of
    /// confidence [`NOTE_CONFIDENCE`](crate::search::document::NOTE_CONFIDENCE)).
    pub rank: f64,
    /// The store's decision keeps it, as a memory's.
    pub relevant: bool,
    /// The index found no secret in its text (a note of the logs' tail
    /// and MEMORY.md's text are not indexed: not vouched for).
    pub clean: bool,
}

/// What a search found: memories and notes, each best first, together
/// no more than the limit.
#[derive(Debug, Clone, Default)]
pub struct Results {
    /// The relevant memories.
    pub hits: Vec<Hit>,
    /// The relevant notes.
    pub notes: Vec<NoteHit>,
    /// The best relevance any memory or note had, whether or not it
    /// reached the threshold (how near the store came to answering).
    pub best: f64,
    /// The store answered: something reached the decision, so the
    /// relevant items are what it knows of the query.
    pub answered: bool,
}

/// A memory or a note, in [`Results::ranked`].
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// A memory.
    Memory(&'a Hit),
    /// A note.
    Note(&'a NoteHit),
}

impl Results {
    /// Memories and notes in one order: the relevant before the weaker,
    /// each by rank, a memory before a note of the same rank.
    pub fn ranked(&self) -> Vec<Item<'_>> {
        let mut out = Vec::with_capacity(self.hits.len() + self.notes.len());
        let (mut m, mut n) = (self.hits.iter().peekable(), self.notes.iter().peekable());
        loop {
            let note_first = match (m.peek(), n.peek()) {
                (Some(h), Some(note)) => (note.relevant, note.rank) > (h.relevant, h.rank),
                (Some(_), None) => false,
                (None, Some(_)) => true,
                (None, None) => break,
            };
            match note_first {
                true => out.extend(n.next().map(Item::Note)),
                false => out.extend(m.next().map(Item::Memory)),
            }
        }
        out
    }

    /// Nothing found.
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty() && self.notes.is_empty()
    }

    /// Memories and notes each in the order [`Results::ranked`] merges:
    /// the relevant first, then by rank, then by path or id.
    pub fn sort(&mut self) {
        self.hits.sort_by(|a, b| {
            b.relevant
                .cmp(&a.relevant)
                .then_with(|| b.rank.total_cmp(&a.rank))
                .then_with(|| a.path.cmp(&b.path))
        });
        self.notes.sort_by(|a, b| {
            b.relevant
                .cmp(&a.relevant)
                .then_with(|| b.rank.total_cmp(&a.rank))
                .then_with(|| a.id.cmp(&b.id))
        });
    }

    /// The first `limit` items of [`Results::ranked`], memories and notes
    /// together.
    pub fn truncate(&mut self, limit: usize) {
        let (mut h, mut n) = (0, 0);
        for item in self.ranked().into_iter().take(limit) {
            match item {
                Item::Memory(_) => h += 1,
                Item::Note(_) => n += 1,
            }
        }
        self.hits.truncate(h);
        self.notes.truncate(n);
    }

    /// Only what the store's decision keeps: the weaker matches dropped.
    pub fn relevant_only(mut self) -> Results {
        self.hits.retain(|h| h.relevant);
        self.notes.retain(|n| n.relevant);
        self
    }
}

impl Item<'_> {
    /// The store's decision keeps it.
    pub fn relevant(&self) -> bool {
        match self {
            Item::Memory(h) => h.relevant,
            Item::Note(n) => n.relevant,
        }
    }

    /// Its ranking score.
    pub fn rank(&self) -> f64 {
        match self {
            Item::Memory(h) => h.rank,
            Item::Note(n) => n.rank,
        }
    }
}
