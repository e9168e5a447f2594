//! `memoir versions`

use super::output::{columns, short_id};
use super::{error::CliError, App};
use memoir::git::Version;
use memoir::model::time::Timestamp;
use serde_json::json;

/// List memoir's commits reachable from HEAD, newest first: consolidations and rollbacks.
///
/// Id, date, author and what each did (its counts; a rollback's target).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir versions")]
pub struct Args {}

/// Lists the consolidation and rollback commits.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let store = app.store()?;
    let versions = store
        .repo()
        .versions()
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let when = |s: i64| Timestamp(s * 1000).seconds();
    let kind = |v: &Version| {
        if v.rollback.is_some() {
            "rollback"
        } else {
            "consolidation"
        }
    };
    app.out.json_list(
        "versions",
        versions
            .iter()
            .map(|v| {
                let counts: serde_json::Map<String, serde_json::Value> =
                    v.counts.iter().map(|(k, n)| (k.clone(), json!(n))).collect();
                json!({
                    "commit": v.id, "kind": kind(v), "date": when(v.seconds), "author": v.author,
                    "summary": v.summary, "event": v.event, "rollback_to": v.rollback, "counts": counts,
                })
            })
            .collect(),
    )?;
    for v in &versions {
        let counts: Vec<String> = v.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let what = match &v.rollback {
            Some(target) => format!("rollback to {}: {}", short_id(target), counts.join(", ")),
            None => counts.join(", "),
        };
        app.out.line(columns(&[
            &short_id(&v.id),
            &when(v.seconds),
            &v.author,
            &what,
        ]))?;
    }
    Ok(0)
}
