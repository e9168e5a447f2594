//! `memoir seen`

use super::output::{columns, warn};
use super::{error::CliError, App};
use memoir::local::receipts::Receipt;
use memoir::model::time::Timestamp;
use serde_json::json;

/// Show what `memoir context` injected, newest first.
///
/// One receipt per context call that printed something: its time, kind
/// (`query` or `hot`), the query (`#<hash>` when the store keeps only
/// hashes), tokens used of the budget and `hook` when a hook asked; then
/// each memory injected with the end of its version id. Receipts are kept
/// in this clone's local state, never committed (`receipts:` in
/// memory/config.yaml). Nothing recorded: no output.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir seen --last 3")]
pub struct Args {
    /// Show the newest N receipts.
    #[arg(long, value_name = "N", default_value_t = 10)]
    last: usize,
}

/// Prints the newest receipts.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let store = app.store()?;
    let seen = memoir::ops::seen::seen(&store, args.last);
    if seen.skipped > 0 {
        warn(
            app.quiet(),
            &format!(
                "{}: {} not receipts (skipped)",
                seen.file.display(),
                super::output::count(seen.skipped, "line that is", "lines that are")
            ),
        );
    }
    app.out
        .json_list("receipts", seen.receipts.iter().map(receipt_json).collect())?;
    for r in &seen.receipts {
        app.out.line(heading(r))?;
        for m in &r.memories {
            let versions: Vec<&str> = m.versions.iter().map(|v| short_version(v)).collect();
            app.out
                .line(format!("  {}  {}", m.key, versions.join(",")))?;
        }
        for n in &r.notes {
            app.out.line(format!("  note {}", short_version(n)))?;
        }
    }
    let silent = seen.abstentions;
    if silent.count > 0 {
        app.out.line(format!(
            "{} nothing, the last at {}",
            super::output::count(
                silent.count as usize,
                "context call injected",
                "context calls injected"
            ),
            Timestamp(silent.last_ms).seconds()
        ))?;
    }
    Ok(0)
}

/// A receipt's first line: `time  kind  query  used/budget tokens  [hook]`;
/// a store that shared the budget with the person's own shows
/// `used/share of budget tokens`.
fn heading(r: &Receipt) -> String {
    let query = match (&r.query, &r.query_hash) {
        (Some(q), _) => format!("\"{}\"", one_line(q, 80)),
        (None, Some(h)) => format!("#{h}"),
        (None, None) => "-".into(),
    };
    let tokens = match r.share {
        Some(share) => format!("{}/{} of {} tokens", r.tokens, share, r.budget),
        None => format!("{}/{} tokens", r.tokens, r.budget),
    };
    let mut line = columns(&[&r.time.seconds(), &r.kind.as_str(), &query, &tokens]);
    if r.hook {
        line.push_str("  hook");
    }
    line
}

/// The query on one line, whitespace collapsed, cut at `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max - 1).collect();
    format!("{cut}…")
}

/// A version id as `seen` prints it: its last 8 characters, the random
/// part (ids made in the same millisecond share their first 10).
fn short_version(id: &str) -> &str {
    let from = id.char_indices().rev().nth(7).map_or(0, |(i, _)| i);
    &id[from..]
}

/// A receipt in JSON, as documented in docs/cli.md.
fn receipt_json(r: &Receipt) -> serde_json::Value {
    json!({
        "time": r.time.millis(), "kind": r.kind.as_str(), "query": r.query,
        "query_hash": r.query_hash, "tokens": r.tokens, "budget": r.budget,
        "share": r.share.unwrap_or(r.budget),
        "omitted": r.omitted, "hook": r.hook,
        "memories": r.memories.iter().map(|m| json!({"key": m.key, "versions": m.versions})).collect::<Vec<_>>(),
        "notes": r.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_versions_and_queries_fit_a_line() {
        assert_eq!(short_version("01KB3Y2Z5M0000000000ABCDEF"), "00ABCDEF");
        assert_eq!(short_version("abc"), "abc");
        assert_eq!(one_line("a\n  b\tc", 80), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
