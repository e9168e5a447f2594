//! `reindex`: MEMORY.md's generated block written again from the memory
//! files as they are (through the persistent index, brought up to date),
//! without replaying the logs.

use crate::store::{Store, StoreError};

/// Regenerates MEMORY.md from the memory files; `true` if it changed.
pub fn reindex(store: &Store) -> Result<bool, StoreError> {
    let _lock = store.lock()?;
    let cache = crate::index::refresh::refreshed_cache(store)?;
    let block = crate::index::refresh::memory_md_block(&cache, store.config.index_budget);
    let changed = crate::change::memory_md::write(store, &block.text)?;
    crate::index::refresh::save_cache(store, &cache);
    Ok(changed)
}
