//! `reindex`: MEMORY.md's generated block written again from the memory
//! files as they are (through the persistent index, brought up to date),
//! without replaying the logs.

use crate::store::{Store, StoreError};

/// Regenerates MEMORY.md from the memory files; `true` if it changed.
pub fn reindex(store: &Store) -> Result<bool, StoreError> {
    let _lock = store.lock()?;
    let mut index = crate::index::Index::refreshed(store)?;
    let block = index.memory_md_block(store.config.index_budget);
    let changed = crate::change::memory_md::write(store, &block.text)?;
    index.save(store);
    Ok(changed)
}
