//! The persistent index's file in local state (`index.bin`): opened in
//! place, loaded whole, saved atomically, removed. It is a cache: a missing,
//! damaged or other version's file reads as empty and is built again.

use crate::index::cache::{Cache, CACHE_VERSION};
use crate::local::state::StateDir;
use crate::model::stamp::Stamp;
use std::fs;
use std::io;

/// Opens the persistent index for reading in place, with its file's
/// modification time; `None` if it is missing, damaged or another version's.
pub fn open(
    state: &StateDir,
    load: crate::index::layout::Load,
) -> Option<(crate::index::layout::OpenIndex, i128)> {
    let path = state.index_path();
    let mtime = Stamp::of(&fs::metadata(&path).ok()?).mtime;
    Some((
        crate::index::layout::OpenIndex::open(&path, CACHE_VERSION, load)?,
        mtime,
    ))
}

/// Loads the persistent index; a missing or unreadable one is empty.
pub fn load(state: &StateDir) -> Cache {
    let path = state.index_path();
    let load = || {
        let mtime = Stamp::of(&fs::metadata(&path).ok()?).mtime;
        let view = crate::index::layout::OpenIndex::open(
            &path,
            CACHE_VERSION,
            crate::index::layout::Load::Decode,
        )?;
        view.into_cache(mtime)
    };
    load().unwrap_or_default()
}

/// Removes the persistent index: the next reader builds it again.
pub fn remove(state: &StateDir) -> io::Result<()> {
    match fs::remove_file(state.index_path()) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Saves the persistent index (atomically; a failure only costs speed).
pub fn save(state: &StateDir, cache: &Cache) -> io::Result<()> {
    crate::fs::replace::replace_with(
        &state.index_path(),
        crate::fs::replace::Durability::Cached,
        |w| crate::index::layout::write(w, cache, CACHE_VERSION),
    )
}
