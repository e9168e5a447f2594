//! `memoir remember`

use super::{error::code, error::CliError, parse_key, App};
use memoir::model::memory::MemoryType;
use memoir::model::time::Date;
use memoir::ops::write::{Collision, ProposalReason, Remember, RememberOutcome};
use serde_json::json;
use std::io::Read;
use std::path::PathBuf;

/// Remember a fact.
///
/// Check it against the write policy, log it, write its file, update
/// MEMORY.md. Changing an existing memory, or writing one that nearly
/// duplicates another, prints the difference and keeps the new one as a
/// proposal (exit 4) unless --replace or --keep-both says what to do.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where: <scope>/<name>, e.g. project/test-command.
    key: String,
    /// One line saying what the memory is; shown in MEMORY.md.
    #[arg(long, short = 'd')]
    description: String,
    /// Why it can be trusted (e.g. "stated by the user on 2026-11-29").
    #[arg(long, short = 's')]
    source: String,
    /// user, feedback, project or reference (default: project).
    #[arg(
        long = "type",
        short = 't',
        default_value = "project",
        value_name = "TYPE"
    )]
    kind: String,
    /// Comma-separated labels.
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// 0..1 (default 1).
    #[arg(long, default_value_t = 1.0)]
    confidence: f64,
    /// The body text.
    #[arg(long, conflicts_with = "body_file")]
    body: Option<String>,
    /// Read the body from a file, or from stdin with `-`.
    #[arg(long, value_name = "FILE")]
    body_file: Option<PathBuf>,
    /// Flag the memory for review after this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    review_by: Option<String>,
    /// Let consolidation forget the memory after this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    expires: Option<String>,
    /// Replace what the new memory collides with (a near-duplicate is forgotten as superseded).
    #[arg(long, conflicts_with_all = ["keep_both", "propose"])]
    replace: bool,
    /// Keep both: a changed memory is written beside the old one as <slug>-2.
    #[arg(long, conflicts_with = "propose")]
    keep_both: bool,
    /// Only propose the memory, for consolidation to decide.
    #[arg(long)]
    propose: bool,
    /// Compare-and-swap: write only if the memory's current version is this event (else exit 4).
    #[arg(long, value_name = "EVENT_ID")]
    expect: Option<String>,
}

fn refused(rule: &str, input: &str, message: String) -> CliError {
    CliError::Refused {
        rule: rule.into(),
        input: input.into(),
        message,
    }
}

fn date(flag: &str, value: &Option<String>) -> Result<Option<Date>, CliError> {
    value
        .as_deref()
        .map(|v| Date::parse(v).map_err(|e| CliError::Usage(format!("{flag}: {e}"))))
        .transpose()
}

pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let (key, name) = parse_key(&args.key)?;
    let kind = MemoryType::parse(&args.kind).ok_or_else(|| {
        refused(
            "type",
            "--type",
            format!(
                "unknown type `{}` (expected user, feedback, project or reference)",
                args.kind
            ),
        )
    })?;
    if args
        .expect
        .as_deref()
        .is_some_and(|e| !memoir::model::event::is_id(e))
    {
        // Never echoed back (a pasted token would be).
        return Err(CliError::Usage(
            "--expect must be an event id (26 characters, as `memoir show --json` gives in heads)"
                .into(),
        ));
    }
    if !(0.0..=1.0).contains(&args.confidence) {
        return Err(CliError::Usage(
            "--confidence must be between 0 and 1".into(),
        ));
    }
    let body = match (&args.body, &args.body_file) {
        (Some(b), _) => b.clone(),
        (None, Some(p)) => {
            let label = p.display().to_string();
            let mut bytes = Vec::new();
            if label == "-" {
                std::io::stdin()
                    .take(memoir::model::memory::MAX_FILE_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)?;
            } else {
                let unreadable = |e: std::io::Error| CliError::Input {
                    input: label.clone(),
                    message: e.to_string(),
                };
                let f = std::fs::File::open(p).map_err(unreadable)?;
                // Read one byte past the limit: enough to refuse without reading a huge file.
                f.take(memoir::model::memory::MAX_FILE_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(unreadable)?;
            }
            if bytes.len() > memoir::model::memory::MAX_FILE_BYTES {
                return Err(refused(
                    "size",
                    &label,
                    format!(
                        "the body is more than {} bytes",
                        memoir::model::memory::MAX_FILE_BYTES
                    ),
                ));
            }
            String::from_utf8(bytes).map_err(|_| CliError::Input {
                input: label,
                message: "not valid UTF-8".into(),
            })?
        }
        (None, None) => String::new(),
    };
    let req = Remember {
        key,
        name,
        description: args.description,
        kind,
        tags: args
            .tags
            .into_iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        source: args.source,
        confidence: args.confidence,
        body,
        review_by: date("--review-by", &args.review_by)?,
        expires: date("--expires", &args.expires)?,
        collision: if args.replace {
            Collision::Replace
        } else if args.keep_both {
            Collision::KeepBoth
        } else if args.propose {
            Collision::Propose
        } else {
            Collision::Ask
        },
        expect: args.expect,
    };
    let ctx = app.ctx(&store)?;
    match memoir::ops::write::remember(&store, &ctx, &req)? {
        RememberOutcome::Written {
            key,
            id,
            replaced,
            superseded,
        } => {
            app.out.json(&json!({
                "status": "written", "key": key.to_string(), "path": key.rel_path(), "id": id,
                "replaced": replaced, "superseded": superseded.iter().map(ToString::to_string).collect::<Vec<_>>(),
            }))?;
            for s in &superseded {
                app.out.line(format!("forgot {s} (superseded by {key})"))?;
            }
            app.out.line(format!(
                "{} {key}",
                if replaced { "replaced" } else { "remembered" }
            ))?;
            Ok(code::OK)
        }
        RememberOutcome::Unchanged { key } => {
            app.out.json(
                &json!({ "status": "unchanged", "key": key.to_string(), "path": key.rel_path() }),
            )?;
            app.out.line(format!(
                "{key} is already remembered as given; nothing changed"
            ))?;
            Ok(code::OK)
        }
        RememberOutcome::Proposed {
            key,
            id,
            reason,
            diff,
        } => {
            let (why, reason_json, other) = match &reason {
                ProposalReason::Requested => ("proposed".to_string(), "requested", None),
                ProposalReason::Changed => (
                    format!("{key} exists with different content"),
                    "changed",
                    None,
                ),
                ProposalReason::Conflict => {
                    (format!("{key} has an open conflict"), "conflict", None)
                }
                ProposalReason::NearDuplicate { other, similarity } => (
                    format!("{other} says nearly the same (similarity {similarity:.2})"),
                    "near-duplicate",
                    Some(other.to_string()),
                ),
            };
            app.out.json(&json!({
                "status": "proposed", "key": key.to_string(), "id": id, "reason": reason_json,
                "other": other, "diff": diff,
            }))?;
            if reason == ProposalReason::Requested {
                app.out.line(format!("proposed {key} ({id})"))?;
                return Ok(code::OK);
            }
            app.out.diff(&diff)?;
            app.out.line(format!(
                "{why}: kept as proposal {id}.\nRerun with --replace to overwrite, or --keep-both to keep both."
            ))?;
            Ok(code::DECISION)
        }
        RememberOutcome::Moved {
            key,
            expected,
            heads,
        } => {
            app.out.json(&json!({ "status": "moved", "key": key.to_string(), "expected": expected, "heads": heads }))?;
            super::output::diagnostic(&format!(
                "memoir: {key} moved on: expected version {expected}, current is {}; nothing written",
                if heads.is_empty() { "none".to_string() } else { heads.join(", ") }
            ));
            Ok(code::DECISION)
        }
    }
}
