//! `memoir reindex`

use super::{error::CliError, App};
use serde_json::json;

/// Regenerate MEMORY.md's generated block from the memory files.
///
/// Text outside the markers is kept; nothing changes when it is in sync.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir reindex")]
pub struct Args {}

/// Regenerates MEMORY.md's generated block.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let changed = memoir::ops::reindex::reindex(&store)?;
    app.out.json(&json!({ "changed": changed }))?;
    if changed {
        app.out.line("MEMORY.md regenerated")?;
    }
    Ok(0)
}
