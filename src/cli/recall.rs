//! `memoir recall`

use super::output::{columns, day, flags, memory_json, warn};
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
    if !(0.0..=1.0).contains(&args.min_score) {
        return Err(CliError::Usage(
            "--min-score must be between 0 and 1".into(),
        ));
    }
    let store = app.store()?;
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
    let semantic = memoir::ops::semantic::Semantic::of(&store, |name| std::env::var(name).ok());
    let query = args.query.join(" ");
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
    if app.out.json {
        let hits: Vec<_> = items.iter().map(|item| item_json(item, mode)).collect();
        app.out.json(&json!(hits))?;
        return Ok(0);
    }
    for item in &items {
        app.out.line(item_text(item))?;
    }
    Ok(0)
}

/// A memory or a note as `recall --json` shows it (`docs/cli.md`).
fn item_json(item: &Item<'_>, mode: &str) -> serde_json::Value {
    match item {
        Item::Memory(h) => {
            let mut m = memory_json(&h.key, &h.path, &h.summary, h.conflict);
            m.insert("score".into(), json!(rounded(h.score)));
            m.insert("rank".into(), json!(rounded(h.rank)));
            m.insert("stale".into(), json!(h.stale));
            m.insert("similarity".into(), json!(h.similarity.map(rounded)));
            m.insert("mode".into(), json!(mode));
            json!(m)
        }
        Item::Note(n) => json!({
            "key": null, "type": "note", "note": n.id, "time": n.time.seconds(),
            "writer": n.actor, "text": n.text,
            "score": rounded(n.score), "rank": rounded(n.rank), "mode": mode,
        }),
    }
}

/// A memory or a note as `recall` prints it: its line and an indented one.
fn item_text(item: &Item<'_>) -> String {
    match item {
        Item::Memory(h) => {
            let s = &h.summary;
            format!(
                "{}\n      source: {}  ({})",
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
                "{}\n      note by {}, not confirmed ({})",
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
