//! `memoir init`

use super::{error::CliError, App};
use serde_json::json;
use std::path::PathBuf;

/// Create a memoir store.
///
/// MEMORY.md, memory/{user,project,task,log}/ and a .gitattributes entry that
/// keeps git from rewriting line endings. Runs `git init` first when the
/// directory is in no repository. Safe to rerun.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir init\n  memoir init path/to/repo")]
pub struct Args {
    /// Where to create the store (default: --store, else the current directory).
    dir: Option<PathBuf>,
}

/// What to do after `init`, printed once.
const NEXT_STEPS: &str = "\
Next:
  memoir hooks install          # this clone: merge drivers and git hooks (each teammate runs it)
  memoir setup claude-code      # an agent: hooks, MCP server, CLAUDE.md
  memoir remember project/<name> -d '<what>' -s '<why it is true>'
  memoir consolidate            # commit the store (and .gitattributes) as one version
  memoir doctor                 # check the set-up";

/// Creates the store (and a repository when there is none).
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let dir = match args.dir.or_else(|| app.global.store.clone()) {
        Some(d) => d,
        None => std::env::current_dir()?,
    };
    let report = memoir::store::init_in(&dir, app.named_repo())?;
    // Memory files already there (a store set up again) are indexed now,
    // so `check` is clean right after.
    let store = app.open(&report.root)?;
    memoir::ops::reindex::reindex(&store)?;
    // Another tool's files where memoir keeps its own: said now, not
    // found later by a failing `check`.
    let foreign = memoir::change::drift::foreign(&store);
    app.out.json(&json!({
        "root": report.root,
        "created_repo": report.created_repo,
        "created": report.created,
        "foreign": super::status::foreign_json(&foreign),
    }))?;
    if report.created.is_empty() {
        app.out.line(format!(
            "memoir store already set up in {}",
            report.root.display()
        ))?;
    } else {
        app.out.line(format!(
            "Initialized memoir store in {}{}",
            report.root.display(),
            if report.created_repo {
                " (and a new git repository)"
            } else {
                ""
            }
        ))?;
    }
    if !foreign.is_empty() {
        app.out
            .line("memory/ already holds files that are not memoir's:")?;
        let labels: Vec<String> = foreign
            .iter()
            .map(memoir::change::drift::foreign_label)
            .collect();
        app.out.items("  ", &labels)?;
        let advice = memoir::change::drift::foreign_advice(&foreign);
        let mut chars = advice.chars();
        let first = chars.next().map(|c| c.to_ascii_uppercase());
        app.out
            .line(format!("{}{}", first.unwrap_or_default(), chars.as_str()))?;
    }
    if !report.created.is_empty() {
        app.out.line(NEXT_STEPS)?;
    }
    Ok(0)
}
