//! What the post-merge and post-rewrite hooks do: settle the memory files
//! and MEMORY.md from the merged logs (a `rebuild` that never destroys a
//! hand change), and count the memories whose versions now disagree.

use crate::change::rebuild::{rebuild, RebuildReport};
use crate::ops::resolve::conflicts;
use crate::store::{Store, StoreError};

/// What settling the views after a merge did.
#[derive(Debug)]
pub struct Settled {
    /// The rebuild's report, or why it failed (a hook never fails a merge).
    pub rebuild: Result<RebuildReport, StoreError>,
    /// Memories whose versions disagree after the merge.
    pub conflicts: usize,
}

/// Settles the views from the merged logs.
pub fn post_merge(store: &Store) -> Settled {
    Settled {
        rebuild: rebuild(store, false, false),
        conflicts: conflicts(store).map_or(0, |c| c.len()),
    }
}
