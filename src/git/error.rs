//! What can go wrong in git: typed, with gix's error kept as the source.
//!
//! A failure inside gix is a [`GitError::Gix`]: what memoir was doing, and
//! gix's error as its [`source`](std::error::Error::source). Its Display
//! carries the source's messages too (gix's alternate Display: its whole
//! chain on one line), since the CLI prints an error as one line and that
//! line must say why, not only what.

use std::path::PathBuf;

/// Any error gix (or the platform under it) reports.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A git operation failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No repository contains the directory.
    #[error("{0} is not inside a git work tree (run `memoir init` to create one)")]
    NotARepo(PathBuf),
    /// The repository has no work tree.
    #[error("{0} is a bare repository; memoir needs a work tree")]
    Bare(PathBuf),
    /// The repository named by `GIT_DIR` could not be opened.
    #[error("git: GIT_DIR {}: {source:#}", git_dir.display())]
    Named {
        /// The git directory named.
        git_dir: PathBuf,
        /// gix's error.
        #[source]
        source: BoxError,
    },
    /// gix failed at a step of memoir's.
    #[error("git: {doing}: {source:#}")]
    Gix {
        /// What memoir was doing ("reading HEAD", "writing the index").
        doing: String,
        /// gix's error.
        #[source]
        source: BoxError,
    },
    /// A revision named by the user is none, or names no commit.
    #[error("git: `{rev}` is not a {expected}: {source:#}")]
    Revision {
        /// The revision as given.
        rev: String,
        /// "revision" or "commit".
        expected: &'static str,
        /// gix's error.
        #[source]
        source: BoxError,
    },
    /// A file (of the work tree, or of a revision) is larger than memoir
    /// reads.
    #[error("{path}: {size} bytes, more than memoir reads")]
    TooLarge {
        /// The file (and the revision it is at, if any).
        path: String,
        /// Its size.
        size: u64,
    },
    /// A store file is outside the sparse checkout: committed from the work
    /// tree, which lacks it, it would be deleted.
    #[error("git: {path} is outside this sparse checkout; memoir commits the whole store only: `git sparse-checkout add {dir}`")]
    Sparse {
        /// The file left out.
        path: String,
        /// The store's folder.
        dir: String,
    },
    /// A file of the work tree (or of the repository) could not be read or
    /// written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl GitError {
    /// gix failed `doing` something.
    pub(crate) fn gix(
        doing: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> GitError {
        GitError::Gix {
            doing: doing.into(),
            source: Box::new(source),
        }
    }

    /// A file could not be read or written.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> GitError {
        move |source| GitError::Io {
            path: path.into(),
            source,
        }
    }
}

/// For `map_err`: gix failed `doing` something.
pub(crate) fn failed<E>(doing: &'static str) -> impl FnOnce(E) -> GitError
where
    E: std::error::Error + Send + Sync + 'static,
{
    move |e| GitError::gix(doing, e)
}

/// Why a commit cannot be made; nothing has been written (except, when
/// HEAD could not be moved at the end, git's index: see
/// `Session::commit`).
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
    /// The test failpoint `after-index` stopped the commit after writing
    /// git's index, before moving HEAD.
    #[error("failpoint after-index: stopped before moving HEAD")]
    StoppedAfterIndex,
    /// A git operation failed.
    #[error(transparent)]
    Git(#[from] GitError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_gix_failure_says_what_failed_and_keeps_the_cause() {
        let cause = std::io::Error::other("disk on fire");
        let e = GitError::gix("writing the index", cause);
        assert_eq!(e.to_string(), "git: writing the index: disk on fire");
        let source = e.source().map(|s| s.to_string());
        assert_eq!(source.as_deref(), Some("disk on fire"));
        let e = CommitError::from(e);
        assert!(e.source().is_some_and(|s| s.to_string() == "disk on fire"));
    }
}
