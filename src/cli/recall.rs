//! `memoir recall`

use super::output::{columns, day, flags, memory_json, warn};
use super::stores::Origin;
use super::{error::CliError, App};
use memoir::search::rank::{Item, Options, Results, DEFAULT_MIN_SCORE};
use serde_json::json;

/// Find the memories relevant to a query, most relevant first.
///
/// One line per hit with its relevance score (0..1), key, updated date,
/// description, source and path. Nothing below the relevance threshold is
/// shown, so an unrelated query prints nothing. Works in any language (CJK
/// included).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir recall \"how do I run the tests\"\n  memoir --json recall -n 3 \"deploy steps\""
)]
pub struct Args {
    /// What to look for (words are joined with spaces).
    #[arg(required = true)]
    query: Vec<String>,
    /// At most this many hits.
    #[arg(long, short = 'n', default_value_t = 10)]
    limit: usize,
    /// Relevance threshold, 0..1 (0 shows every memory matching any word).
    #[arg(long, default_value_t = DEFAULT_MIN_SCORE)]
    min_score: f64,
    /// Only this scope.
    #[arg(long)]
    scope: Option<String>,
    /// Only this type.
    #[arg(long = "type", value_name = "TYPE")]
    kind: Option<String>,
    /// Only memories with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Leave out notes (raw observations in the logs, not yet confirmed as
    /// memories). A scope, type or tag filter leaves them out too.
    #[arg(long)]
    no_notes: bool,
}

/// Ranks the memories against the query and prints the hits.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    if !(0.0..=1.0).contains(&args.min_score) {
        return Err(CliError::Usage(
            "--min-score must be between 0 and 1".into(),
        ));
    }
    let stores = app.stores()?;
    super::check_filters(&stores[0].0, args.scope.as_deref(), args.kind.as_deref())?;
    let now = app.now()?;
    let opts = Options {
        limit: args.limit,
        min_score: args.min_score,
        scope: args.scope,
        kind: args.kind,
        tag: args.tag,
        today: now.date(),
        notes: !args.no_notes,
    };
    let query = args.query.join(" ");
    // Each store's hits in its own order, with the score they merge by.
    let mut lists: Vec<Vec<(f64, serde_json::Value, String)>> = Vec::new();
    for (store, origin) in stores {
        let semantic = memoir::ops::semantic::Semantic::of(&store, |name| std::env::var(name).ok());
        let recall = memoir::ops::recall::recall_with(&store, &query, &opts, semantic.as_ref())?;
        let mode = recall.mode.as_str();
        for w in &recall.warnings {
            warn(app.quiet(), w);
        }
        let found = Results {
            hits: recall.hits,
            notes: recall.notes,
            ..Results::default()
        };
        let keys: Vec<_> = found.hits.iter().map(|h| h.key.clone()).collect();
        // The access signal is a hint for consolidation: never a reason to fail.
        if let Err(e) = memoir::ops::seen::record_recall(&store, &keys, now) {
            warn(app.quiet(), &format!("{e}; recall not recorded"));
        }
        let items = found.ranked();
        lists.push(
            items
                .iter()
                .map(|item| {
                    (
                        score(item),
                        item_json(item, mode, origin),
                        item_text(item, origin),
                    )
                })
                .collect(),
        );
    }
    let merged = merge(lists, args.limit);
    if app.out.json {
        let hits: Vec<_> = merged.into_iter().map(|(_, j, _)| j).collect();
        app.out.json_list("hits", hits)?;
        return Ok(0);
    }
    for (_, _, text) in &merged {
        app.out.line(text)?;
    }
    Ok(0)
}

/// An item's relevance, by which the stores' lists are merged.
fn score(item: &Item<'_>) -> f64 {
    match item {
        Item::Memory(h) => h.score,
        Item::Note(n) => n.score,
    }
}

/// The stores' lists merged by relevance, each list keeping its own order,
/// at most `limit` items.
fn merge<T>(lists: Vec<Vec<(f64, T, String)>>, limit: usize) -> Vec<(f64, T, String)> {
    let mut lists: Vec<std::collections::VecDeque<_>> = lists.into_iter().map(Into::into).collect();
    let mut out = Vec::new();
    while out.len() < limit {
        let best = lists
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.front().map(|(s, _, _)| (i, *s)))
            .fold(None, |best: Option<(usize, f64)>, (i, s)| match best {
                Some((_, b)) if b >= s => best,
                _ => Some((i, s)),
            });
        let Some((i, _)) = best else { break };
        out.extend(lists[i].pop_front());
    }
    out
}

/// A memory or a note as `recall --json` shows it (`docs/cli.md`).
fn item_json(item: &Item<'_>, mode: &str, origin: Origin) -> serde_json::Value {
    match item {
        Item::Memory(h) => {
            let mut m = memory_json(&h.key, &h.path, &h.summary, h.conflict);
            m.insert("score".into(), json!(rounded(h.score)));
            m.insert("rank".into(), json!(rounded(h.rank)));
            m.insert("stale".into(), json!(h.stale));
            m.insert("similarity".into(), json!(h.similarity.map(rounded)));
            m.insert("mode".into(), json!(mode));
            m.insert("store".into(), json!(origin.as_str()));
            json!(m)
        }
        Item::Note(n) => json!({
            "key": null, "type": "note", "note": n.id, "time": n.time.seconds(),
            "writer": n.actor, "text": n.text,
            "score": rounded(n.score), "rank": rounded(n.rank), "mode": mode, "store": origin.as_str(),
        }),
    }
}

/// A memory or a note as `recall` prints it: its line and an indented one.
fn item_text(item: &Item<'_>, origin: Origin) -> String {
    let mine = if origin == Origin::Personal {
        ", personal store"
    } else {
        ""
    };
    match item {
        Item::Memory(h) => {
            let s = &h.summary;
            format!(
                "{}\n      source: {}  ({}{mine})",
                columns(&[
                    &format!("{:.2}", h.score),
                    &h.key,
                    &day(s.updated),
                    &format!("{}{}", s.description, flags(h.conflict, h.stale)),
                ]),
                s.source.as_deref().unwrap_or("-"),
                h.path
            )
        }
        Item::Note(n) => {
            let first = n.text.lines().next().unwrap_or("");
            format!(
                "{}\n      note by {}, not confirmed ({}{mine})",
                columns(&[
                    &format!("{:.2}", n.score),
                    &"note",
                    &n.time.date().to_string(),
                    &first,
                ]),
                n.actor.split(" <").next().unwrap_or(&n.actor),
                n.id
            )
        }
    }
}

/// A score as JSON shows it: three decimals.
fn rounded(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
