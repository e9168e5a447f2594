//! A request to remember a memory: what `remember`, `import`, the
//! extractor and `consolidate` all build, and the comparisons they share
//! (does a memory, or a pending proposal, already say what it would write).
//! Plain data: the command that writes it is `ops::write`.

use crate::model::event::Event;
use crate::model::key::Key;
use crate::model::memory::{Memory, MemoryType};
use crate::model::time::{Date, Timestamp};

/// How `remember` treats a collision with an existing memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Collision {
    /// Keep the new memory as a proposal and ask (exit 4).
    #[default]
    Ask,
    /// The new memory replaces what it collides with.
    Replace,
    /// Keep both: a same-key collision gets the next free `<slug>-N`.
    KeepBoth,
    /// Only propose, whatever happens.
    Propose,
    /// Only propose, for a person to review: consolidation holds the
    /// proposal until it is accepted (imported curated text, which no one
    /// stated to memoir).
    Review,
}

/// The `reason` of a proposal a person must accept before consolidation
/// adds it ([`Collision::Review`]).
pub const REVIEW: &str = "review: imported, a person accepts it";

/// A memory to remember.
#[derive(Debug, Clone)]
pub struct Remember {
    /// Where it goes.
    pub key: Key,
    /// Its name as given.
    pub name: String,
    /// One-line summary.
    pub description: String,
    /// Its kind.
    pub kind: MemoryType,
    /// Labels.
    pub tags: Vec<String>,
    /// Why it can be trusted.
    pub source: String,
    /// 0..=1.
    pub confidence: f64,
    /// Markdown body.
    pub body: String,
    /// Stale after.
    pub review_by: Option<Date>,
    /// Forgotten after.
    pub expires: Option<Date>,
    /// What to do on a collision.
    pub collision: Collision,
    /// Compare-and-swap: the event id the memory must be at now.
    pub expect: Option<String>,
}

impl Remember {
    /// The memory this request makes, as first written at `now`: what
    /// `remember` writes and `consolidate` proposes.
    pub fn memory(&self, now: Timestamp) -> Memory {
        Memory {
            name: self.name.clone(),
            description: self.description.clone(),
            kind: self.kind,
            tags: self.tags.clone(),
            source: Some(self.source.clone()),
            confidence: Some(self.confidence),
            created: Some(now),
            updated: Some(now),
            review_by: self.review_by,
            expires: self.expires,
            body: self.body.clone(),
        }
    }
}

/// Whether a memory already says what the request would write, times
/// aside: compared as the request's file reads back, since rendering ends
/// a body with a newline (`--body x` twice was a change).
pub fn says_the_same(old: &Memory, req: &Remember) -> bool {
    without_times(old) == as_written(req)
}

/// The memory a request writes as its file reads back, times aside.
fn as_written(req: &Remember) -> Memory {
    let m = req.memory(Timestamp(0));
    without_times(&Memory::parse(&m.render()).unwrap_or(m))
}

/// Whether a pending proposal (of `pending`, as a replay gives them)
/// proposes exactly this memory, times aside.
pub fn is_proposed(pending: &[Event], req: &Remember) -> bool {
    pending.iter().any(|e| {
        e.key.as_ref() == Some(&req.key)
            && Memory::parse(&e.body).is_ok_and(|m| says_the_same(&m, req))
    })
}

/// The memory with its created and updated times taken away.
pub(crate) fn without_times(m: &Memory) -> Memory {
    Memory {
        created: None,
        updated: None,
        ..m.clone()
    }
}
