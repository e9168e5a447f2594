//! `memoir conflicts`

use super::{error::CliError, App};
use serde_json::json;

/// Show every memory waiting for a decision.
///
/// Versions from two branches that differ, or pending proposals that differ
/// from their memory. Each candidate is shown as a diff against what the file
/// shows now (for a fork, the version both sides agreed on), with who wrote
/// it, when, and its source. Decide with `memoir resolve`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir conflicts")]
pub struct Args {}

/// Prints each conflict with its candidate versions as diffs.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let store = app.store()?;
    let conflicts = memoir::ops::resolve::conflicts(&store)?;
    app.out.json_list(
        "conflicts",
        conflicts
            .iter()
            .map(|c| {
                json!({
                    "key": c.key.to_string(), "current": c.current,
                    "candidates": c.candidates.iter().map(|v| json!({
                        "id": v.id, "op": v.op.as_str(), "actor": v.actor, "time": v.time,
                        "source": v.source, "content": v.content, "diff": v.diff,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )?;
    for c in &conflicts {
        app.out.line(format!(
            "conflict {} ({} to choose from)",
            c.key,
            super::output::count(c.candidates.len(), "version", "versions")
        ))?;
        for v in &c.candidates {
            app.out.line(format!(
                "  {} {} by {} at {}{}",
                v.op,
                v.id,
                v.actor,
                v.time,
                v.source
                    .as_deref()
                    .map(|s| format!(", source: {s}"))
                    .unwrap_or_default()
            ))?;
            app.out.diff(&v.diff)?;
        }
        app.out.line(format!(
            "  decide: memoir resolve {} --keep | --take <id> | --both | --edit",
            c.key
        ))?;
    }
    Ok(0)
}
