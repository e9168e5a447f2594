//! Everything memoir asks of git, through gix (the only module that uses it).

use gix::refs::transaction::PreviousValue;
use std::path::{Path, PathBuf};

/// What memoir needs to know about the repository a store lives in.
#[derive(Debug, Clone)]
pub struct RepoInfo {
    /// The work tree's root.
    pub workdir: PathBuf,
    /// The common git directory (shared by all worktrees of a clone).
    pub common_dir: PathBuf,
    /// The current branch's short name; `None` when HEAD is detached.
    pub branch: Option<String>,
    /// The linked worktree's name (`.git/worktrees/<name>`); `None` in the
    /// main work tree.
    pub worktree: Option<String>,
}

/// A git operation failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No repository contains the directory.
    #[error("{0} is not inside a git work tree (run `memoir init` to create one)")]
    NotARepo(PathBuf),
    /// The repository has no work tree.
    #[error("{0} is a bare repository; memoir needs a work tree")]
    Bare(PathBuf),
    /// gix reported an error.
    #[error("git: {0}")]
    Gix(String),
    /// A file of the work tree could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn gix_err(e: impl std::fmt::Display) -> GitError {
    GitError::Gix(e.to_string())
}

/// The repository named by the caller (git's `GIT_DIR`, with the work tree
/// `GIT_WORK_TREE` or the directory git would take), for every later
/// lookup of this process: the CLI reads git's environment, the core is
/// told. Set once; later calls are ignored.
pub fn use_repository(git_dir: PathBuf, work_tree: PathBuf) {
    let _ = NAMED.set((git_dir, work_tree));
}

static NAMED: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();

/// The repository for `dir`: the one named by [`use_repository`], else the
/// one found at or above `dir`.
fn open_repo(dir: &Path) -> Result<gix::Repository, GitError> {
    match NAMED.get() {
        Some((git_dir, work_tree)) => {
            let worktree = format!("core.worktree={}", work_tree.display());
            gix::open_opts(
                git_dir,
                gix::open::Options::default().config_overrides([worktree.as_str()]),
            )
            .map_err(|e| GitError::Gix(format!("GIT_DIR {}: {e}", git_dir.display())))
        }
        None => gix::discover(dir).map_err(|_| GitError::NotARepo(dir.to_path_buf())),
    }
}

/// Finds the repository containing `dir`.
pub fn discover(dir: &Path) -> Result<RepoInfo, GitError> {
    let repo = open_repo(dir)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::Bare(dir.to_path_buf()))?
        .to_path_buf();
    let branch = repo
        .head_name()
        .map_err(gix_err)?
        .map(|name| name.shorten().to_string());
    let worktree = (repo.git_dir() != repo.common_dir())
        .then(|| {
            repo.git_dir()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .flatten();
    Ok(RepoInfo {
        workdir,
        common_dir: repo.common_dir().to_path_buf(),
        branch,
        worktree,
    })
}

/// The identity git would commit as (`user.name` and `user.email`, or the
/// `GIT_AUTHOR_*` variables git honours), as `Name <email>`.
pub fn identity(dir: &Path) -> Option<String> {
    let repo = open_repo(dir).ok()?;
    let sig = repo.author()?.ok()?;
    Some(format!("{} <{}>", sig.name, sig.email))
}

/// Creates a repository with a work tree at `dir`.
pub fn init(dir: &Path) -> Result<(), GitError> {
    gix::init(dir).map(drop).map_err(gix_err)
}

/// A commit being prepared: the repository checked, git's index lock held.
///
/// The lock is taken before memoir appends anything, so that a refusal
/// leaves no trace and no other git process can move the index under the
/// commit; it is released (or committed) when this is dropped or finished.
pub struct Session {
    repo: gix::Repository,
    lock: gix::lock::File,
    head: Option<gix::ObjectId>,
    workdir: PathBuf,
    stop_after_index: bool,
    _owner: OwnerNote,
}

/// The note that this process holds git's index lock; removed with it.
struct OwnerNote(PathBuf);

impl Drop for OwnerNote {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Is process `pid` alive? (Unknown platforms: assume so.)
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

/// Who a commit is by, and when.
#[derive(Debug, Clone)]
pub struct Signature {
    /// `user.name`.
    pub name: String,
    /// `user.email`.
    pub email: String,
    /// Seconds since the epoch (UTC).
    pub seconds: i64,
}

/// Why a commit cannot be made; nothing has been written (except, when
/// HEAD could not be moved at the end, git's index: see [`Session::commit`]).
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// No author identity.
    #[error("no git identity: set user.name and user.email (git config) or MEMOIR_AUTHOR=\"Name <email>\"")]
    NoIdentity,
    /// HEAD is detached.
    #[error("HEAD is detached: check out a branch first (or pass --allow-detached)")]
    Detached,
    /// A merge, rebase, cherry-pick or revert is in progress.
    #[error("a {0} is in progress: finish or abort it first")]
    InProgress(&'static str),
    /// Another process holds git's index lock.
    #[error("git's index is locked by another process ({0}); if no git command is running, remove that file")]
    IndexLocked(PathBuf),
    /// The branch's ref is locked.
    #[error("the branch is locked ({0}): a git command is running, or one was killed; if none runs, remove that file")]
    RefLocked(PathBuf),
    /// gix failed.
    #[error("git: {0}")]
    Gix(String),
}

fn commit_err(e: impl std::fmt::Display) -> CommitError {
    CommitError::Gix(e.to_string())
}

/// Checks the preconditions of a commit and takes git's index lock.
/// `author` overrides git's configured identity. `owner` is a file in
/// memoir's local state that records which process holds the index lock:
/// a lock left by a memoir process that died (kill -9) is removed, since the
/// caller holds the store lock and so no other memoir of this store is
/// committing; a lock held by anything else is refused.
pub fn begin(
    dir: &Path,
    author: Option<(String, String)>,
    allow_detached: bool,
    owner: &Path,
) -> Result<(Session, Signature), CommitError> {
    let repo = open_repo(dir).map_err(commit_err)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| commit_err("a bare repository has no work tree"))?
        .to_path_buf();
    let (name, email) = match author {
        Some(a) => a,
        None => {
            let sig = repo
                .author()
                .ok_or(CommitError::NoIdentity)?
                .map_err(|_| CommitError::NoIdentity)?;
            (sig.name.to_string(), sig.email.to_string())
        }
    };
    if name.trim().is_empty() || email.trim().is_empty() {
        return Err(CommitError::NoIdentity);
    }
    if repo.head_name().map_err(commit_err)?.is_none() && !allow_detached {
        return Err(CommitError::Detached);
    }
    let git_dir = repo.git_dir();
    for (file, what) in [
        ("MERGE_HEAD", "merge"),
        ("rebase-merge", "rebase"),
        ("rebase-apply", "rebase"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ] {
        if git_dir.join(file).exists() {
            return Err(CommitError::InProgress(what));
        }
    }
    // The branch's ref lock (a git command running, or one killed inside
    // its ref update): found after the append, it left a version half made.
    let ref_lock = match repo.head_name().map_err(commit_err)? {
        Some(name) => repo.common_dir().join(format!("{}.lock", name.as_bstr())),
        None => git_dir.join("HEAD.lock"),
    };
    if ref_lock.exists() {
        return Err(CommitError::RefLocked(ref_lock));
    }
    let index_path = repo.index_path();
    let lock_path = index_path.with_extension("lock");
    if lock_path.exists() {
        // The note is written just before the lock is taken: a lock much
        // younger than the note is someone else's, taken after that memoir
        // died (its note outlived it), and is never removed.
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let taken_with_note = match (modified(owner), modified(&lock_path)) {
            (Some(note), Some(lock)) => lock
                .duration_since(note)
                .map_or(true, |d| d < std::time::Duration::from_secs(2)),
            _ => false,
        };
        let dead_owner = taken_with_note
            && std::fs::read_to_string(owner)
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
                .is_some_and(|pid| pid != std::process::id() && !alive(pid));
        if dead_owner {
            let _ = std::fs::remove_file(&lock_path);
        }
    }
    // The note goes first: a memoir killed right after taking the lock is
    // then still known as its owner (written after, a kill between the two
    // left a lock that no later memoir would remove).
    std::fs::write(owner, std::process::id().to_string()).map_err(commit_err)?;
    let lock = gix::lock::File::acquire_to_update_resource(
        &index_path,
        gix::lock::acquire::Fail::Immediately,
        None,
        0,
    )
    .map_err(|_| {
        let _ = std::fs::remove_file(owner);
        CommitError::IndexLocked(lock_path.clone())
    })?;
    let head = repo.head_id().ok().map(|id| id.detach());
    Ok((
        Session {
            repo,
            lock,
            head,
            workdir,
            stop_after_index: false,
            _owner: OwnerNote(owner.to_path_buf()),
        },
        Signature {
            name,
            email,
            seconds: 0,
        },
    ))
}

impl Session {
    /// The work tree's root.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Makes [`Session::commit`] stop after writing git's index, before
    /// moving HEAD, as a crash there would (a test's failpoint).
    pub fn stop_after_index(&mut self, stop: bool) {
        self.stop_after_index = stop;
    }

    /// Commits exactly `paths` (work-tree-relative, `/`-separated) as they
    /// are in the work tree (a missing file is removed), on top of HEAD,
    /// updating just those entries of git's index so that `git status` is
    /// clean for them and everything else the user staged stays staged.
    /// Returns the new commit's id, or `None` when nothing changed. If HEAD
    /// cannot be moved, git's index already has the paths staged.
    pub fn commit(
        mut self,
        paths: &[String],
        message: &str,
        sig: &Signature,
    ) -> Result<Option<String>, CommitError> {
        let repo = &self.repo;
        let base_tree = match self.head {
            Some(head) => repo
                .find_commit(head)
                .map_err(commit_err)?
                .tree_id()
                .map_err(commit_err)?
                .detach(),
            None => gix::ObjectId::empty_tree(repo.object_hash()),
        };
        let mut editor = repo.edit_tree(base_tree).map_err(commit_err)?;
        let mut blobs = Vec::new();
        for rel in paths {
            let abs = self.workdir.join(rel);
            // Only a regular file is a version of a store path (a link or a
            // FIFO is never opened, so never followed or waited on).
            match crate::store::safe_file::read(&abs, crate::store::safe_file::MAX_LOG_BYTES) {
                Err(crate::store::safe_file::ReadError::TooLarge(n)) => {
                    return Err(commit_err(format!("{rel}: {n} bytes, too large to commit")))
                }
                Err(crate::store::safe_file::ReadError::Io(e)) => return Err(commit_err(e)),
                Ok(Some(bytes)) => {
                    let id = repo.write_blob(&bytes).map_err(commit_err)?.detach();
                    editor
                        .upsert(rel.as_str(), gix::object::tree::EntryKind::Blob, id)
                        .map_err(commit_err)?;
                    blobs.push((rel.as_str(), Some(id)));
                }
                _ => {
                    editor.remove(rel.as_str()).map_err(commit_err)?;
                    blobs.push((rel.as_str(), None));
                }
            }
        }
        let tree = editor.write().map_err(commit_err)?.detach();
        if self.head.is_some() && tree == base_tree {
            return Ok(None);
        }
        let time = format!("{} +0000", sig.seconds);
        let who = gix::actor::SignatureRef {
            name: sig.name.as_str().into(),
            email: sig.email.as_str().into(),
            time: &time,
        };
        let parents: Vec<gix::ObjectId> = self.head.into_iter().collect();
        let commit = repo
            .write_object(gix::objs::Commit {
                message: message.into(),
                tree,
                author: who.into(),
                committer: who.into(),
                encoding: None,
                parents: parents.iter().copied().collect(),
                extra_headers: Vec::new(),
            })
            .map_err(commit_err)?
            .detach();
        // git's index before HEAD: killed between the two, the index has
        // the new blobs and HEAD does not, which the next commit of these
        // paths puts right (they differ from HEAD). The other order left
        // HEAD with files that git's index lacked: `git status` showed them
        // staged for deletion, and the next memoir commit saw no change.
        // Only our paths change; the tree cache goes, or the user's next
        // `git commit` would reuse a stale tree (gitoxide #2421).
        let mut index = gix::index::File::at_or_default(
            repo.index_path(),
            repo.object_hash(),
            false,
            Default::default(),
        )
        .map_err(commit_err)?;
        let bytes = replace_entries(&mut index, &self.workdir, &blobs).map_err(commit_err)?;
        std::io::Write::write_all(&mut self.lock, &bytes).map_err(commit_err)?;
        self.lock.commit().map_err(commit_err)?;
        // The index lock is gone: so must the note that this process held
        // it, at once (left behind by a kill, it would make a later memoir
        // remove a lock git itself holds by then).
        let _ = std::fs::remove_file(&self._owner.0);
        if self.stop_after_index {
            return Err(commit_err(
                "failpoint after-index: stopped before moving HEAD",
            ));
        }
        // As `git commit` (and gix's `commit_as`) move it: through HEAD to
        // its branch, only from the commit it was on.
        let expected = match self.head {
            Some(head) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(head)),
            None => PreviousValue::MustNotExist,
        };
        let log = gix::reference::log::message("commit", message.into(), parents.len());
        let edit = gix::refs::transaction::RefEdit::update(
            "HEAD".try_into().map_err(commit_err)?,
            commit,
            expected,
            log,
        )
        .with_deref(true);
        repo.edit_references_as(Some(edit), Some(who))
            .map_err(commit_err)?;
        Ok(Some(commit.to_string()))
    }
}

/// Replaces the entries of `paths` (work-tree-relative) in `index`: each
/// with its blob id and the file's stat data now, or removed (`None`); drops
/// the tree cache, or git's next commit would reuse a stale tree (gitoxide
/// #2421). Returns the index file's bytes.
fn replace_entries(
    index: &mut gix::index::File,
    workdir: &Path,
    paths: &[(&str, Option<gix::ObjectId>)],
) -> Result<Vec<u8>, GitError> {
    use gix::bstr::ByteSlice;
    // One pass over the entries, not one per path: at 50,000 entries and
    // 1,000 paths, the difference is 50 million comparisons.
    let ours: std::collections::HashSet<&[u8]> =
        paths.iter().map(|(rel, _)| rel.as_bytes()).collect();
    index.remove_entries(|_, p, _| ours.contains(&**p));
    for (rel, id) in paths {
        let Some(id) = id else { continue };
        let meta =
            gix::index::fs::Metadata::from_path_no_follow(&workdir.join(rel)).map_err(gix_err)?;
        let stat = gix::index::entry::Stat::from_fs(&meta).map_err(gix_err)?;
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
        .map_err(gix_err)?;
    Ok(bytes)
}

/// The git blob id of `bytes` (what `git hash-object` prints).
pub fn blob_id(bytes: &[u8]) -> String {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .map(|id| id.to_string())
        .unwrap_or_default()
}

/// Blob ids of the files HEAD has at `file` and under the folder `dir`
/// (work-tree-relative, `dir` ending in `/`); empty on an unborn branch.
pub fn head_files(
    workdir: &Path,
    file: &str,
    dir: &str,
) -> Result<std::collections::HashMap<String, String>, GitError> {
    let repo = open_repo(workdir)?;
    let Ok(commit) = repo.head_commit() else {
        return Ok(Default::default());
    };
    let tree = commit.tree().map_err(gix_err)?;
    Ok(tree_files(&repo, &tree, file, dir)?
        .into_iter()
        .map(|(path, id)| (path, id.to_string()))
        .collect())
}

/// Work-tree-relative paths of the store's files that differ from HEAD:
/// `file` and the files under `dir` (ending in `/`) that are new, changed
/// or gone, what `git add -A` would stage of them; sorted. `keep` says by
/// file name which files are the store's (an interrupted write's temporary
/// files are not).
///
/// Like `git status`, it trusts git's index: a file whose stat data still
/// matches its entry, which is not racily clean, has the entry's blob and
/// is not read. Whether the entries are HEAD's blobs is one comparison: the
/// id of the tree the index would write for `dir` against HEAD's; only if
/// they differ (something staged) are HEAD's files listed one by one.
pub fn changed_paths(
    workdir: &Path,
    file: &str,
    dir: &str,
    keep: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Vec<String>, GitError> {
    use gix::bstr::ByteSlice;
    let repo = open_repo(workdir)?;
    let tree = match repo.head_commit() {
        Ok(commit) => Some(commit.tree().map_err(gix_err)?),
        Err(_) => None,
    };
    let index_path = repo.index_path();
    let index = if index_path.exists() {
        gix::index::File::at(&index_path, repo.object_hash(), false, Default::default())
            .map_err(gix_err)?
    } else {
        gix::index::File::from_state(
            gix::index::State::new(repo.object_hash()),
            index_path.clone(),
        )
    };
    let range = index
        .prefixed_entries_range(dir.as_bytes().as_bstr())
        .unwrap_or(0..0);
    let entries = &index.entries()[range];
    let file_entry = index.entry_by_path(file.as_bytes().as_bstr());
    // A sparse checkout leaves such files out of the work tree: committed
    // from what is there, they would be deleted.
    let sparse = gix::index::entry::Flags::SKIP_WORKTREE;
    if let Some(e) = entries
        .iter()
        .chain(file_entry)
        .find(|e| e.flags.contains(sparse))
    {
        return Err(GitError::Gix(format!(
            "{} is outside this sparse checkout; memoir commits the whole store only: `git sparse-checkout add {dir}`",
            e.path(&index)
        )));
    }
    // One lstat per entry is most of this on a large store: spread over the
    // cores, as `git status` does, beside the listing of the folder (for
    // files the index lacks) and the comparison of the index with HEAD.
    let threads = crate::worker_threads();
    let chunk = entries.len().div_ceil(threads).max(1024);
    let (listed, fresh, head) = std::thread::scope(|scope| {
        let listing = scope.spawn(|| list_files(workdir, dir, keep));
        let workers: Vec<_> = entries
            .chunks(chunk)
            .map(|part| scope.spawn(|| fresh_entries(workdir, &index, part)))
            .collect();
        let head = HeadFiles::of(&repo, tree.as_ref(), &index, entries, file_entry, file, dir);
        // A worker that panicked vouches for nothing: its files are read.
        let fresh: Vec<bool> = workers
            .into_iter()
            .zip(entries.chunks(chunk))
            .flat_map(|(w, part)| w.join().unwrap_or_else(|_| vec![false; part.len()]))
            .collect();
        let listed = listing.join().unwrap_or_else(|_| {
            Err(GitError::Io {
                path: workdir.join(dir),
                source: std::io::Error::other("the thread listing the folder failed"),
            })
        });
        (listed, fresh, head)
    });
    let (listed, head) = (listed?, head?);
    let mut out = Vec::new();
    // Is the file at `path` (its index entry and whether the entry's stat
    // data vouches for it) other than HEAD's blob?
    let differs = |path: &str, entry: Option<&gix::index::Entry>, fresh: bool| {
        let head_id = head.id(path, entry);
        if let Some(e) = entry.filter(|_| fresh) {
            return Ok(head_id != Some(e.id));
        }
        use crate::store::safe_file::ReadError;
        match crate::store::safe_file::read(
            &workdir.join(path),
            crate::store::safe_file::MAX_LOG_BYTES,
        ) {
            Ok(Some(bytes)) => {
                let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &bytes)
                    .map_err(gix_err)?;
                Ok(head_id != Some(id))
            }
            // No file there as far as a commit goes: a link or a FIFO is
            // never read (a commit leaves it out).
            Ok(None) | Err(ReadError::Link | ReadError::NotRegular) => Ok(head_id.is_some()),
            Err(ReadError::TooLarge(n)) => Err(GitError::Io {
                path: workdir.join(path),
                source: std::io::Error::other(format!("{n} bytes, more than memoir reads")),
            }),
            Err(ReadError::Io(source)) => Err(GitError::Io {
                path: workdir.join(path),
                source,
            }),
        }
    };
    // The folder: the sorted listing against the index's sorted entries.
    let (mut l, mut i) = (0, 0);
    while l < listed.len() || i < entries.len() {
        // A conflict's stages are no version of the file: as if unstaged.
        if entries.get(i).is_some_and(|e| e.stage_raw() != 0) {
            i += 1;
            continue;
        }
        let order = match (listed.get(l), entries.get(i)) {
            (Some(path), Some(e)) => path.as_bytes().cmp(e.path(&index).as_bytes()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                if differs(&listed[l], None, false)? {
                    out.push(listed[l].clone());
                }
                l += 1;
            }
            std::cmp::Ordering::Equal => {
                if differs(&listed[l], Some(&entries[i]), fresh[i])? {
                    out.push(listed[l].clone());
                }
                l += 1;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                // In the index, not in the folder: gone, if HEAD has it.
                let path = entries[i].path(&index).to_str_lossy();
                if head.id(&path, Some(&entries[i])).is_some() {
                    out.push(path.into_owned());
                }
                i += 1;
            }
        }
    }
    // What HEAD has and neither the index nor the folder has.
    for path in head.listed_paths() {
        if listed.binary_search_by(|p| p.as_str().cmp(path)).is_err()
            && index.entry_by_path(path.as_bytes().as_bstr()).is_none()
        {
            out.push(path.to_string());
        }
    }
    let fresh_file = file_entry
        .is_some_and(|e| fresh_entries(workdir, &index, std::slice::from_ref(e)) == [true]);
    if differs(file, file_entry, fresh_file)? {
        out.push(file.to_string());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Which of the index's `entries` (in its order) git's index vouches for:
/// not racily clean, and the file's stat data as the entry has it.
// The casts are of `stat` fields, whose types differ between unix targets.
#[allow(clippy::unnecessary_cast)]
fn fresh_entries(
    workdir: &Path,
    index: &gix::index::File,
    entries: &[gix::index::Entry],
) -> Vec<bool> {
    use gix::bstr::ByteSlice;
    let options = gix::index::entry::stat::Options::default();
    let racy = |e: &gix::index::Entry| e.stat.is_racy(index.timestamp(), options);
    #[cfg(unix)]
    {
        use crate::store::folder::Folder;
        // Each file by its name in its folder, opened once for the run of
        // entries in it.
        let mut folder: Option<(&[u8], Option<Folder>)> = None;
        entries
            .iter()
            .map(|e| {
                if racy(e) {
                    return false;
                }
                let path = e.path(index).as_bytes();
                let (parent, name) = match path.rfind_byte(b'/') {
                    Some(at) => (&path[..at], &path[at + 1..]),
                    None => (&path[..0], path),
                };
                if folder.as_ref().map(|(p, _)| *p) != Some(parent) {
                    let dir = workdir.join(parent.to_str_lossy().as_ref());
                    folder = Some((parent, Folder::open(&dir)));
                }
                let Some((_, Some(open))) = &folder else {
                    return false;
                };
                let Ok(st) = open.stat(name) else {
                    return false;
                };
                // As gix's `Stat::from_fs` has it (git keeps 32 bits of each).
                let time = |secs: i64, nsecs: u64| gix::index::entry::stat::Time {
                    secs: u32::try_from(secs).unwrap_or_default(),
                    nsecs: nsecs as u32,
                };
                let stat = gix::index::entry::Stat {
                    mtime: time(st.st_mtime as i64, st.st_mtime_nsec as u64),
                    ctime: time(st.st_ctime as i64, st.st_ctime_nsec as u64),
                    dev: st.st_dev as u32,
                    ino: st.st_ino as u32,
                    uid: st.st_uid,
                    gid: st.st_gid,
                    size: st.st_size as u32,
                };
                e.stat.matches(&stat, options)
            })
            .collect()
    }
    #[cfg(not(unix))]
    entries
        .iter()
        .map(|e| {
            !racy(e)
                && gix::index::fs::Metadata::from_path_no_follow(
                    &workdir.join(&*e.path(index).to_str_lossy()),
                )
                .ok()
                .and_then(|meta| gix::index::entry::Stat::from_fs(&meta).ok())
                .is_some_and(|st| e.stat.matches(&st, options))
        })
        .collect()
}

/// Work-tree-relative paths of the files under `dir` whose name `keep`
/// takes, sorted as git's index sorts them (by bytes). Symbolic links are
/// not followed, nor listed.
fn list_files(
    workdir: &Path,
    dir: &str,
    keep: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Vec<String>, GitError> {
    let mut files = Vec::new();
    let root = workdir.join(dir);
    for entry in walkdir::WalkDir::new(&root).follow_links(false) {
        let entry = match entry {
            Ok(entry) => entry,
            // Gone since its folder was listed (or no folder at all): what
            // is gone is found gone from the index's side.
            Err(e) if e.io_error().map(|e| e.kind()) == Some(std::io::ErrorKind::NotFound) => {
                continue
            }
            Err(e) => {
                let path = e.path().unwrap_or(&root).to_path_buf();
                let source = e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("a symbolic link loop"));
                return Err(GitError::Io { path, source });
            }
        };
        if entry.file_type().is_file() && keep(&entry.file_name().to_string_lossy()) {
            if let Ok(rel) = entry.path().strip_prefix(workdir) {
                files.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort_unstable();
    Ok(files)
}

/// HEAD's blob ids for the store's paths: the index's own where its tree
/// for the folder (and its entry for the file) is HEAD's, else HEAD's
/// files listed one by one.
enum HeadFiles {
    /// No commit yet: HEAD has no file.
    Unborn,
    /// The index's stage-0 entries are exactly HEAD's files.
    Index,
    /// HEAD's files, where the index differs from them.
    Listed(std::collections::HashMap<String, gix::ObjectId>),
}

impl HeadFiles {
    fn of(
        repo: &gix::Repository,
        tree: Option<&gix::Tree<'_>>,
        index: &gix::index::File,
        entries: &[gix::index::Entry],
        file_entry: Option<&gix::index::Entry>,
        file: &str,
        dir: &str,
    ) -> Result<HeadFiles, GitError> {
        let Some(tree) = tree else {
            return Ok(HeadFiles::Unborn);
        };
        let head_id = |path: &str, tree_kind: bool| -> Result<Option<gix::ObjectId>, GitError> {
            Ok(tree
                .lookup_entry_by_path(path)
                .map_err(gix_err)?
                .filter(|e| e.mode().is_tree() == tree_kind)
                .map(|e| e.oid().to_owned()))
        };
        let same_file = head_id(file, false)? == file_entry.map(|e| e.id);
        let index_dir = if entries.is_empty() {
            None
        } else {
            index_tree_id(repo.object_hash(), index, entries, dir)
        };
        let head_dir = head_id(dir.trim_end_matches('/'), true)?;
        if same_file && (entries.is_empty() || index_dir.is_some()) && index_dir == head_dir {
            return Ok(HeadFiles::Index);
        }
        Ok(HeadFiles::Listed(tree_files(repo, tree, file, dir)?))
    }

    /// HEAD's blob id at `path`, whose index entry is `entry`.
    fn id(&self, path: &str, entry: Option<&gix::index::Entry>) -> Option<gix::ObjectId> {
        match self {
            HeadFiles::Unborn => None,
            HeadFiles::Index => entry.filter(|e| e.stage_raw() == 0).map(|e| e.id),
            HeadFiles::Listed(files) => files.get(path).copied(),
        }
    }

    /// The paths HEAD has, where they were listed one by one.
    fn listed_paths(&self) -> impl Iterator<Item = &str> {
        let files = match self {
            HeadFiles::Listed(files) => Some(files),
            _ => None,
        };
        files.into_iter().flat_map(|f| f.keys().map(String::as_str))
    }
}

/// The id of the tree git's index would write for the folder `dir`
/// (work-tree-relative, ending in `/`), as `git write-tree --prefix=<dir>`
/// prints it, without writing it: what [`changed_paths`] compares with
/// HEAD's. `None` if the index cannot make one (no entry under `dir`, a
/// conflict's stages, a sparse folder entry).
pub fn index_tree(workdir: &Path, dir: &str) -> Result<Option<String>, GitError> {
    use gix::bstr::ByteSlice;
    let repo = open_repo(workdir)?;
    let index = repo.open_index().map_err(gix_err)?;
    let Some(range) = index.prefixed_entries_range(dir.as_bytes().as_bstr()) else {
        return Ok(None);
    };
    let entries = &index.entries()[range];
    if entries.is_empty() {
        return Ok(None);
    }
    Ok(index_tree_id(repo.object_hash(), &index, entries, dir).map(|id| id.to_string()))
}

/// The id of the tree git would write for the index `entries` under `dir`
/// (all of them, sorted, as the index keeps them); `None` if they cannot
/// make one (a conflict's stages, a sparse folder entry).
fn index_tree_id(
    hash: gix::hash::Kind,
    index: &gix::index::File,
    entries: &[gix::index::Entry],
    dir: &str,
) -> Option<gix::ObjectId> {
    use gix::bstr::ByteSlice;
    // The folders open along the current path, each with its tree's bytes:
    // the index's order (by path bytes) is the order git writes a tree's
    // entries in, a folder sorting as its name with a `/`.
    let mut open: Vec<(&[u8], Vec<u8>)> = vec![(&[], Vec::new())];
    let mut mode_bytes = [0u8; 6];
    let close = |open: &mut Vec<(&[u8], Vec<u8>)>| -> Option<()> {
        let (name, bytes) = open.pop()?;
        let id = gix::objs::compute_hash(hash, gix::objs::Kind::Tree, &bytes).ok()?;
        let parent = &mut open.last_mut()?.1;
        parent.extend_from_slice(b"40000 ");
        parent.extend_from_slice(name);
        parent.push(0);
        parent.extend_from_slice(id.as_bytes());
        Some(())
    };
    for e in entries {
        let mode = e.mode.to_tree_entry_mode()?;
        if e.stage_raw() != 0 || mode.is_tree() {
            return None;
        }
        let rel = e.path(index).as_bytes().get(dir.len()..)?;
        let (folders, name) = match rel.rfind_byte(b'/') {
            Some(at) => (&rel[..at], &rel[at + 1..]),
            None => (&rel[..0], rel),
        };
        let parts: Vec<&[u8]> = if folders.is_empty() {
            Vec::new()
        } else {
            folders.split_str("/").collect()
        };
        let common = parts
            .iter()
            .zip(&open[1..])
            .take_while(|(part, (open, _))| *part == open)
            .count();
        while open.len() > common + 1 {
            close(&mut open)?;
        }
        for part in &parts[common..] {
            open.push((part, Vec::new()));
        }
        let bytes = &mut open.last_mut()?.1;
        bytes.extend_from_slice(mode.as_bytes(&mut mode_bytes));
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(e.id.as_bytes());
    }
    while open.len() > 1 {
        close(&mut open)?;
    }
    gix::objs::compute_hash(hash, gix::objs::Kind::Tree, &open.first()?.1).ok()
}

fn tree_files(
    repo: &gix::Repository,
    tree: &gix::Tree<'_>,
    file: &str,
    dir: &str,
) -> Result<std::collections::HashMap<String, gix::ObjectId>, GitError> {
    let mut out = std::collections::HashMap::new();
    if let Some(e) = tree.lookup_entry_by_path(file).map_err(gix_err)? {
        if e.mode().is_blob() {
            out.insert(file.to_string(), e.oid().to_owned());
        }
    }
    let Some(folder) = tree
        .lookup_entry_by_path(dir.trim_end_matches('/'))
        .map_err(gix_err)?
    else {
        return Ok(out);
    };
    let mut stack = vec![(folder.oid().to_owned(), dir.to_string())];
    while let Some((id, prefix)) = stack.pop() {
        let tree = repo.find_tree(id).map_err(gix_err)?;
        for entry in tree.iter() {
            let entry = entry.map_err(gix_err)?;
            let path = format!("{prefix}{}", entry.filename());
            if entry.mode().is_tree() {
                stack.push((entry.oid().to_owned(), format!("{path}/")));
            } else if entry.mode().is_blob() {
                out.insert(path, entry.oid().to_owned());
            }
        }
    }
    Ok(out)
}

/// The contents of the files a revision (any revspec: id, tag, `HEAD~2`)
/// has at `file` and under `dir`, and the commit it names. A blob larger
/// than `cap(path)` is an error, found from its header before it is read:
/// a revision is anyone's input (a pull request's head).
pub fn files_at(
    workdir: &Path,
    rev: &str,
    file: &str,
    dir: &str,
    cap: &dyn Fn(&str) -> u64,
) -> Result<(String, std::collections::BTreeMap<String, Vec<u8>>), GitError> {
    let repo = open_repo(workdir)?;
    let commit = repo
        .rev_parse_single(rev)
        .map_err(|e| GitError::Gix(format!("`{rev}` is not a revision: {e}")))?
        .object()
        .map_err(gix_err)?
        .peel_to_commit()
        .map_err(|e| GitError::Gix(format!("`{rev}` is not a commit: {e}")))?;
    let tree = commit.tree().map_err(gix_err)?;
    let mut out = std::collections::BTreeMap::new();
    for (path, id) in tree_files(&repo, &tree, file, dir)? {
        let size = repo.find_header(id).map_err(gix_err)?.size();
        if size > cap(&path) {
            return Err(GitError::Gix(format!(
                "{path} at {rev} is {size} bytes, more than memoir reads"
            )));
        }
        let mut blob = repo.find_blob(id).map_err(gix_err)?;
        out.insert(path, blob.take_data());
    }
    Ok((commit.id.to_string(), out))
}

/// The contents HEAD has at each of `paths` (work-tree-relative), for those
/// it has as files; empty on an unborn branch.
pub fn head_blobs(
    workdir: &Path,
    paths: &[&str],
) -> Result<std::collections::HashMap<String, Vec<u8>>, GitError> {
    let repo = open_repo(workdir)?;
    let mut out = std::collections::HashMap::new();
    let Ok(commit) = repo.head_commit() else {
        return Ok(out);
    };
    let tree = commit.tree().map_err(gix_err)?;
    for path in paths {
        if let Some(e) = tree.lookup_entry_by_path(path).map_err(gix_err)? {
            if e.mode().is_blob() {
                let mut blob = repo.find_blob(e.oid()).map_err(gix_err)?;
                out.insert(path.to_string(), blob.take_data());
            }
        }
    }
    Ok(out)
}

/// A commit memoir made when it consolidated the store.
#[derive(Debug, Clone)]
pub struct Version {
    /// The commit id.
    pub id: String,
    /// Commit time, seconds since the epoch.
    pub seconds: i64,
    /// `Name <email>` of the author.
    pub author: String,
    /// The message's first line.
    pub summary: String,
    /// The `Memoir-Consolidation` trailer: the consolidate event's id.
    pub event: String,
    /// The `Memoir-Counts` trailer.
    pub counts: String,
}

/// The consolidation commits reachable from HEAD, newest first: those
/// whose message carries a `Memoir-Consolidation:` trailer.
pub fn versions(dir: &Path) -> Result<Vec<Version>, GitError> {
    let repo = open_repo(dir)?;
    let Ok(head) = repo.head_id() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for info in repo.rev_walk([head.detach()]).all().map_err(gix_err)? {
        let info = info.map_err(gix_err)?;
        let commit = repo.find_commit(info.id).map_err(gix_err)?;
        let message = commit.message_raw_sloppy().to_string();
        let trailer = |name: &str| {
            message
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        let Some(event) = trailer("Memoir-Consolidation:") else {
            continue;
        };
        let author = commit.author().map_err(gix_err)?;
        out.push(Version {
            id: info.id.to_string(),
            seconds: commit.time().map_err(gix_err)?.seconds,
            author: format!("{} <{}>", author.name, author.email),
            summary: message.lines().next().unwrap_or("").to_string(),
            event,
            counts: trailer("Memoir-Counts:").unwrap_or_default(),
        });
    }
    Ok(out)
}

/// For each needle, the oldest commit reachable from HEAD in which one of
/// `paths` (work-tree-relative) contains it: the commit that carried it.
pub fn first_commits(
    workdir: &Path,
    paths: &[String],
    needles: &[String],
) -> Result<std::collections::HashMap<String, String>, GitError> {
    let mut found = std::collections::HashMap::new();
    let repo = open_repo(workdir)?;
    let Ok(head) = repo.head_id() else {
        return Ok(found);
    };
    let mut commits: Vec<gix::ObjectId> = Vec::new();
    for info in repo.rev_walk([head.detach()]).all().map_err(gix_err)? {
        commits.push(info.map_err(gix_err)?.id);
    }
    for id in commits.into_iter().rev() {
        if found.len() == needles.len() {
            break;
        }
        let tree = repo
            .find_commit(id)
            .map_err(gix_err)?
            .tree()
            .map_err(gix_err)?;
        for path in paths {
            let Some(entry) = tree.lookup_entry_by_path(path).map_err(gix_err)? else {
                continue;
            };
            let mut blob = repo.find_blob(entry.oid().to_owned()).map_err(gix_err)?;
            let data = blob.take_data();
            let text = String::from_utf8_lossy(&data);
            for n in needles {
                if !found.contains_key(n) && text.contains(n.as_str()) {
                    found.insert(n.clone(), id.to_string());
                }
            }
        }
    }
    Ok(found)
}

/// If HEAD is a `git revert` of a memoir consolidation or rollback commit,
/// the reverted commit's id. (A revert deletes log entries, which are
/// append-only: `memoir rollback` is the way back.)
pub fn head_reverts_a_version(dir: &Path) -> Result<Option<String>, GitError> {
    let repo = open_repo(dir)?;
    let Ok(head) = repo.head_commit() else {
        return Ok(None);
    };
    let message = head.message_raw_sloppy().to_string();
    let Some(reverted) = message
        .lines()
        .find_map(|l| l.trim().strip_prefix("This reverts commit "))
        .map(|r| r.trim_end_matches('.').trim().to_string())
    else {
        return Ok(None);
    };
    let Ok(id) = gix::ObjectId::from_hex(reverted.as_bytes()) else {
        return Ok(None);
    };
    let Ok(commit) = repo.find_commit(id) else {
        return Ok(None);
    };
    let text = commit.message_raw_sloppy().to_string();
    let is_version = text
        .lines()
        .any(|l| l.starts_with("Memoir-Consolidation:") || l.starts_with("Memoir-Rollback:"));
    Ok(is_version.then_some(reverted))
}

/// The default base of `memoir diff`: the merge base of HEAD and its
/// upstream, else HEAD; `None` on an unborn branch.
pub fn default_base(dir: &Path) -> Result<Option<String>, GitError> {
    let repo = open_repo(dir)?;
    let Ok(head) = repo.head_id() else {
        return Ok(None);
    };
    let upstream = repo
        .rev_parse_single("@{upstream}")
        .ok()
        .map(|id| id.detach());
    let base = match upstream {
        Some(up) => repo
            .merge_base(head.detach(), up)
            .map_err(gix_err)?
            .map_or(head.detach(), |id| id.detach()),
        None => head.detach(),
    };
    Ok(Some(base.to_string()))
}

/// Where the repository's hooks live: `core.hooksPath` (relative to the work
/// tree, as git resolves it), else `<common dir>/hooks`.
pub fn hooks_dir(dir: &Path) -> Result<PathBuf, GitError> {
    let repo = open_repo(dir)?;
    let configured = repo
        .config_snapshot()
        .string("core.hooksPath")
        .map(|v| v.to_string());
    Ok(match configured {
        Some(p) if Path::new(&p).is_absolute() => PathBuf::from(p),
        Some(p) => repo.workdir().unwrap_or(repo.common_dir()).join(p),
        None => repo.common_dir().join("hooks"),
    })
}

/// Sets `merge.<driver>.name` and `.driver` in the repository's own config
/// (`.git/config`), or with `None` removes the `[merge "<driver>"]` section,
/// keeping everything else in the file as it was.
pub fn set_merge_driver(
    dir: &Path,
    driver: &str,
    name_and_command: Option<(&str, &str)>,
) -> Result<(), GitError> {
    let repo = open_repo(dir)?;
    let path = repo.common_dir().join("config");
    let mut file =
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .map_err(gix_err)?;
    match name_and_command {
        Some((name, command)) => {
            file.set_raw_value_by("merge", Some(driver.into()), "name", name)
                .map_err(gix_err)?;
            file.set_raw_value_by("merge", Some(driver.into()), "driver", command)
                .map_err(gix_err)?;
        }
        None => while file.remove_section("merge", Some(driver.into())).is_some() {},
    }
    let mut out = Vec::new();
    file.write_to(&mut out).map_err(gix_err)?;
    let tmp = path.with_extension("memoir-tmp");
    std::fs::write(&tmp, out).map_err(gix_err)?;
    std::fs::rename(&tmp, &path).map_err(gix_err)
}

/// Work-tree-relative paths under `prefixes` whose staged version (in the
/// index at `index_path`) differs from HEAD's: what a commit would change.
pub fn staged_paths(
    dir: &Path,
    index_path: &Path,
    file: &str,
    folder: &str,
) -> Result<Vec<String>, GitError> {
    use gix::bstr::ByteSlice;
    let repo = open_repo(dir)?;
    let index = gix::index::File::at(index_path, repo.object_hash(), true, Default::default())
        .map_err(gix_err)?;
    // Fast path (a commit that stages no store path, on a large store): the
    // index's tree cache still holds the folder's tree id, and it is HEAD's.
    if let (Ok(commit), Some(cache)) = (repo.head_commit(), index.tree()) {
        let tree = commit.tree().map_err(gix_err)?;
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
        let folder_head = tree
            .lookup_entry_by_path(folder.trim_end_matches('/'))
            .map_err(gix_err)?
            .map(|e| e.oid().to_owned());
        let file_head = tree
            .lookup_entry_by_path(file)
            .map_err(gix_err)?
            .map(|e| e.oid().to_owned());
        let file_index = index.entry_by_path(file.as_bytes().as_bstr()).map(|e| e.id);
        if folder_cached.is_some() && folder_cached == folder_head && file_head == file_index {
            return Ok(Vec::new());
        }
    }
    let head: std::collections::HashMap<String, gix::ObjectId> = match repo.head_commit() {
        Ok(c) => tree_files(&repo, &c.tree().map_err(gix_err)?, file, folder)?,
        Err(_) => Default::default(),
    };
    let mut staged = Vec::new();
    let mut in_index = std::collections::HashSet::new();
    let range = index
        .prefixed_entries_range(folder.as_bytes().as_bstr())
        .unwrap_or(0..0);
    let file_entry = index.entry_by_path(file.as_bytes().as_bstr());
    let entries = index.entries()[range].iter().chain(file_entry);
    for e in entries {
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
pub fn partly_staged(
    dir: &Path,
    index_path: &Path,
    paths: &[String],
) -> Result<Vec<String>, GitError> {
    use gix::bstr::ByteSlice;
    let repo = open_repo(dir)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| gix_err("no work tree"))?
        .to_path_buf();
    let index = gix::index::File::at(index_path, repo.object_hash(), true, Default::default())
        .map_err(gix_err)?;
    let mut out = Vec::new();
    for p in paths {
        let staged = index
            .entry_by_path(p.as_bytes().as_bstr())
            .map(|e| e.id.to_string());
        let now = std::fs::read(workdir.join(p)).ok().map(|b| blob_id(&b));
        if staged != now {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Stages `paths` (work-tree-relative) as they are in the work tree (a
/// missing file is unstaged) into the index at `index_path`: git's own
/// index under its lock, or the file git named in GIT_INDEX_FILE, which git
/// holds (or which is temporary), written in place.
pub fn stage(dir: &Path, index_path: &Path, paths: &[String]) -> Result<(), GitError> {
    let repo = open_repo(dir)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| gix_err("no work tree"))?
        .to_path_buf();
    let main = repo.index_path();
    let is_main = std::fs::canonicalize(index_path).ok() == std::fs::canonicalize(&main).ok();
    let lock = if is_main {
        let backoff =
            gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(2));
        Some(
            gix::lock::File::acquire_to_update_resource(&main, backoff, None, 0)
                .map_err(gix_err)?,
        )
    } else {
        None
    };
    let mut index = gix::index::File::at(index_path, repo.object_hash(), false, Default::default())
        .map_err(gix_err)?;
    let mut staged = Vec::new();
    for rel in paths {
        let id = match std::fs::read(workdir.join(rel)) {
            Ok(bytes) => Some(repo.write_blob(&bytes).map_err(gix_err)?.detach()),
            Err(_) => None,
        };
        staged.push((rel.as_str(), id));
    }
    let bytes = replace_entries(&mut index, &workdir, &staged)?;
    match lock {
        Some(mut lock) => {
            std::io::Write::write_all(&mut lock, &bytes).map_err(gix_err)?;
            lock.commit().map_err(gix_err)?;
        }
        // In place: git may hold this file open as its own lock.
        None => std::fs::write(index_path, bytes).map_err(gix_err)?,
    }
    Ok(())
}
