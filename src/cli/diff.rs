//! `memoir diff`

use super::output::{short_id, strings};
use super::{error::CliError, App};
use memoir::ops::diff::{Change, ChangeKind, MemoryDiff};
use serde_json::{json, Value};

/// Show what memory an agent will believe differently between two revisions.
///
/// Memories added, changed (a diff of frontmatter and body) and forgotten
/// (with the reason), by whom; conflicts opened or resolved; notes added.
/// Default: from the merge base of HEAD and its upstream to the work tree.
/// `A...B` compares B with where it left A (their merge base), as `git
/// diff A...B` does: what a pull request changes. `A B` compares two exact
/// revisions.
/// `--format markdown` is made to be posted as a pull-request comment.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir diff origin/main...HEAD                    what this branch changed since it left main\n  memoir diff origin/main...HEAD --format markdown  the same, as a pull-request comment\n  memoir diff v1.2 v1.3                             two exact revisions"
)]
pub struct Args {
    /// The base revision (default: merge base of HEAD and its upstream, else
    /// HEAD); or a range: `A...B` from the merge base of A and B to B,
    /// `A..B` from A to B.
    from: Option<String>,
    /// The revision to compare (default: the work tree).
    to: Option<String>,
    /// text, markdown or json (`--json` is the same as `--format json`).
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json"])]
    format: String,
    /// With --format markdown: at most this many bytes (GitHub holds 65,536
    /// characters in a comment); whole entries are kept, and the last line
    /// says how many more there are.
    #[arg(long, value_name = "BYTES", default_value_t = 60_000)]
    max_bytes: usize,
}

/// `<n> added, <n> changed, …`: the diff's counts, in text and markdown.
fn counts(d: &MemoryDiff) -> String {
    let n = |k: ChangeKind| d.changes.iter().filter(|c| c.kind == k).count();
    let count = super::output::count;
    format!(
        "{} added, {} changed, {} forgotten; {} opened, {} resolved; {} pending; {}",
        n(ChangeKind::Added),
        n(ChangeKind::Changed),
        n(ChangeKind::Forgotten),
        count(d.opened.len(), "conflict", "conflicts"),
        d.resolved.len(),
        count(d.pending.len(), "proposal", "proposals"),
        count(d.notes.len(), "note", "notes")
    )
}

/// ` (by <actors>)`, or nothing.
fn by(c: &Change) -> String {
    if c.actors.is_empty() {
        String::new()
    } else {
        format!(" (by {})", c.actors.join(", "))
    }
}

/// `: <why it was forgotten>`, or nothing.
fn reason(c: &Change) -> String {
    c.reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}

/// A revision as the diff names it: a commit id shortened, anything else
/// (`work tree`) as it is.
fn revision(id: &str) -> &str {
    if id.len() == 40 {
        short_id(id)
    } else {
        id
    }
}

/// A note's first line: what text and markdown show of it.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Compares the two revisions' memory; prints it as text, markdown or JSON.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let store = app.store()?;
    let d = memoir::ops::diff::diff(&store, args.from.as_deref(), args.to.as_deref())?;
    if app.out.json || args.format == "json" {
        app.out.json_document(&to_json(&d))?;
    } else if args.format == "markdown" {
        app.out.raw(&to_markdown(&d, args.max_bytes))?;
    } else {
        print_text(app, &d)?;
    }
    Ok(0)
}

/// The diff in JSON.
fn to_json(d: &MemoryDiff) -> Value {
    json!({
        "from": d.from, "to": d.to,
        "changes": d.changes.iter().map(|c| json!({
            "key": c.key.to_string(), "kind": c.kind.as_str(), "diff": c.diff, "reason": c.reason, "actors": c.actors,
        })).collect::<Vec<_>>(),
        "conflicts_opened": strings(&d.opened),
        "conflicts_resolved": strings(&d.resolved),
        "notes": d.notes.iter().map(|n| json!({"time": n.time.seconds(), "actor": n.actor, "text": n.text})).collect::<Vec<_>>(),
        "pending": d.pending.iter().map(|p| json!({"id": p.id, "key": p.key.to_string(), "actor": p.actor, "diff": p.diff})).collect::<Vec<_>>(),
    })
}

/// The diff as a pull-request comment: each change folded in a
/// `<details>`, what waits for a human, the notes folded together; at most
/// `max` bytes of whole entries, then how many more there are.
fn to_markdown(d: &MemoryDiff, max: usize) -> String {
    let mut md = format!("### memoir: memory changes\n\n{}\n\n", counts(d));
    md.push_str(&format!(
        "Compared `{}` → `{}`.\n\n",
        revision(&d.from),
        revision(&d.to)
    ));
    let mut entries = Vec::new();
    for c in &d.changes {
        entries.push(folded(
            &format!(
                "<b>{}</b> <code>{}</code>{}{}",
                c.kind.as_str(),
                html(&c.key.to_string()),
                html(&by(c)),
                html(&reason(c))
            ),
            &c.diff,
        ));
    }
    for p in &d.pending {
        entries.push(folded(
            &format!("<b>waits for a human</b> <code>{}</code> (proposed by {}; `memoir consolidate` applies it, `memoir resolve` decides a conflict)", html(&p.key.to_string()), html(&p.actor)),
            &p.diff,
        ));
    }
    for k in &d.opened {
        entries.push(format!(
            "- **conflict opened** on `{k}`: decide with `memoir resolve {k}`\n"
        ));
    }
    for k in &d.resolved {
        entries.push(format!("- conflict resolved on `{k}`\n"));
    }
    if !d.notes.is_empty() {
        let mut notes = format!(
            "\n<details><summary>{} added</summary>\n\n",
            super::output::count(d.notes.len(), "note", "notes")
        );
        for n in &d.notes {
            notes.push_str(&format!(
                "- {} {}: {}\n",
                n.time.seconds(),
                html(&n.actor),
                html(first_line(&n.text))
            ));
        }
        notes.push_str("\n</details>\n");
        entries.push(notes);
    }
    // Room for the last line, which says what did not fit.
    let reserve = 200;
    let mut shown = 0;
    for e in &entries {
        if md.len() + e.len() + reserve > max {
            break;
        }
        md.push_str(e);
        shown += 1;
    }
    if shown < entries.len() {
        let (from, to) = (revision(&d.from), revision(&d.to));
        let command = if to == "work tree" {
            format!("memoir diff {from}")
        } else {
            format!("memoir diff {from} {to}")
        };
        md.push_str(&format!(
            "\n_… and {} not shown (this comment holds at most {max} bytes): run `{command}` to see them all._\n",
            super::output::count(entries.len() - shown, "more entry", "more entries"),
        ));
    }
    md
}

/// A change folded in `<details>`: its summary, and its diff in a code
/// fence longer than any run of backticks in it (the content is shown as
/// it is, never altered).
fn folded(summary: &str, diff: &str) -> String {
    let longest = diff.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if diff.ends_with('\n') { "" } else { "\n" };
    format!("<details><summary>{summary}</summary>\n\n{fence}diff\n{diff}{newline}{fence}\n\n</details>\n\n")
}

/// Text in HTML (a `<summary>`): `&`, `<` and `>` escaped, so GitHub shows
/// `Ada <ada@example.com>` instead of dropping it as a tag.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The diff as text: a summary line, each change and its diff, the
/// conflicts and the notes.
fn print_text(app: &mut App, d: &MemoryDiff) -> Result<(), CliError> {
    app.out.line(format!(
        "memory {} → {}: {}",
        revision(&d.from),
        revision(&d.to),
        counts(d)
    ))?;
    for c in &d.changes {
        app.out.line(format!(
            "{} {}{}{}",
            c.kind.as_str(),
            c.key,
            by(c),
            reason(c)
        ))?;
        app.out.diff(&c.diff)?;
    }
    for p in &d.pending {
        app.out.line(format!(
            "proposed {} (by {}; waits for a human: `memoir consolidate` applies it, `memoir resolve` decides a conflict)",
            p.key, p.actor
        ))?;
        app.out.diff(&p.diff)?;
    }
    app.out.items("conflict opened ", &d.opened)?;
    app.out.items("conflict resolved ", &d.resolved)?;
    for n in &d.notes {
        app.out.line(format!(
            "note {} {}: {}",
            n.time.seconds(),
            n.actor,
            first_line(&n.text)
        ))?;
    }
    Ok(())
}
