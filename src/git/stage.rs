//! git's index as a `git commit` beside memoir sees it (the pre-commit
//! hook): what an index stages of the store, what it stages differently
//! from the work tree, and staging store paths into it.

use super::error::{failed, GitError};
use super::Repo;
use gix::bstr::ByteSlice;
use std::collections::{HashMap, HashSet};
use std::path::Path;

impl Repo {
    /// Work-tree-relative paths, `file` and those under `folder`, whose
    /// staged version (in the index at `index_path`) differs from HEAD's:
    /// what a commit would change.
    pub(crate) fn staged_paths(
        &self,
        index_path: &Path,
        file: &str,
        folder: &str,
    ) -> Result<Vec<String>, GitError> {
        let index = self.read_index_at(index_path)?;
        let tree = self.head_tree()?;
        if let Some(tree) = &tree {
            if index_is_head(&index, tree, file, folder)? {
                return Ok(Vec::new());
            }
        }
        let head: HashMap<String, gix::ObjectId> = match &tree {
            Some(tree) => self.tree_files(tree, file, folder)?,
            None => HashMap::new(),
        };
        let mut staged = Vec::new();
        let mut in_index = HashSet::new();
        let range = index
            .prefixed_entries_range(folder.as_bytes().as_bstr())
            .unwrap_or(0..0);
        let file_entry = index.entry_by_path(file.as_bytes().as_bstr());
        for e in index.entries()[range].iter().chain(file_entry) {
            let path = e.path(&index).to_string();
            if head.get(&path) != Some(&e.id) {
                staged.push(path.clone());
            }
            in_index.insert(path);
        }
        // Removed from the index (git rm): staged deletions.
        staged.extend(head.keys().filter(|p| !in_index.contains(*p)).cloned());
        staged.sort();
        staged.dedup();
        Ok(staged)
    }

    /// Paths (work-tree-relative) whose staged blob in the index at
    /// `index_path` differs from the work tree's file: partly staged.
    pub(crate) fn partly_staged(
        &self,
        index_path: &Path,
        paths: &[String],
    ) -> Result<Vec<String>, GitError> {
        let index = self.read_index_at(index_path)?;
        let mut out = Vec::new();
        for p in paths {
            let staged = index
                .entry_by_path(p.as_bytes().as_bstr())
                .map(|e| e.id.to_string());
            let now = read_regular(&self.workdir.join(p)).map(|b| super::blob_id(&b));
            if staged != now {
                out.push(p.clone());
            }
        }
        Ok(out)
    }

    /// Stages `paths` (work-tree-relative) as they are in the work tree (a
    /// missing file is unstaged) into the index at `index_path`: git's own
    /// index under its lock, or the file git named in GIT_INDEX_FILE, which
    /// git holds (or which is temporary), written in place.
    pub(crate) fn stage(&self, index_path: &Path, paths: &[String]) -> Result<(), GitError> {
        let main = self.repo.index_path();
        let is_main = std::fs::canonicalize(index_path).ok() == std::fs::canonicalize(&main).ok();
        let lock = if is_main {
            let backoff = gix::lock::acquire::Fail::AfterDurationWithBackoff(
                std::time::Duration::from_secs(2),
            );
            let lock = gix::lock::File::acquire_to_update_resource(&main, backoff, None, 0)
                .map_err(failed("locking git's index"))?;
            Some(lock)
        } else {
            None
        };
        let mut index = gix::index::File::at(
            index_path,
            self.repo.object_hash(),
            false,
            Default::default(),
        )
        .map_err(failed("reading the index"))?;
        let mut staged = Vec::new();
        for rel in paths {
            let id = match read_regular(&self.workdir.join(rel)) {
                Some(bytes) => Some(
                    self.repo
                        .write_blob(&bytes)
                        .map_err(failed("writing a blob"))?
                        .detach(),
                ),
                None => None,
            };
            staged.push((rel.as_str(), id));
        }
        let bytes = replace_entries(&mut index, &self.workdir, &staged)?;
        match lock {
            Some(mut lock) => {
                std::io::Write::write_all(&mut lock, &bytes)
                    .map_err(GitError::io(lock.lock_path()))?;
                lock.commit().map_err(|e| GitError::Io {
                    path: main,
                    source: e.error,
                })?;
            }
            // In place: git may hold this file open as its own lock.
            None => std::fs::write(index_path, bytes).map_err(GitError::io(index_path))?,
        }
        Ok(())
    }

    /// The index at `index_path` (git's, or the one GIT_INDEX_FILE names).
    fn read_index_at(&self, index_path: &Path) -> Result<gix::index::File, GitError> {
        gix::index::File::at(
            index_path,
            self.repo.object_hash(),
            true,
            Default::default(),
        )
        .map_err(failed("reading the index"))
    }
}

/// Does `index` stage exactly HEAD's `tree` at `file` and under `folder`?
/// The fast path of a commit that stages no store path, on a large store:
/// the index's tree cache still holds the folder's tree id, and it is
/// HEAD's. `false` is "not known to", not "does not".
fn index_is_head(
    index: &gix::index::File,
    tree: &gix::Tree<'_>,
    file: &str,
    folder: &str,
) -> Result<bool, GitError> {
    let Some(cache) = index.tree() else {
        return Ok(false);
    };
    let folder_cached = folder
        .trim_end_matches('/')
        .split('/')
        .try_fold(cache, |t, name| {
            t.children
                .iter()
                .find(|c| c.name.as_slice() == name.as_bytes())
        })
        .filter(|t| t.num_entries.is_some())
        .map(|t| t.id);
    let head_id = |path: &str| -> Result<Option<gix::ObjectId>, GitError> {
        Ok(tree
            .lookup_entry_by_path(path)
            .map_err(failed("looking up a path in HEAD"))?
            .map(|e| e.oid().to_owned()))
    };
    let folder_head = head_id(folder.trim_end_matches('/'))?;
    let file_head = head_id(file)?;
    let file_index = index.entry_by_path(file.as_bytes().as_bstr()).map(|e| e.id);
    Ok(folder_cached.is_some() && folder_cached == folder_head && file_head == file_index)
}

/// Replaces the entries of `paths` (work-tree-relative) in `index`: each
/// with its blob id and the file's stat data now, or removed (`None`);
/// drops the tree cache, or git's next commit would reuse a stale tree
/// (gitoxide #2421). Returns the index file's bytes.
pub(super) fn replace_entries(
    index: &mut gix::index::File,
    workdir: &Path,
    paths: &[(&str, Option<gix::ObjectId>)],
) -> Result<Vec<u8>, GitError> {
    // One pass over the entries, not one per path: at 50,000 entries and
    // 1,000 paths, the difference is 50 million comparisons.
    let ours: HashSet<&[u8]> = paths.iter().map(|(rel, _)| rel.as_bytes()).collect();
    index.remove_entries(|_, p, _| ours.contains(&**p));
    for (rel, id) in paths {
        let Some(id) = id else { continue };
        let path = workdir.join(rel);
        let meta =
            gix::index::fs::Metadata::from_path_no_follow(&path).map_err(GitError::io(&path))?;
        let stat = gix::index::entry::Stat::from_fs(&meta)
            .map_err(|e| GitError::gix(format!("reading the stat data of {rel}"), e))?;
        index.dangerously_push_entry(
            stat,
            *id,
            gix::index::entry::Flags::empty(),
            gix::index::entry::Mode::FILE,
            rel.as_bytes().as_bstr(),
        );
    }
    index.sort_entries();
    index.remove_tree();
    // gix writes a field at a time: unbuffered, that is 50,000 entries'
    // worth of system calls.
    let mut bytes = Vec::new();
    index
        .write_to(&mut bytes, gix::index::write::Options::default())
        .map_err(failed("writing the index"))?;
    Ok(bytes)
}

/// A store file's bytes, as memoir reads any: a regular file only (never
/// blocking on a FIFO, never through a link), within the largest store
/// file's cap. `None` for anything else, which is then not staged.
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    crate::fs::safe_file::read(path, crate::fs::safe_file::MAX_LOG_BYTES)
        .ok()
        .flatten()
}
