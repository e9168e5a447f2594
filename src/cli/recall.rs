//! `memoir recall`

use super::output::{columns, day, flags, memory_json, warn};
use super::stores::Origin;
use super::{error::CliError, App};
use memoir::index::NoteSource;
use memoir::ops::recall::stores::Answer;
use memoir::search::rank::DEFAULT_MIN_SCORE;
use memoir::search::results::{Item, Options};
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
    let var = |name: &str| std::env::var(name).ok();
    let found = memoir::ops::recall::stores::recall(&stores, &query, &opts, &var, now)?;
    for w in &found.warnings {
        warn(app.quiet(), w);
    }
    app.out.vetted(found.vouched);
    if app.out.json {
        let hits: Vec<_> = found
            .answers
            .iter()
            .map(|a| item_json(&a.found.item(), a.mode.as_str(), a.origin))
            .collect();
        app.out
            .json(&json!({ "answered": found.answered, "hits": hits }))?;
        return Ok(0);
    }
    print_text(app, &found.answers, found.answered)?;
    Ok(0)
}

/// The answers as text: the relevant, then one line before the first
/// weaker match, then the weaker ones.
fn print_text(app: &mut App, answers: &[Answer], answered: bool) -> Result<(), CliError> {
    let mut weaker_said = false;
    for answer in answers {
        let item = answer.found.item();
        if !item.relevant() && !weaker_said {
            weaker_said = true;
            app.out.line(if answered {
                "weaker matches:"
            } else {
                "nothing answers this well; weaker matches:"
            })?;
        }
        app.out.line(item_text(&item, answer.origin))?;
    }
    Ok(())
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
