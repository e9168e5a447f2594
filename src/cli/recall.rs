//! `memoir recall`

use super::output::{columns, day, flags, memory_json, warn};
use super::stores::Origin;
use super::{error::CliError, App};
use memoir::index::corpus::NoteSource;
use memoir::search::rank::DEFAULT_MIN_SCORE;
use memoir::search::results::{Item, Options, Results};
use serde_json::json;

/// Find the memories relevant to a query, most relevant first.
///
/// One line per hit with its ranking score (what the list is sorted by),
/// key, updated date, description, source and path. The hits the store
/// counts as an answer come first; then, under a line saying they are
/// weaker, the other best matches up to the limit, for the reader to
/// judge (`--relevant-only` leaves them out, so an unrelated query prints
/// nothing). Works in any language (CJK included).
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
    /// Relevance threshold, 0..1: the share of the query the best match
    /// must cover for the store to answer (0: every match is relevant).
    #[arg(long, default_value_t = DEFAULT_MIN_SCORE)]
    min_score: f64,
    /// Only the hits the store counts as an answer: no weaker matches.
    #[arg(long)]
    relevant_only: bool,
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
        weaker: !args.relevant_only,
    };
    let query = args.query.join(" ");
    // Each store's hits in its own order, with the place they merge by.
    let mut lists: Vec<Vec<(Place, serde_json::Value, String)>> = Vec::new();
    // Every store's hits vouched for by its index: printed unscanned.
    let mut vouched = true;
    for (store, origin) in stores {
        let semantic =
            memoir::search::semantic::Semantic::of(&store, |name| std::env::var(name).ok());
        let recall = memoir::ops::recall::recall_with(&store, &query, &opts, semantic.as_ref())?;
        let mode = recall.mode.as_str();
        vouched &= recall.vouched;
        for w in &recall.warnings {
            warn(app.quiet(), w);
        }
        let found = Results {
            hits: recall.hits,
            notes: recall.notes,
            ..Results::default()
        };
        // What the store answered with was recalled; a weaker match only shown.
        let keys: Vec<_> = found
            .hits
            .iter()
            .filter(|h| h.relevant)
            .map(|h| h.key.clone())
            .collect();
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
                        Place::of(item),
                        item_json(item, mode, origin),
                        item_text(item, origin),
                    )
                })
                .collect(),
        );
    }
    let merged = merge(lists, args.limit);
    // What was asked (filters included) has an answer: some hit is relevant.
    let answered = merged.first().is_some_and(|(p, _, _)| p.relevant);
    app.out.vetted(vouched);
    if app.out.json {
        let hits: Vec<_> = merged.into_iter().map(|(_, j, _)| j).collect();
        app.out
            .json(&json!({ "answered": answered, "hits": hits }))?;
        return Ok(0);
    }
    print_text(app, &merged, answered)?;
    Ok(0)
}

/// The merged hits as text: the relevant, then one line before the first
/// weaker match, then the weaker ones.
fn print_text<T>(
    app: &mut App,
    merged: &[(Place, T, String)],
    answered: bool,
) -> Result<(), CliError> {
    let mut weaker_said = false;
    for (place, _, text) in merged {
        if !place.relevant && !weaker_said {
            weaker_said = true;
            app.out.line(if answered {
                "weaker matches:"
            } else {
                "nothing answers this well; weaker matches:"
            })?;
        }
        app.out.line(text)?;
    }
    Ok(())
}

/// Where an item stands in the printed order: the relevant first, then
/// by ranking score (the number a line starts with).
#[derive(Debug, Clone, Copy)]
struct Place {
    relevant: bool,
    rank: f64,
}

impl Place {
    fn of(item: &Item<'_>) -> Place {
        Place {
            relevant: item.relevant(),
            rank: item.rank(),
        }
    }

    /// `self` comes before `other`, or with it.
    fn leads(self, other: Place) -> bool {
        (self.relevant, self.rank) >= (other.relevant, other.rank)
    }
}

/// The stores' lists merged by place, each list keeping its own order,
/// at most `limit` items.
fn merge<T>(lists: Vec<Vec<(Place, T, String)>>, limit: usize) -> Vec<(Place, T, String)> {
    let mut lists: Vec<std::collections::VecDeque<_>> = lists.into_iter().map(Into::into).collect();
    let mut out = Vec::new();
    while out.len() < limit {
        let best = lists
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.front().map(|(p, _, _)| (i, *p)))
            .fold(None, |best: Option<(usize, Place)>, (i, p)| match best {
                Some((_, b)) if b.leads(p) => best,
                _ => Some((i, p)),
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
            m.insert("relevant".into(), json!(h.relevant));
            m.insert("similarity".into(), json!(h.similarity.map(rounded)));
            m.insert("mode".into(), json!(mode));
            m.insert("store".into(), json!(origin.as_str()));
            json!(m)
        }
        Item::Note(n) if matches!(n.source, NoteSource::MemoryMd { .. }) => json!({
            "key": null, "type": "team-text", "note": n.id, "time": null,
            "writer": null, "text": n.text,
            "score": rounded(n.score), "rank": rounded(n.rank), "relevant": n.relevant,
            "mode": mode, "store": origin.as_str(),
        }),
        Item::Note(n) => json!({
            "key": null, "type": "note", "note": n.id, "time": n.time.seconds(),
            "writer": n.actor, "text": n.text,
            "score": rounded(n.score), "rank": rounded(n.rank), "relevant": n.relevant,
            "mode": mode, "store": origin.as_str(),
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
                    &shown_rank(h.rank),
                    &h.key,
                    &day(s.updated),
                    &format!("{}{}", s.description, flags(h.conflict, h.stale)),
                ]),
                s.source.as_deref().unwrap_or("-"),
                h.path
            )
        }
        Item::Note(n) if matches!(n.source, NoteSource::MemoryMd { .. }) => {
            // Its first line that says something: a heading names it.
            let mut lines = n.text.lines();
            let first = lines
                .clone()
                .find(|l| !l.starts_with('#') && !l.trim().is_empty())
                .or(lines.next())
                .unwrap_or("");
            format!(
                "{}\n      the team's own text, outside the generated list{mine}",
                columns(&[&shown_rank(n.rank), &n.id, &"-", &first])
            )
        }
        Item::Note(n) => {
            let first = n.text.lines().next().unwrap_or("");
            format!(
                "{}\n      note by {}, not confirmed ({}{mine})",
                columns(&[
                    &shown_rank(n.rank),
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

/// A ranking score as text shows it: three significant digits or more,
/// so the printed numbers fall as the lines go down.
fn shown_rank(rank: f64) -> String {
    if rank >= 10.0 {
        format!("{rank:.1}")
    } else if rank >= 1.0 {
        format!("{rank:.2}")
    } else {
        format!("{rank:.3}")
    }
}

/// A score as JSON shows it: three decimals.
fn rounded(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
