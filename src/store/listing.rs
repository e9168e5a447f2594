//! Every memory file of the store with its stamp: a listing of each
//! scope's folder and an lstat per file (what a query costs without a
//! watcher to ask, `index::watched`).

use crate::model::stamp::Stamp;
use crate::store::{refuse_symlink, Store, StoreError};
use std::ffi::OsString;
use std::io;

/// Memory file paths on disk in configured scopes, with their stamps.
pub(crate) fn memory_files(store: &Store) -> Result<Vec<(String, Stamp)>, StoreError> {
    for scope in &store.config.scopes {
        let rel_dir = format!("memory/{scope}");
        refuse_symlink(&store.path(&rel_dir), &rel_dir)?;
    }
    // Listing a folder and one lstat per file are most of a query's time
    // on a large store, nearly all of it in the kernel: each folder is
    // listed and its files stat'd on a thread of its own (DirEntry::metadata
    // is an lstat relative to the open folder: no path walk per file, no
    // link followed), and a large folder's files are split over the cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Threads per folder: the cores the folders leave over.
    let split = (cores / store.config.scopes.len().max(1)).clamp(1, 4);
    let listed = crate::parallel::each(
        &store.config.scopes,
        |s| list_folder(store, &format!("memory/{s}"), split),
        || thread_failed(store),
    )?;
    let mut out: Vec<(String, Stamp)> = listed.into_iter().flatten().collect();
    store
        .stats
        .files_listed
        .fetch_add(out.len(), std::sync::atomic::Ordering::Relaxed);
    // Each folder's files came sorted; the folders' order is all that is
    // left to sort (a stable sort of sorted runs is a merge).
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The memory files of one folder with their stamps, in path order; a
/// missing folder has none.
fn list_folder(
    store: &Store,
    rel_dir: &str,
    split: usize,
) -> Result<Vec<(String, Stamp)>, StoreError> {
    let Some(folder) = crate::fs::folder::Folder::open(&store.path(rel_dir)) else {
        return Ok(Vec::new());
    };
    // Each name with its text: a name that is not UTF-8 is stat'ed as it
    // is, and shown lossily (reading it then fails with a warning).
    let mut names: Vec<(OsString, String)> = folder
        .names()
        .map(|raw| {
            let text = raw.to_string_lossy().into_owned();
            (raw, text)
        })
        .filter(|(_, name)| name.ends_with(".md") && !name.starts_with('.'))
        .collect();
    // Sorted here, on this folder's thread, rather than all together.
    names.sort_unstable_by(|a, b| a.1.cmp(&b.1));
    let stamp = |part: &[(OsString, String)]| -> Result<Vec<(String, Stamp)>, StoreError> {
        part.iter()
            .filter_map(|(raw, name)| match folder.stamp(raw) {
                Ok(stamp) => Some(Ok((format!("{rel_dir}/{name}"), stamp))),
                // Removed since the listing (a `forget` beside a query):
                // not there, rather than a failed query.
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => Some(Err(StoreError::Io {
                    path: store.path(rel_dir).join(raw),
                    source: e,
                })),
            })
            .collect()
    };
    let chunk = names.len().div_ceil(split).max(4096);
    if names.len() <= chunk {
        return stamp(&names);
    }
    let parts = crate::parallel::each(names.chunks(chunk), stamp, || thread_failed(store))?;
    Ok(parts.into_iter().flatten().collect())
}

pub(crate) fn thread_failed(store: &Store) -> StoreError {
    StoreError::Io {
        path: store.path("memory"),
        source: io::Error::other("a thread listing memory files failed"),
    }
}
