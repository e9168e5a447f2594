//! `memoir versions`

use super::output::{columns, short_id};
use super::{error::CliError, App};
use memoir::model::time::Timestamp;
use serde_json::json;

/// List the consolidation commits reachable from HEAD, newest first.
///
/// Id, date, author and what changed.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Lists the consolidation commits.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let versions = memoir::git::Repo::discover(&store.root)
        .and_then(|repo| repo.versions())
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let when = |s: i64| Timestamp(s * 1000).seconds();
    app.out.json_list(
        "versions",
        versions
            .iter()
            .map(|v| {
                json!({
                    "commit": v.id, "date": when(v.seconds), "author": v.author,
                    "summary": v.summary, "event": v.event, "counts": v.counts,
                })
            })
            .collect(),
    )?;
    for v in &versions {
        app.out.line(columns(&[
            &short_id(&v.id),
            &when(v.seconds),
            &v.author,
            &v.counts,
        ]))?;
    }
    Ok(0)
}
