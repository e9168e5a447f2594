//! A commit of store paths: its preconditions, git's index lock held from
//! before memoir appends anything until the commit is made, and the commit
//! itself (tree, commit object, git's index, then HEAD).

use super::error::{failed, CommitError, GitError};
use super::Repo;
use gix::refs::transaction::PreviousValue;
use std::path::{Path, PathBuf};

/// A commit being prepared: the repository checked, git's index lock held.
///
/// The lock is taken before memoir appends anything, so that a refusal
/// leaves no trace and no other git process can move the index under the
/// commit; it is released (or committed) when this is dropped or finished.
pub(crate) struct Session {
    repo: Repo,
    /// git's index lock, which becomes the index when the commit is made.
    lock: gix::lock::File,
    /// The commit HEAD was on when the lock was taken; `None`: unborn.
    head: Option<gix::ObjectId>,
    /// The `after-index` failpoint.
    stop_after_index: bool,
    /// The note that this process holds the lock.
    owner: OwnerNote,
}

/// Who a commit is by, and when.
#[derive(Debug, Clone)]
pub(crate) struct Signature {
    /// `user.name`.
    pub name: String,
    /// `user.email`.
    pub email: String,
    /// Seconds since the epoch (UTC).
    pub seconds: i64,
}

/// The note that this process holds git's index lock; removed with it.
struct OwnerNote(PathBuf);

impl OwnerNote {
    /// Writes the note: this process's id.
    fn write(path: &Path) -> Result<OwnerNote, GitError> {
        std::fs::write(path, std::process::id().to_string()).map_err(GitError::io(path))?;
        Ok(OwnerNote(path.to_path_buf()))
    }

    /// The process the note at `path` names, if it names one.
    fn read(path: &Path) -> Option<u32> {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    }

    /// Removes the note now (it also goes when this is dropped).
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Drop for OwnerNote {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Is process `pid` alive? A zombie (killed, not yet reaped by its
/// parent) is not: it holds no lock and will never release one.
/// (Unknown platforms: assume so.)
fn alive(pid: u32) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) state …`: the state follows the last `)` (a command
        // name may hold one).
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next()),
            Some('Z' | 'X')
        ),
        Err(_) => Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// What a commit in progress leaves in the git directory, and its name.
const IN_PROGRESS: [(&str, &str); 5] = [
    ("MERGE_HEAD", "merge"),
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
];

impl Repo {
    /// Checks the preconditions of a commit and takes git's index lock.
    /// `author` overrides git's configured identity. `owner` is a file in
    /// memoir's local state that records which process holds the index
    /// lock: a lock left by a memoir process that died (kill -9) is
    /// removed, since the caller holds the store lock and so no other
    /// memoir of this store is committing; a lock held by anything else is
    /// refused.
    pub(crate) fn begin(
        self,
        author: Option<(String, String)>,
        allow_detached: bool,
        owner: &Path,
    ) -> Result<(Session, Signature), CommitError> {
        let (name, email) = match author {
            Some(a) => a,
            None => self.author().ok_or(CommitError::NoIdentity)?,
        };
        if name.trim().is_empty() || email.trim().is_empty() {
            return Err(CommitError::NoIdentity);
        }
        self.refuse_to_commit_now(allow_detached)?;
        let (lock, owner) = lock_index(&self.repo.index_path(), owner)?;
        let head = self.repo.head_id().ok().map(|id| id.detach());
        let session = Session {
            repo: self,
            lock,
            head,
            stop_after_index: false,
            owner,
        };
        let sig = Signature {
            name,
            email,
            seconds: 0,
        };
        Ok((session, sig))
    }

    /// Refuses a commit on a detached HEAD (unless allowed), in the middle
    /// of a merge (or rebase, cherry-pick, revert), or with the branch's
    /// ref locked.
    fn refuse_to_commit_now(&self, allow_detached: bool) -> Result<(), CommitError> {
        let branch = self.repo.head_name().map_err(failed("reading HEAD"))?;
        if branch.is_none() && !allow_detached {
            return Err(CommitError::Detached);
        }
        let git_dir = self.repo.git_dir();
        if let Some((_, what)) = IN_PROGRESS
            .iter()
            .find(|(file, _)| git_dir.join(file).exists())
        {
            return Err(CommitError::InProgress(what));
        }
        // The branch's ref lock (a git command running, or one killed inside
        // its ref update): found after the append, it left a version half made.
        let ref_lock = match branch {
            Some(name) => self
                .repo
                .common_dir()
                .join(format!("{}.lock", name.as_bstr())),
            None => git_dir.join("HEAD.lock"),
        };
        if ref_lock.exists() {
            return Err(CommitError::RefLocked(ref_lock));
        }
        Ok(())
    }
}

/// Takes git's index lock for the index at `index_path`, with the note at
/// `owner` saying this process holds it; first removes a lock that a dead
/// memoir left (see [`Repo::begin`]).
fn lock_index(
    index_path: &Path,
    owner: &Path,
) -> Result<(gix::lock::File, OwnerNote), CommitError> {
    let lock_path = index_path.with_extension("lock");
    if lock_path.exists() && left_by_dead_memoir(&lock_path, owner) {
        let _ = std::fs::remove_file(&lock_path);
    }
    // Still locked: someone else's. Fail before writing a note of ours,
    // which would replace the note of a memoir that may yet be found dead.
    if lock_path.exists() {
        return Err(CommitError::IndexLocked(lock_path));
    }
    // The note goes first: a memoir killed right after taking the lock is
    // then still known as its owner (written after, a kill between the two
    // left a lock that no later memoir would remove). Dropped on failure.
    let note = OwnerNote::write(owner)?;
    let lock = gix::lock::File::acquire_to_update_resource(
        index_path,
        gix::lock::acquire::Fail::Immediately,
        None,
        0,
    )
    .map_err(|_| CommitError::IndexLocked(lock_path.clone()))?;
    Ok((lock, note))
}

/// Was the index lock at `lock_path` taken by a memoir process, named in
/// the note at `owner`, that has died since?
fn left_by_dead_memoir(lock_path: &Path, owner: &Path) -> bool {
    // The note is written just before the lock is taken: a lock much
    // younger than the note is someone else's, taken after that memoir died
    // (its note outlived it), and is never removed.
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let taken_with_note = match (modified(owner), modified(lock_path)) {
        (Some(note), Some(lock)) => lock
            .duration_since(note)
            .map_or(true, |d| d < std::time::Duration::from_secs(2)),
        _ => false,
    };
    taken_with_note
        && OwnerNote::read(owner).is_some_and(|pid| pid != std::process::id() && !alive(pid))
}

impl Session {
    /// The work tree's root.
    pub(crate) fn workdir(&self) -> &Path {
        self.repo.workdir()
    }

    /// Makes [`Session::commit`] stop after writing git's index, before
    /// moving HEAD, as a crash there would (a test's failpoint).
    pub(crate) fn stop_after_index(&mut self, stop: bool) {
        self.stop_after_index = stop;
    }

    /// Commits exactly `paths` (work-tree-relative, `/`-separated) as they
    /// are in the work tree (a missing file is removed), on top of HEAD,
    /// updating just those entries of git's index so that `git status` is
    /// clean for them and everything else the user staged stays staged.
    /// Returns the new commit's id, or `None` when nothing changed. If HEAD
    /// cannot be moved, git's index already has the paths staged.
    /// `each_file` is told how many of the paths' blobs are written
    /// (`done`, `total`): a consolidation of thousands of memories spends
    /// most of its time there.
    pub(crate) fn commit(
        self,
        paths: &[String],
        message: &str,
        sig: &Signature,
        each_file: &dyn Fn(usize, usize),
    ) -> Result<Option<String>, CommitError> {
        let Session {
            repo,
            lock,
            head,
            stop_after_index,
            owner,
        } = self;
        let base_tree = match head {
            Some(head) => repo
                .repo
                .find_commit(head)
                .map_err(failed("reading HEAD's commit"))?
                .tree_id()
                .map_err(failed("reading HEAD's tree"))?
                .detach(),
            None => gix::ObjectId::empty_tree(repo.repo.object_hash()),
        };
        let (tree, blobs) = repo.write_tree(base_tree, paths, each_file)?;
        if head.is_some() && tree == base_tree {
            return Ok(None);
        }
        let time = format!("{} +0000", sig.seconds);
        let who = gix::actor::SignatureRef {
            name: sig.name.as_str().into(),
            email: sig.email.as_str().into(),
            time: &time,
        };
        let commit = repo.write_commit(tree, head, message, who)?;
        // git's index before HEAD: killed between the two, the index has
        // the new blobs and HEAD does not, which the next commit of these
        // paths puts right (they differ from HEAD). The other order left
        // HEAD with files that git's index lacked: `git status` showed them
        // staged for deletion, and the next memoir commit saw no change.
        repo.write_index(lock, &blobs)?;
        // The index lock is gone: so must the note that this process held
        // it, at once (left behind by a kill, it would make a later memoir
        // remove a lock git itself holds by then).
        owner.remove();
        if stop_after_index {
            return Err(CommitError::StoppedAfterIndex);
        }
        repo.move_head(head, commit, message, who)?;
        Ok(Some(commit.to_string()))
    }
}

/// A path's blob in a commit being made: its id, or `None` if it is gone.
type Blob<'a> = (&'a str, Option<gix::ObjectId>);

impl Repo {
    /// Writes the blobs of `paths` as the work tree has them, and the tree
    /// `base` is with those entries replaced (or removed: no regular file
    /// there); returns the tree's id and each path's blob.
    fn write_tree<'p>(
        &self,
        base: gix::ObjectId,
        paths: &'p [String],
        each_file: &dyn Fn(usize, usize),
    ) -> Result<(gix::ObjectId, Vec<Blob<'p>>), GitError> {
        use crate::fs::safe_file::{self, ReadError};
        let repo = &self.repo;
        let mut editor = repo
            .edit_tree(base)
            .map_err(failed("reading HEAD's tree"))?;
        let mut blobs = Vec::new();
        for (done, rel) in paths.iter().enumerate() {
            each_file(done, paths.len());
            let abs = self.workdir.join(rel);
            // Only a regular file is a version of a store path (a link or a
            // FIFO is never opened, so never followed or waited on).
            match safe_file::read(&abs, safe_file::MAX_LOG_BYTES) {
                Err(ReadError::TooLarge(size)) => {
                    return Err(GitError::TooLarge {
                        path: rel.clone(),
                        size,
                    })
                }
                Err(ReadError::Io(source)) => return Err(GitError::Io { path: abs, source }),
                Ok(Some(bytes)) => {
                    let id = repo
                        .write_blob(&bytes)
                        .map_err(failed("writing a blob"))?
                        .detach();
                    editor
                        .upsert(rel.as_str(), gix::object::tree::EntryKind::Blob, id)
                        .map_err(failed("editing the tree"))?;
                    blobs.push((rel.as_str(), Some(id)));
                }
                Ok(None) | Err(ReadError::Link | ReadError::NotRegular) => {
                    editor
                        .remove(rel.as_str())
                        .map_err(failed("editing the tree"))?;
                    blobs.push((rel.as_str(), None));
                }
            }
        }
        let tree = editor.write().map_err(failed("writing the tree"))?.detach();
        Ok((tree, blobs))
    }

    /// Writes the commit of `tree` on `parent` (none: a root commit), by
    /// `who` as author and committer.
    fn write_commit(
        &self,
        tree: gix::ObjectId,
        parent: Option<gix::ObjectId>,
        message: &str,
        who: gix::actor::SignatureRef<'_>,
    ) -> Result<gix::ObjectId, GitError> {
        let commit = gix::objs::Commit {
            message: message.into(),
            tree,
            author: who.into(),
            committer: who.into(),
            encoding: None,
            parents: parent.into_iter().collect(),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo
            .write_object(commit)
            .map_err(failed("writing the commit"))?;
        Ok(id.detach())
    }

    /// Replaces the entries of `blobs` in git's index and writes it through
    /// `lock` (which it commits). Only these paths change; the tree cache
    /// goes, or the user's next `git commit` would reuse a stale tree
    /// (gitoxide #2421).
    fn write_index(&self, mut lock: gix::lock::File, blobs: &[Blob<'_>]) -> Result<(), GitError> {
        let repo = &self.repo;
        let mut index = gix::index::File::at_or_default(
            repo.index_path(),
            repo.object_hash(),
            false,
            Default::default(),
        )
        .map_err(failed("reading git's index"))?;
        let bytes = super::stage::replace_entries(&mut index, &self.workdir, blobs)?;
        std::io::Write::write_all(&mut lock, &bytes).map_err(GitError::io(lock.lock_path()))?;
        lock.commit().map_err(|e| GitError::Io {
            path: repo.index_path(),
            source: e.error,
        })?;
        Ok(())
    }

    /// Moves HEAD from `head` to `commit` as `git commit` (and gix's
    /// `commit_as`) move it: through HEAD to its branch, only from the
    /// commit it was on, with a reflog entry.
    fn move_head(
        &self,
        head: Option<gix::ObjectId>,
        commit: gix::ObjectId,
        message: &str,
        who: gix::actor::SignatureRef<'_>,
    ) -> Result<(), GitError> {
        let expected = match head {
            Some(head) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(head)),
            None => PreviousValue::MustNotExist,
        };
        let log =
            gix::reference::log::message("commit", message.into(), usize::from(head.is_some()));
        let name = "HEAD".try_into().map_err(failed("naming HEAD"))?;
        let edit =
            gix::refs::transaction::RefEdit::update(name, commit, expected, log).with_deref(true);
        self.repo
            .edit_references_as(Some(edit), Some(who))
            .map_err(failed("moving HEAD"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::git::testing::{Scratch, EMAIL, NAME, SECONDS};

    /// A killed process its parent has not reaped yet is a zombie: dead,
    /// so a lock it left is removable.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_zombie_is_not_alive() {
        assert!(super::alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        // Not waited for: once it exits it is a zombie until reaped.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while super::alive(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!super::alive(pid), "a zombie counted as alive");
        assert!(
            std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "not a zombie yet reaped"
        );
        child.wait().expect("reap");
        assert!(!super::alive(pid));
    }

    fn begin(s: &Scratch) -> (super::Session, super::Signature) {
        let owner = s.root().join(".git/memoir-index-lock-owner");
        let author = Some((NAME.to_string(), EMAIL.to_string()));
        let (session, mut sig) = s.repo().begin(author, false, &owner).expect("begin");
        sig.seconds = SECONDS;
        (session, sig)
    }

    #[test]
    fn a_session_commit_passes_git_fsck_and_leaves_git_status_clean() {
        let s = Scratch::new();
        s.write("MEMORY.md", "index\n");
        s.write("memory/a.md", "a\n");
        s.write("memory/gone.md", "gone\n");
        s.git(&["add", "-A"]);
        s.git(&["commit", "-qm", "start"]);
        // The user's own staged change: not memoir's, and still staged after.
        s.write("other/staged.txt", "the user's\n");
        s.git(&["add", "other/staged.txt"]);
        s.write("memory/a.md", "a, changed\n");
        s.write("memory/new/b.md", "b\n");
        s.remove("memory/gone.md");

        let (session, sig) = begin(&s);
        assert!(
            s.root().join(".git/index.lock").exists(),
            "the index is locked"
        );
        let paths = ["memory/a.md", "memory/new/b.md", "memory/gone.md"].map(String::from);
        let message = "memoir: consolidate\n\nMemoir-Consolidation: ev\n";
        let id = session
            .commit(&paths, message, &sig, &|_, _| {})
            .expect("commit");

        assert_eq!(id.as_deref(), Some(s.git(&["rev-parse", "HEAD"]).trim()));
        let fsck = s.git_output(&["fsck", "--strict", "--no-dangling"]);
        assert!(
            fsck.status.success() && fsck.stderr.is_empty(),
            "git fsck: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
        assert_eq!(
            s.git(&[
                "show",
                "-s",
                "--format=%an <%ae> %at|%cn <%ce> %ct|%P|%B",
                "HEAD"
            ]),
            format!(
                "{NAME} <{EMAIL}> {SECONDS}|{NAME} <{EMAIL}> {SECONDS}|{}|{message}\n",
                s.git(&["rev-parse", "HEAD~1"]).trim()
            )
        );
        assert_eq!(
            s.git(&["diff", "--name-status", "HEAD~1", "HEAD"]),
            "M\tmemory/a.md\nD\tmemory/gone.md\nA\tmemory/new/b.md\n"
        );
        assert_eq!(s.git(&["status", "--porcelain"]), "A  other/staged.txt\n");
        assert!(
            !s.root().join(".git/index.lock").exists(),
            "the lock is gone"
        );
        assert!(!s.root().join(".git/memoir-index-lock-owner").exists());
        let reflog = s.git(&["reflog", "-1", "--format=%gs", "main"]);
        assert_eq!(reflog, "commit: memoir: consolidate\n");

        // Nothing left to commit: no commit.
        let (session, sig) = begin(&s);
        assert_eq!(
            session
                .commit(&paths, message, &sig, &|_, _| {})
                .expect("commit"),
            None
        );
        assert!(!s.root().join(".git/index.lock").exists(), "released");
    }

    #[test]
    fn the_first_commit_of_an_unborn_branch_passes_git_fsck() {
        let s = Scratch::new();
        s.write("memory/a.md", "a\n");
        let (session, sig) = begin(&s);
        let paths = ["memory/a.md".to_string()];
        let id = session
            .commit(&paths, "first\n", &sig, &|_, _| {})
            .expect("commit");
        assert_eq!(id.as_deref(), Some(s.git(&["rev-parse", "main"]).trim()));
        assert!(s.git_output(&["fsck", "--strict"]).status.success());
        assert_eq!(s.git(&["status", "--porcelain"]), "");
    }

    #[test]
    fn a_commit_is_refused_in_the_middle_of_a_merge_or_on_a_detached_head() {
        let s = Scratch::new();
        s.write("a", "a");
        s.git(&["add", "-A"]);
        s.git(&["commit", "-qm", "start"]);
        let owner = s.root().join(".git/owner");
        let author = || Some((NAME.to_string(), EMAIL.to_string()));
        std::fs::write(s.root().join(".git/MERGE_HEAD"), "x").expect("write");
        let e = s.repo().begin(author(), false, &owner).err();
        assert!(
            matches!(e, Some(super::CommitError::InProgress("merge"))),
            "{e:?}"
        );
        std::fs::remove_file(s.root().join(".git/MERGE_HEAD")).expect("rm");
        s.git(&["checkout", "-q", "--detach"]);
        let e = s.repo().begin(author(), false, &owner).err();
        assert!(matches!(e, Some(super::CommitError::Detached)), "{e:?}");
        assert!(s.repo().begin(author(), true, &owner).is_ok());
    }
}
