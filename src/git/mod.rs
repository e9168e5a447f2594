//! Everything memoir asks of git, through gix (the only module that uses it).
//!
//! A [`Repo`] is the repository a store lives in, opened once per command
//! ([`Repo::find`], kept by the store as a [`SharedRepo`]); what memoir asks of it are its methods, one
//! file a concern:
//!
//! - `commit`: a commit session (`Repo::begin`, `Session::commit`) under
//!   git's index lock;
//! - `status`: which store files differ from HEAD ([`Repo::changed_paths`]);
//! - `tree`: trees and blobs of HEAD, of a revision and of the index;
//! - `history`: memoir's versions and other walks of HEAD's history;
//! - `config`: hooks, merge drivers and the configured identity;
//! - `stage`: what a `git commit` run beside memoir would commit (the
//!   pre-commit hook's view of an index);
//! - `error`: what can go wrong, gix's error kept as the source.

mod commit;
mod config;
mod error;
mod history;
mod stage;
mod status;
mod tree;

#[cfg(test)]
mod testing;

pub(crate) use commit::{Session, Signature};
pub use error::{CommitError, GitError};
pub use history::Version;
pub(crate) use tree::blob_id;

use error::failed;
use std::path::{Path, PathBuf};

/// What memoir needs to know about the repository a store lives in.
#[derive(Debug, Clone)]
pub(crate) struct RepoInfo {
    /// The common git directory (shared by all worktrees of a clone).
    pub common_dir: PathBuf,
    /// The current branch's short name; `None` when HEAD is detached.
    pub branch: Option<String>,
    /// The linked worktree's name (`.git/worktrees/<name>`); `None` in the
    /// main work tree.
    pub worktree: Option<String>,
}

/// A repository the caller names, as git's `GIT_DIR` and `GIT_WORK_TREE`
/// (or the directory git would take) name one for git itself: hooks,
/// `git --git-dir`, scripted set-ups. The CLI reads git's environment and
/// passes this in; the core never reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRepo {
    /// The git directory.
    pub git_dir: PathBuf,
    /// The top of its work tree.
    pub work_tree: PathBuf,
}

/// Did discovery fail for want of a repository (none at or above the
/// directory, or none below a search limit)?
fn none_found(e: &gix::Error) -> bool {
    use gix::discover::upwards::Error;
    e.downcast_any_ref::<Error>()
        .is_some_and(|e| !matches!(e, Error::NoTrustedGitRepository { .. }))
}

/// Creates a repository with a work tree at `dir`.
pub(crate) fn init(dir: &Path) -> Result<(), GitError> {
    gix::init(dir)
        .map(drop)
        .map_err(failed("creating a repository"))
}

/// An open repository with a work tree: the one a store lives in.
pub struct Repo {
    /// gix's handle.
    repo: gix::Repository,
    /// The work tree's root (which `repo` has: a bare one is refused).
    workdir: PathBuf,
}

/// An open repository that threads share: a store opens its repository
/// once per command and hands each use a handle ([`SharedRepo::local`]),
/// instead of finding it again (discovery reads git's config files each
/// time).
#[derive(Clone)]
pub struct SharedRepo {
    /// gix's handle, for any thread.
    repo: gix::ThreadSafeRepository,
    /// The work tree's root.
    workdir: PathBuf,
}

impl std::fmt::Debug for SharedRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedRepo")
            .field("workdir", &self.workdir)
            .finish_non_exhaustive()
    }
}

impl SharedRepo {
    /// A handle for this thread.
    pub fn local(&self) -> Repo {
        Repo {
            repo: self.repo.to_thread_local(),
            workdir: self.workdir.clone(),
        }
    }

    /// The work tree's root.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }
}

impl Repo {
    /// The repository for `dir`: the one `named`, when `dir` is in its
    /// work tree, else the one found at or above `dir` (so a store in
    /// another repository, as the personal store is, finds its own). A
    /// bare repository is refused: every store is in a work tree.
    pub fn find(dir: &Path, named: Option<&NamedRepo>) -> Result<Repo, GitError> {
        match named {
            Some(named) if dir.starts_with(&named.work_tree) => {
                Repo::open(&named.git_dir, &named.work_tree)
            }
            _ => Repo::discover(dir),
        }
    }

    /// The repository found at or above `dir`, as git finds it with none
    /// named.
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        let repo = gix::discover(dir).map_err(|e| {
            // Only "none found" is no repository: one found but broken is
            // reported as it is (`memoir init` would create another inside).
            if none_found(&e) {
                GitError::NotARepo(dir.to_path_buf())
            } else {
                GitError::gix(format!("opening the repository of {}", dir.display()), e)
            }
        })?;
        Repo::from_gix(repo)
    }

    /// The repository at `git_dir` with its work tree at `work_tree`, as
    /// git's `GIT_DIR` and `GIT_WORK_TREE` name them.
    fn open(git_dir: &Path, work_tree: &Path) -> Result<Repo, GitError> {
        let worktree = format!("core.worktree={}", work_tree.display());
        let repo = gix::open_opts(
            git_dir,
            gix::open::Options::default().config_overrides([worktree.as_str()]),
        )
        .map_err(|e| GitError::Named {
            git_dir: git_dir.to_path_buf(),
            source: Box::new(e),
        })?;
        Repo::from_gix(repo)
    }

    /// The repository `repo`, refused if it has no work tree.
    fn from_gix(repo: gix::Repository) -> Result<Repo, GitError> {
        let workdir = repo
            .workdir()
            .ok_or_else(|| GitError::Bare(repo.git_dir().to_path_buf()))?
            .to_path_buf();
        Ok(Repo { repo, workdir })
    }

    /// The work tree's root.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// This repository, for any thread (see [`SharedRepo`]).
    pub fn share(self) -> SharedRepo {
        SharedRepo {
            repo: self.repo.into_sync(),
            workdir: self.workdir,
        }
    }

    /// The common git directory (shared by all worktrees of a clone).
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }

    /// Which clone, branch and worktree the store is checked out in.
    pub(crate) fn info(&self) -> Result<RepoInfo, GitError> {
        let repo = &self.repo;
        let branch = repo
            .head_name()
            .map_err(failed("reading HEAD"))?
            .map(|name| name.shorten().to_string());
        let worktree = (repo.git_dir() != repo.common_dir())
            .then(|| {
                repo.git_dir()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .flatten();
        Ok(RepoInfo {
            common_dir: repo.common_dir().to_path_buf(),
            branch,
            worktree,
        })
    }

    /// HEAD's tree; `None` on an unborn branch (or a HEAD that names no
    /// commit).
    fn head_tree(&self) -> Result<Option<gix::Tree<'_>>, GitError> {
        match self.repo.head_commit() {
            Ok(commit) => Ok(Some(commit.tree().map_err(failed("reading HEAD's tree"))?)),
            Err(_) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{GitError, Repo};
    use crate::git::testing::Scratch;

    #[test]
    fn no_repository_is_not_a_repo_and_a_broken_one_says_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = Repo::discover(dir.path()).err();
        assert!(matches!(e, Some(GitError::NotARepo(_))), "{e:?}");
        let s = Scratch::new();
        let found = Repo::discover(&s.root().join(".git")).map(|r| r.workdir().to_path_buf());
        assert_eq!(found.ok(), Some(s.root()));
        let config = s.root().join(".git/config");
        let mut text = std::fs::read_to_string(&config).expect("config");
        text.push_str("[core\n");
        std::fs::write(&config, text).expect("config");
        let e = Repo::discover(&s.root()).err();
        let Some(e @ GitError::Gix { .. }) = e else {
            panic!("{e:?}")
        };
        assert!(e.to_string().contains("line"), "the cause is said: {e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
