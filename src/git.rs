//! Everything memoir asks of git, through gix (the only module that uses it).

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
}

fn gix_err(e: impl std::fmt::Display) -> GitError {
    GitError::Gix(e.to_string())
}

/// Finds the repository containing `dir`.
pub fn discover(dir: &Path) -> Result<RepoInfo, GitError> {
    let repo = gix::discover(dir).map_err(|_| GitError::NotARepo(dir.to_path_buf()))?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::Bare(dir.to_path_buf()))?
        .to_path_buf();
    let branch = repo
        .head_name()
        .map_err(gix_err)?
        .map(|name| name.shorten().to_string());
    Ok(RepoInfo {
        workdir,
        common_dir: repo.common_dir().to_path_buf(),
        branch,
    })
}

/// The identity git would commit as (`user.name` and `user.email`, or the
/// `GIT_AUTHOR_*` variables git honours), as `Name <email>`.
pub fn identity(dir: &Path) -> Option<String> {
    let repo = gix::discover(dir).ok()?;
    let sig = repo.author()?.ok()?;
    Some(format!("{} <{}>", sig.name, sig.email))
}

/// Creates a repository with a work tree at `dir`.
pub fn init(dir: &Path) -> Result<(), GitError> {
    gix::init(dir).map(drop).map_err(gix_err)
}
