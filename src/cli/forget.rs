//! `memoir forget`

use super::{error::CliError, parse_key, App};
use serde_json::json;

/// Forget a memory.
///
/// Log a tombstone with the reason, remove its file, update MEMORY.md. Its
/// versions stay in the logs.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir forget project/test-command --reason 'we moved to bun'"
)]
pub struct Args {
    /// Which memory: <scope>/<name>.
    key: String,
    /// Why it is forgotten.
    #[arg(long, short = 'r', allow_hyphen_values = true)]
    reason: String,
}

/// Forgets the memory.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let (key, _) = parse_key(&args.key)?;
    let (store, origin) = app.store_for(&key, false)?;
    let ctx = app.ctx(&store)?;
    let id = memoir::ops::write::forget(&store, &ctx, &key, &args.reason)?;
    app.out
        .json(&json!({ "key": key.to_string(), "id": id, "store": origin.as_str() }))?;
    app.out.line(format!("forgot {key}"))?;
    Ok(0)
}
