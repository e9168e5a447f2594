//! `memoir diff`

use super::{error::CliError, App};
use memoir::ops::diff::{ChangeKind, MemoryDiff};
use serde_json::json;

/// Show what memory an agent will believe differently between two revisions.
///
/// Memories added, changed (a diff of frontmatter and body) and forgotten
/// (with the reason), by whom; conflicts opened or resolved; notes added.
/// Default: from the merge base of HEAD and its upstream to the work tree.
/// `--format markdown` is made to be posted as a pull-request comment.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The base revision (default: merge base of HEAD and its upstream, else HEAD).
    from: Option<String>,
    /// The revision to compare (default: the work tree).
    to: Option<String>,
    /// text, markdown or json (`--json` is the same as `--format json`).
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json"])]
    format: String,
}

fn counts(d: &MemoryDiff) -> String {
    let n = |k: ChangeKind| d.changes.iter().filter(|c| c.kind == k).count();
    format!(
        "{} added, {} changed, {} forgotten; {} conflicts opened, {} resolved; {} notes",
        n(ChangeKind::Added),
        n(ChangeKind::Changed),
        n(ChangeKind::Forgotten),
        d.opened.len(),
        d.resolved.len(),
        d.notes.len()
    )
}

/// `: <why it was forgotten>`, or nothing.
fn reason(c: &memoir::ops::diff::Change) -> String {
    c.reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default()
}

fn short(id: &str) -> &str {
    if id.len() == 40 {
        &id[..12]
    } else {
        id
    }
}

pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let d = memoir::ops::diff::diff(&store, args.from.as_deref(), args.to.as_deref())?;
    let json_out = app.out.json || args.format == "json";
    if json_out {
        let value = json!({
            "from": d.from, "to": d.to,
            "changes": d.changes.iter().map(|c| json!({
                "key": c.key.to_string(), "kind": c.kind.as_str(), "diff": c.diff, "reason": c.reason, "actors": c.actors,
            })).collect::<Vec<_>>(),
            "conflicts_opened": d.opened.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "conflicts_resolved": d.resolved.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "notes": d.notes.iter().map(|n| json!({"time": n.time.seconds(), "actor": n.actor, "text": n.text})).collect::<Vec<_>>(),
        });
        app.out.raw(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ))?;
        return Ok(0);
    }
    let by = |a: &[String]| {
        if a.is_empty() {
            String::new()
        } else {
            format!(" (by {})", a.join(", "))
        }
    };
    if args.format == "markdown" {
        let mut md = format!("### memoir: memory changes\n\n{}\n\n", counts(&d));
        md.push_str(&format!(
            "Compared `{}` → `{}`.\n\n",
            short(&d.from),
            short(&d.to)
        ));
        for c in &d.changes {
            let reason = reason(c);
            md.push_str(&format!(
                "<details><summary><b>{}</b> <code>{}</code>{}{}</summary>\n\n```diff\n{}```\n\n</details>\n\n",
                c.kind.as_str(),
                c.key,
                by(&c.actors),
                reason.replace('<', "&lt;"),
                c.diff.replace("```", "ʼʼʼ")
            ));
        }
        for k in &d.opened {
            md.push_str(&format!(
                "- conflict opened on `{k}`: decide with `memoir resolve {k}`\n"
            ));
        }
        for k in &d.resolved {
            md.push_str(&format!("- conflict resolved on `{k}`\n"));
        }
        if !d.notes.is_empty() {
            md.push_str(&format!(
                "\n<details><summary>{} notes added</summary>\n\n",
                d.notes.len()
            ));
            for n in &d.notes {
                let first = n.text.lines().next().unwrap_or("").replace('<', "&lt;");
                md.push_str(&format!(
                    "- {} {}: {first}\n",
                    n.time.seconds(),
                    n.actor.replace('<', "&lt;")
                ));
            }
            md.push_str("\n</details>\n");
        }
        app.out.raw(&md)?;
        return Ok(0);
    }
    app.out.line(format!(
        "memory {} → {}: {}",
        short(&d.from),
        short(&d.to),
        counts(&d)
    ))?;
    for c in &d.changes {
        let reason = reason(c);
        app.out.line(format!(
            "{} {}{}{reason}",
            c.kind.as_str(),
            c.key,
            by(&c.actors)
        ))?;
        app.out.diff(&c.diff)?;
    }
    for k in &d.opened {
        app.out.line(format!("conflict opened {k}"))?;
    }
    for k in &d.resolved {
        app.out.line(format!("conflict resolved {k}"))?;
    }
    for n in &d.notes {
        app.out.line(format!(
            "note {} {}: {}",
            n.time.seconds(),
            n.actor,
            n.text.lines().next().unwrap_or("")
        ))?;
    }
    Ok(0)
}
