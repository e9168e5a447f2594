//! What the pre-commit hook does: a commit that stages memory files must
//! stage memory that checks out. Hand changes to staged memory files become
//! events first (`record`), and what that writes (the log, the completed
//! files, MEMORY.md) is staged with them; then the store is checked, and
//! only problems in what the commit stages stop it. Nothing unstaged is
//! touched.

use crate::change::drift::{drifts, Problem, Severity};
use crate::git;
use crate::integration::hooks::{partly_staged, stage, staged};
use crate::ops::check::check;
use crate::ops::record::{record_paths, Recorded};
use crate::render::memory_md::MEMORY_MD;
use crate::store::{Ctx, Store, StoreError};
use std::path::{Path, PathBuf};

/// What the pre-commit hook found.
#[derive(Debug)]
pub enum PreCommit {
    /// The commit stages nothing of the store.
    Untouched,
    /// Memory files staged differently from the work tree: recording them
    /// would commit what the user did not stage. The commit must stop.
    PartlyStaged(Vec<String>),
    /// The hand changes recorded (and staged), and the errors in what the
    /// commit stages (none: the commit may go on).
    Checked {
        /// Hand changes turned into events and staged.
        recorded: Vec<Recorded>,
        /// Errors in staged files, in the logs, or in a staged MEMORY.md.
        errors: Vec<Problem>,
    },
}

/// Runs the pre-commit hook's checks for a commit built from the index
/// `index_file` (git's `GIT_INDEX_FILE`, relative to the work tree: a
/// temporary index for `git commit -a` or `git commit <paths>`), or from
/// the repository's own index.
pub fn pre_commit(
    store: &Store,
    ctx: &Ctx,
    index_file: Option<&Path>,
) -> Result<PreCommit, StoreError> {
    let repo = store.repo();
    let index = commit_index(&repo, index_file);
    let staged_now = staged(store, &index)?;
    if staged_now.is_empty() {
        return Ok(PreCommit::Untouched);
    }
    let (_, drifts) = drifts(store)?;
    let hand: Vec<String> = drifts
        .into_iter()
        .filter(|d| !d.kind.is_memoirs() && staged_now.contains(&d.path))
        .map(|d| d.path)
        .collect();
    let mut recorded = Vec::new();
    if !hand.is_empty() {
        let partly: Vec<String> = partly_staged(store, &index, &hand)?
            .into_iter()
            .filter(|p| store.path(p).exists())
            .collect();
        if !partly.is_empty() {
            return Ok(PreCommit::PartlyStaged(partly));
        }
        recorded = record_paths(store, ctx, Some(&hand))?;
        let mut to_stage: Vec<String> = recorded.iter().map(|r| r.key.rel_path()).collect();
        to_stage.push(MEMORY_MD.to_string());
        to_stage.push(crate::log::files::log_path(&store.writer, ctx.now.date()));
        for index in indexes_to_stage(repo.common_dir(), &index) {
            stage(store, &index, &to_stage)?;
        }
    }
    let staged_now = staged(store, &index)?;
    let errors = check(store)?
        .problems
        .into_iter()
        .filter(|p| p.severity == Severity::Error)
        .filter(|p| {
            staged_now.contains(&p.path)
                || p.path.starts_with("memory/log")
                || p.rule == "index" && staged_now.iter().any(|s| s == MEMORY_MD)
        })
        .collect();
    Ok(PreCommit::Checked { recorded, errors })
}

/// Whether the commit built from `index_file` (as for [`pre_commit`])
/// stages anything of the store: one that does not is none of memoir's
/// business, even when memoir could not write (no identity to log as).
pub fn stages_store(store: &Store, index_file: Option<&Path>) -> Result<bool, StoreError> {
    let repo = store.repo();
    Ok(!staged(store, &commit_index(&repo, index_file))?.is_empty())
}

/// The index a commit is built from: git's `GIT_INDEX_FILE` (relative to
/// the work tree), else the repository's own.
fn commit_index(repo: &git::Repo, index_file: Option<&Path>) -> PathBuf {
    match index_file {
        Some(p) => repo.workdir().join(p),
        None => repo.common_dir().join("index"),
    }
}

/// The indexes that must stage what the hook records: the commit's, and
/// for `git commit <paths>` (which commits from a temporary `next-index*`
/// and holds the real index as `index.lock`, which becomes the index
/// afterwards) the real one too, or the next `git status` shows them
/// changed.
fn indexes_to_stage(common_dir: &Path, index: &Path) -> Vec<PathBuf> {
    let real = common_dir.join("index.lock");
    let temporary = index
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("next-index"));
    let mut out = vec![index.to_path_buf()];
    if temporary && real.exists() {
        out.push(real);
    }
    out
}
