//! `memoir record`

use super::{error::CliError, App};
use serde_json::json;

/// Turn hand edits, additions and deletions of memory files into log events.
///
/// Missing `source`, `confidence`, `created` and `updated` are filled in and
/// written back, so that file and log agree. All or nothing: a file the write
/// policy refuses records nothing.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir record")]
pub struct Args {}

/// Records the hand edits as events.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let ctx = app.ctx(&store)?;
    let recorded = memoir::ops::record::record(&store, &ctx)?;
    app.out.json_list("recorded", recorded
        .iter()
        .map(|r| json!({
            "key": r.key.to_string(), "kind": r.kind.as_str(), "op": r.op.as_str(), "id": r.id, "filled": r.filled,
        }))
        .collect())?;
    for r in &recorded {
        let filled = if r.filled.is_empty() {
            String::new()
        } else {
            format!(" (filled in {})", r.filled.join(", "))
        };
        app.out
            .line(format!("{} {}: {}{filled}", r.op, r.key, r.kind.as_str()))?;
    }
    Ok(0)
}
