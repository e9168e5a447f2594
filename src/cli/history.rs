//! `memoir history`

use super::output::{columns, short_id};
use super::{error::CliError, parse_key, App};
use serde_json::json;

/// Every version of one memory, oldest first.
///
/// The event, its time and actor, its source, why (for forget, resolve and
/// rollback), and the commit that carried it. With --patch, each version's
/// change as a diff.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir history project/db\n  memoir history project/db --patch"
)]
pub struct Args {
    /// The memory: <scope>/<name>.
    key: String,
    /// Show each version's change as a unified diff.
    #[arg(long, short = 'p')]
    patch: bool,
}

/// Prints every version of the memory.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let (key, _) = parse_key(&args.key)?;
    let (store, _) = app.store_for(&key, false)?;
    let versions = memoir::ops::history::history(&store, &key)?;
    app.out.json_list("versions", versions
        .iter()
        .map(|v| json!({
            "id": v.id, "op": v.op.as_str(), "time": v.time, "actor": v.actor, "source": v.source,
            "reason": v.reason, "prev": v.prev, "commit": v.commit, "content": v.content,
            "description": v.content.as_deref().and_then(|c| memoir::model::memory::Memory::parse(c).ok()).map(|m| m.description),
            "diff": if args.patch { Some(&v.diff) } else { None },
        }))
        .collect())?;
    for v in &versions {
        let commit = v.commit.as_deref().map_or("(not committed)", short_id);
        app.out.line(columns(&[
            &format!("{} {:<8} {}", v.id, v.op.as_str(), v.time),
            &v.actor,
            &commit,
        ]))?;
        let said = v
            .content
            .as_deref()
            .and_then(|c| memoir::model::memory::Memory::parse(c).ok());
        if let Some(m) = said {
            app.out
                .line(format!("    description: {}", m.description))?;
        }
        if let Some(s) = &v.source {
            app.out.line(format!("    source: {s}"))?;
        }
        if let Some(r) = &v.reason {
            app.out.line(format!("    reason: {r}"))?;
        }
        if args.patch {
            app.out.diff(&v.diff)?;
        }
    }
    Ok(0)
}
