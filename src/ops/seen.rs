//! What the agent saw: `memoir seen` reads back the receipts and the
//! access signal that `recall` and `context` leave in the local state
//! (`ops::recall::record`), and `redact` removes what they hold of a
//! secret.
//!
//! All of it is local state (`local::receipts`, `local::access`), never
//! committed.

use crate::local::access::{self, Abstentions};
use crate::local::receipts::{self, Receipt};
use crate::store::{Store, StoreError};
use std::path::Path;

/// Removes what the local state may hold of a secret the logs no longer
/// do (`redact`): the persistent index (its terms; the next reader builds
/// it again), every vector cache (vectors of texts that held it; the next
/// semantic query embeds again), and the secret in the receipts' queries.
/// The caller holds the store lock.
pub fn forget_secrets(store: &Store, stub: &dyn Fn(&str) -> String) -> Result<(), StoreError> {
    crate::index::Index::discard(store)?;
    let index = store.state.index_path();
    let dir = index
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    for entry in std::fs::read_dir(&dir)
        .map_err(StoreError::io(&dir))?
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("vectors-") && name.ends_with(".bin") {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(StoreError::io(&path))?;
        }
    }
    let lock = store.state.seen_lock_path();
    let _lock = receipts::lock(&lock, receipts::LOCK_WAIT).map_err(StoreError::io(&lock))?;
    let path = store.state.receipts_path();
    receipts::rewrite(&path, stub).map_err(StoreError::io(&path))?;
    Ok(())
}

/// What `memoir seen` shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    /// The newest receipts, newest first.
    pub receipts: Vec<Receipt>,
    /// The receipts file (in the local state).
    pub file: std::path::PathBuf,
    /// Lines of the receipts file that could not be read.
    pub skipped: usize,
    /// The context calls that injected nothing.
    pub abstentions: Abstentions,
}

/// The `last` newest receipts, newest first, and the abstentions. Never
/// fails: what cannot be read is not there.
pub fn seen(store: &Store, last: usize) -> Seen {
    read(
        &store.state.receipts_path(),
        &store.state.access_path(),
        last,
    )
}

fn read(receipts_path: &Path, access_path: &Path, last: usize) -> Seen {
    let read = receipts::read(receipts_path);
    // The file is in the order the calls were recorded: that order, not
    // their times (a pinned or corrected clock), says which came last.
    let receipts = read.receipts.into_iter().rev().take(last).collect();
    Seen {
        receipts,
        file: receipts_path.to_path_buf(),
        skipped: read.skipped,
        abstentions: access::load(access_path).abstentions(),
    }
}
