//! `memoir hooks` and `memoir hook`

use super::{error::CliError, output::warn, App};
use memoir::ops::drift::Severity;
use serde_json::json;

/// Install or remove memoir's git hooks and merge drivers in this clone.
///
/// `install` adds a one-line shim to pre-commit (check what a commit stages
/// of the store), post-merge and post-rewrite (settle the views from the
/// merged logs), right after any existing hook's shebang, so existing hooks
/// keep running with their own exit status; it honours core.hooksPath, and
/// configures the merge drivers for memory files and MEMORY.md. Running it
/// again changes nothing. `uninstall` removes exactly what it added.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Install the hooks and merge drivers.
    Install {
        /// Rewrite memoir's lines even if they look installed.
        #[arg(long)]
        force: bool,
    },
    /// Remove memoir's hook lines and merge drivers.
    Uninstall,
}

pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let done = match args.action {
        Action::Install { force } => {
            if force {
                memoir::integration::hooks::uninstall(&store.root)
                    .map_err(|e| CliError::Failed(e.to_string()))?;
            }
            memoir::integration::hooks::install(&store.root)
        }
        Action::Uninstall => memoir::integration::hooks::uninstall(&store.root),
    }
    .map_err(|e| CliError::Failed(e.to_string()))?;
    app.out.json(&json!(done))?;
    for line in &done {
        app.out.line(line)?;
    }
    Ok(0)
}

/// Run one of memoir's git hooks (git runs this through the shims).
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// pre-commit, post-merge or post-rewrite.
    #[arg(value_parser = ["pre-commit", "post-merge", "post-rewrite"])]
    name: String,
    /// What git passes to the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn run_hook(args: HookArgs, app: &mut App) -> Result<u8, CliError> {
    // A repository without a store (or a broken one) is not the hook's business.
    let Ok(store) = app.store() else { return Ok(0) };
    if args.name == "pre-commit" {
        let repo = memoir::git::Repo::discover(&store.root)
            .map_err(|e| CliError::Failed(e.to_string()))?;
        // git names the index a commit is built from (a temporary one for
        // `git commit -a` or `git commit <paths>`); relative to the work tree.
        let index = match std::env::var_os("GIT_INDEX_FILE") {
            Some(p) => repo.workdir().join(p),
            None => repo.common_dir().join("index"),
        };
        let staged = memoir::integration::hooks::staged(&store, &index)
            .map_err(|e| CliError::Failed(e.to_string()))?;
        if staged.is_empty() {
            return Ok(0);
        }
        // Hand changes to staged memory files become events first, and what
        // that writes (the log, the completed files, MEMORY.md) is staged
        // with them. Nothing unstaged is touched.
        let (_, drifts) = store.drifts()?;
        let hand: Vec<String> = drifts
            .into_iter()
            .filter(|d| !d.kind.is_memoirs() && staged.contains(&d.path))
            .map(|d| d.path)
            .collect();
        let fail = |e: String| CliError::Failed(e);
        if !hand.is_empty() {
            let partly = memoir::integration::hooks::partly_staged(&store, &index, &hand)
                .map_err(|e| fail(e.to_string()))?;
            let partly: Vec<&String> = partly.iter().filter(|p| store.path(p).exists()).collect();
            if !partly.is_empty() {
                super::output::diagnostic(&format!(
                    "memoir: {} staged differently from the work tree; stage a memory file whole (git add) or not at all",
                    partly.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
                ));
                return Ok(1);
            }
            let ctx = app.ctx(&store)?;
            let recorded = store.record_paths(&ctx, Some(&hand))?;
            let mut to_stage: Vec<String> = recorded.iter().map(|r| r.key.rel_path()).collect();
            to_stage.push("MEMORY.md".to_string());
            to_stage.push(format!("memory/log/{}/{}.md", ctx.now.date(), store.writer));
            memoir::integration::hooks::stage(&store, &index, &to_stage)
                .map_err(|e| fail(e.to_string()))?;
            // `git commit <paths>` commits from a temporary index and holds
            // the real one as index.lock, which becomes the index afterwards:
            // stage there too, or the next `git status` shows them changed.
            let real = repo.common_dir().join("index.lock");
            let temporary = index
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("next-index"));
            if temporary && real.exists() {
                memoir::integration::hooks::stage(&store, &real, &to_stage)
                    .map_err(|e| fail(e.to_string()))?;
            }
            for r in &recorded {
                warn(
                    app.quiet(),
                    &format!(
                        "recorded {} {} ({}) and staged it",
                        r.op,
                        r.key,
                        r.kind.as_str()
                    ),
                );
            }
        }
        let staged =
            memoir::integration::hooks::staged(&store, &index).map_err(|e| fail(e.to_string()))?;
        let report = store.check()?;
        let errors: Vec<_> = report
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .filter(|p| {
                staged.contains(&p.path)
                    || p.path.starts_with("memory/log")
                    || p.rule == "index" && staged.iter().any(|s| s == "MEMORY.md")
            })
            .collect();
        if errors.is_empty() {
            return Ok(0);
        }
        for p in &errors {
            super::output::diagnostic(&format!(
                "{}{}: error[{}]: {}",
                p.path,
                p.line.map(|l| format!(":{l}")).unwrap_or_default(),
                p.rule,
                p.message
            ));
        }
        super::output::diagnostic("memoir: this commit stages memory that does not check out; fix the above, `git add` the store, and commit again");
        return Ok(1);
    }
    // post-merge, post-rewrite: settle the views from the merged logs.
    match store.rebuild(false, false) {
        Ok(r) => {
            let changed = r.written.len() + r.removed.len();
            if changed > 0 || r.index_changed {
                warn(app.quiet(), &format!("settled {changed} memory files from the merged logs (commit them with `memoir consolidate`)"));
            }
            for d in &r.refused {
                warn(
                    app.quiet(),
                    &format!("{}: {} by hand; left alone", d.path, d.kind.as_str()),
                );
            }
            for (_, why) in &r.unreadable {
                warn(app.quiet(), &format!("{why}; left alone"));
            }
        }
        Err(e) => warn(app.quiet(), &e.to_string()),
    }
    if let Ok(c) = store.conflicts() {
        if !c.is_empty() {
            warn(
                app.quiet(),
                &format!(
                    "{} memories have versions that disagree: see `memoir conflicts`",
                    c.len()
                ),
            );
        }
    }
    Ok(0)
}
