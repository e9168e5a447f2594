//! `memoir hooks` and `memoir hook`

use super::{error::CliError, output::warn, App};
use memoir::integration::pre_commit::PreCommit;
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
#[command(
    after_help = "Examples:\n  memoir hooks install\n  memoir hooks install --force\n  memoir hooks uninstall"
)]
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
                memoir::integration::hooks::uninstall(&store)
                    .map_err(|e| CliError::Failed(e.to_string()))?;
            }
            memoir::integration::hooks::install(&store)
        }
        Action::Uninstall => memoir::integration::hooks::uninstall(&store),
    }
    .map_err(|e| CliError::Failed(e.to_string()))?;
    app.out.json_list(
        "actions",
        done.iter()
            .map(|d| {
                let (kind, command) = match &d.action {
                    memoir::integration::hooks::Action::Configured(c) => ("driver", Some(c.as_str())),
                    memoir::integration::hooks::Action::Unconfigured => ("driver", None),
                    _ => ("hook", None),
                };
                json!({ "kind": kind, "target": d.target, "action": d.action.as_str(), "command": command })
            })
            .collect(),
    )?;
    for d in &done {
        app.out.line(d.to_string())?;
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
        return pre_commit(&store, app);
    }
    // post-merge, post-rewrite: settle the views from the merged logs.
    let settled = memoir::integration::post_merge::post_merge(&store);
    match settled.rebuild {
        Ok(r) => {
            let changed = r.written.len() + r.removed.len();
            if changed > 0 || r.index_changed {
                warn(
                    app.quiet(),
                    &format!(
                        "settled {} from the merged logs (commit them with `memoir consolidate`)",
                        super::output::count(changed, "memory file", "memory files")
                    ),
                );
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
    if settled.conflicts > 0 {
        warn(
            app.quiet(),
            &format!(
                "{} versions that disagree: see `memoir conflicts`",
                super::output::count(settled.conflicts, "memory has", "memories have")
            ),
        );
    }
    Ok(0)
}

/// The pre-commit hook: its work is the core's; this says what it found.
fn pre_commit(store: &memoir::store::Store, app: &mut App) -> Result<u8, CliError> {
    let index = std::env::var_os("GIT_INDEX_FILE").map(std::path::PathBuf::from);
    let ctx = match app.ctx(store) {
        Ok(ctx) => ctx,
        // No one to record hand edits as: only a commit of the store stops.
        Err(CliError::NoIdentity)
            if !memoir::integration::pre_commit::stages_store(store, index.as_deref())? =>
        {
            return Ok(0)
        }
        Err(e) => return Err(e),
    };
    match memoir::integration::pre_commit::pre_commit(store, &ctx, index.as_deref())? {
        PreCommit::Untouched => Ok(0),
        PreCommit::PartlyStaged(paths) => {
            super::output::diagnostic(&format!(
                "memoir: {} staged differently from the work tree; stage a memory file whole (git add) or not at all",
                paths.join(", ")
            ));
            Ok(1)
        }
        PreCommit::Checked { recorded, errors } => {
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
            if errors.is_empty() {
                return Ok(0);
            }
            for p in &errors {
                // Only errors stop a commit: each says `error[rule]`.
                super::output::diagnostic(&super::output::problem(p));
            }
            super::output::diagnostic("memoir: this commit stages memory that does not check out; fix the above, `git add` the store, and commit again");
            Ok(1)
        }
    }
}
