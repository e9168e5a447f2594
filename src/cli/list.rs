//! `memoir list`

use super::output::{columns, day, display_width, flags, memory_json, pad};
use super::stores::Origin;
use super::{error::CliError, App};
use memoir::ops::query::Filter;
use memoir::ops::recall::stores::unless_personal;
use serde_json::json;

/// List memories, one per line.
///
/// Key, type, updated date, description.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir list\n  memoir list --scope project --type feedback")]
pub struct Args {
    /// Only this scope.
    #[arg(long)]
    scope: Option<String>,
    /// Only this type.
    #[arg(long = "type", value_name = "TYPE")]
    kind: Option<String>,
    /// Only the keys, one a line (for scripts; shell completion uses it).
    #[arg(long)]
    keys: bool,
}

/// Lists the memories the filters let through.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let stores = app.stores()?;
    super::check_filters(&stores[0].0, args.scope.as_deref(), args.kind.as_deref())?;
    let filter = Filter {
        scope: args.scope,
        kind: args.kind,
    };
    let mut listed = Vec::new();
    let (many, mut warnings) = (stores.len() > 1, Vec::new());
    for (store, origin) in stores {
        let listing = memoir::ops::query::list(&store, &filter);
        let listing = unless_personal(listing, origin, many, &mut warnings)?;
        for w in warnings.drain(..) {
            super::output::warn(app.quiet(), &w);
        }
        let Some(listing) = listing else { continue };
        for w in &listing.skipped {
            super::output::warn(app.quiet(), w);
        }
        listed.extend(listing.memories.into_iter().map(|l| (l, origin)));
    }
    if app.out.json {
        let items: Vec<_> = listed
            .iter()
            .map(|(l, origin)| {
                let mut m = memory_json(&l.key, &l.path, &l.summary, l.conflict);
                m.insert("store".into(), json!(origin.as_str()));
                json!(m)
            })
            .collect();
        app.out.json_list("memories", items)?;
        return Ok(0);
    }
    if args.keys {
        for (l, _) in &listed {
            app.out.line(l.key.to_string())?;
        }
        return Ok(0);
    }
    let width = listed
        .iter()
        .map(|(l, _)| display_width(&l.key.to_string()))
        .max()
        .unwrap_or(0);
    for (l, origin) in &listed {
        let s = &l.summary;
        let mine = if *origin == Origin::Personal {
            "  (personal store)"
        } else {
            ""
        };
        app.out.line(columns(&[
            &pad(&l.key.to_string(), width),
            &format!("{:<9}", s.kind),
            &format!("{:<10}", day(s.updated)),
            &format!("{}{}{mine}", s.description, flags(l.conflict, false)),
        ]))?;
    }
    Ok(0)
}
