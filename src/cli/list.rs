//! `memoir list`

use super::output::{columns, day, flags, memory_json};
use super::stores::Origin;
use super::{error::CliError, App};
use memoir::ops::query::Filter;
use serde_json::json;

/// List memories, one per line.
///
/// Key, type, updated date, description.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this scope.
    #[arg(long)]
    scope: Option<String>,
    /// Only this type.
    #[arg(long = "type", value_name = "TYPE")]
    kind: Option<String>,
}

/// Lists the memories the filters let through.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let filter = Filter {
        scope: args.scope,
        kind: args.kind,
    };
    let mut listed = Vec::new();
    for (store, origin) in app.stores()? {
        let memories = memoir::ops::query::list(&store, &filter)?;
        listed.extend(memories.into_iter().map(|l| (l, origin)));
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
    let width = listed
        .iter()
        .map(|(l, _)| l.key.to_string().chars().count())
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
            &format!("{:<width$}", l.key.to_string()),
            &format!("{:<9}", s.kind),
            &format!("{:<10}", day(s.updated)),
            &format!("{}{}{mine}", s.description, flags(l.conflict, false)),
        ]))?;
    }
    Ok(0)
}
