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
pub struct Args {
    /// Where to create the store (default: --store, else the current directory).
    dir: Option<PathBuf>,
}

/// Creates the store (and a repository when there is none).
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let dir = match args.dir.or_else(|| app.global.store.clone()) {
        Some(d) => d,
        None => std::env::current_dir()?,
    };
    let report = memoir::store::init(&dir)?;
    app.out.json(&json!({
        "root": report.root,
        "created_repo": report.created_repo,
        "created": report.created,
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
    Ok(0)
}
