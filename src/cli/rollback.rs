//! `memoir rollback`

use super::output::{short_id, strings, would};
use super::{error::CliError, App};
use memoir::ops::rollback::Options;
use serde_json::json;

/// Make the memory files and MEMORY.md exactly what they were at a revision.
///
/// Any revspec works (a commit id, a tag, HEAD~2). memoir appends `remember`
/// and `forget` events that name the rollback, then commits. History is never
/// rewritten and logs keep everything: to undo a bad consolidation C, roll
/// back to C^. Unrecorded hand edits stop it unless --force.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir versions\n  memoir rollback HEAD~1 --dry-run")]
pub struct Args {
    /// The revision to return to.
    rev: String,
    /// Show what would change; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Overwrite unrecorded hand edits.
    #[arg(long)]
    force: bool,
    /// Commit even when HEAD is detached.
    #[arg(long)]
    allow_detached: bool,
}

/// Rolls the memory back to the revision and says what changed.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let author = super::consolidate::author()?;
    let ctx = super::consolidate::committing_ctx(app, &store, args.dry_run, &author)?;
    let opts = Options {
        dry_run: args.dry_run,
        force: args.force,
        author,
        allow_detached: args.allow_detached,
    };
    let r = memoir::ops::rollback::rollback(&store, &ctx, &args.rev, &opts)?;
    app.out.json(&json!({
        "target": r.target, "restored": strings(&r.restored), "forgotten": strings(&r.forgotten),
        "closed_conflicts": strings(&r.closed), "commit": r.commit, "dry_run": args.dry_run,
    }))?;
    let verb = would(args.dry_run);
    app.out.items(&format!("{verb}restore "), &r.restored)?;
    app.out.items(&format!("{verb}forget "), &r.forgotten)?;
    app.out
        .items(&format!("{verb}close the conflict on "), &r.closed)?;
    if let Some(c) = &r.commit {
        app.out.line(format!(
            "rolled back to {} in {}",
            short_id(&r.target),
            short_id(c)
        ))?;
    }
    Ok(0)
}
