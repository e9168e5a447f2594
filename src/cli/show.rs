//! `memoir show`

use super::{error::CliError, output::warn, parse_key, App};
use serde_json::json;

/// Print one memory's file exactly as it is.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir show project/test-command\n  memoir --json show project/test-command"
)]
pub struct Args {
    /// Which memory: <scope>/<name>.
    key: String,
}

/// Prints the memory's file (its fields in JSON).
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let (key, _) = parse_key(&args.key)?;
    let (store, origin) = app.store_for(&key, false)?;
    let shown = memoir::ops::query::show(&store, &key)?;
    if shown.listed.conflict {
        warn(app.quiet(), &format!("{key} has an open conflict: this is the version both sides agreed on; see `memoir conflicts`"));
    }
    if app.out.json {
        let m = &shown.memory;
        app.out.json(&json!({
            "key": key.to_string(), "path": shown.listed.path, "name": m.name, "description": m.description,
            "type": m.kind.as_str(), "tags": m.tags, "source": m.source, "confidence": m.confidence.unwrap_or(1.0),
            "created": m.created.map(|t| t.seconds()), "updated": m.updated.map(|t| t.seconds()),
            "review_by": m.review_by.map(|d| d.to_string()), "expires": m.expires.map(|d| d.to_string()),
            "body": m.body, "heads": shown.heads, "conflict": shown.listed.conflict,
            "store": origin.as_str(),
        }))?;
    } else {
        app.out.raw(&shown.content)?;
    }
    Ok(0)
}
