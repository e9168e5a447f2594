//! `memoir recall`

use super::output::{columns, day, flags, memory_json, warn};
use super::{error::CliError, App};
use memoir::search::rank::{Options, DEFAULT_MIN_SCORE};
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
    };
    let found = memoir::ops::recall::recall(&store, &args.query.join(" "), &opts)?;
    for w in &found.warnings {
        warn(app.quiet(), w);
    }
    let keys: Vec<_> = found.hits.iter().map(|h| h.key.clone()).collect();
    // The access signal is a hint for consolidation: never a reason to fail.
    if let Err(e) = memoir::ops::seen::record_recall(&store, &keys, now) {
        warn(app.quiet(), &format!("{e}; recall not recorded"));
    }
    if app.out.json {
        let hits: Vec<_> = found
            .hits
            .iter()
            .map(|h| {
                let mut m = memory_json(&h.key, &h.path, &h.summary, h.conflict);
                m.insert("score".into(), json!((h.score * 1000.0).round() / 1000.0));
                m.insert("rank".into(), json!((h.rank * 1000.0).round() / 1000.0));
                m.insert("stale".into(), json!(h.stale));
                m
            })
            .collect();
        app.out.json(&json!(hits))?;
        return Ok(0);
    }
    for h in &found.hits {
        let s = &h.summary;
        app.out.line(format!(
            "{}\n      source: {}  ({})",
            columns(&[
                &format!("{:.2}", h.score),
                &h.key,
                &day(s.updated),
                &format!("{}{}", s.description, flags(h.conflict, h.stale)),
            ]),
            s.source.as_deref().unwrap_or("-"),
            h.path
        ))?;
    }
    Ok(0)
}
