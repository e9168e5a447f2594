//! `memoir remember`

use super::output::{diagnostic, strings};
use super::stores::Origin;
use super::{error::code, error::CliError, parse_key, read_capped, App};
use memoir::model::key::Key;
use memoir::model::memory::MemoryType;
use memoir::model::remember::{Collision, Remember};
use memoir::model::time::Date;
use memoir::ops::write::{ProposalReason, RememberOutcome};
use serde_json::json;
use std::path::PathBuf;

/// Remember a fact.
///
/// Check it against the write policy, log it, write its file, update
/// MEMORY.md. Changing an existing memory, or writing one that nearly
/// duplicates another, prints the difference and keeps the new one as a
/// proposal (exit 4) unless --replace or --keep-both says what to do.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir remember project/test-command -d 'Run the tests with `pnpm test`' -s 'stated by the user on 2026-11-29'\n  memoir remember user/terse -d 'Prefers short answers' -s 'stated by the user' --type user\n  memoir remember project/db -d 'Postgres 16' -s 'ops handbook' --replace"
)]
pub struct Args {
    /// Where: <scope>/<name>, e.g. project/test-command.
    key: String,
    /// One line saying what the memory is; shown in MEMORY.md.
    #[arg(long, short = 'd', allow_hyphen_values = true)]
    description: String,
    /// Why it can be trusted (e.g. "stated by the user on 2026-11-29").
    #[arg(long, short = 's', allow_hyphen_values = true)]
    source: String,
    /// user, feedback, project or reference (default: user in the user
    /// scope, else project).
    #[arg(long = "type", short = 't', value_name = "TYPE")]
    kind: Option<String>,
    /// Comma-separated labels.
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// One label exactly as given, a comma and all (repeatable); an empty
    /// one is refused. The MCP tool's tags arrive this way.
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// 0..1 (default 1).
    #[arg(long, default_value_t = 1.0)]
    confidence: f64,
    /// The body text (a leading `-`, a markdown bullet, is text).
    #[arg(long, conflicts_with = "body_file", allow_hyphen_values = true)]
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

/// `--review-by`/`--expires`: a date, or a usage error naming the flag.
fn date(flag: &str, value: &Option<String>) -> Result<Option<Date>, CliError> {
    value
        .as_deref()
        .map(|v| Date::parse(v).map_err(|e| CliError::Usage(format!("{flag}: {e}"))))
        .transpose()
}

/// Checks the memory against the policy and writes it (or proposes it, or
/// says what it collides with).
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let (key, name) = parse_key(&args.key)?;
    let kind = match args.kind.as_deref() {
        Some(t) => parse_type(t)?,
        // What a memory about the person is, unless said otherwise.
        None if key.scope == "user" => MemoryType::User,
        None => MemoryType::Project,
    };
    check_flags(&args)?;
    let body = body(&args)?;
    if key.scope == "user" {
        // No one to log it as: refused before a first personal store is made.
        if let Ok(repo) = app.store() {
            app.ctx(&repo)?;
        }
    }
    let (store, origin) = app.store_for(&key, true)?;
    // A replacement says what changes: the type and tags it does not
    // give are the memory's own (a `--replace` of the description alone
    // turned a feedback memory into a project one and dropped its tags).
    let old = match args.replace {
        true => store
            .read_memory_file(&key.rel_path())
            .ok()
            .flatten()
            .and_then(|text| memoir::model::memory::Memory::parse(&text).ok()),
        false => None,
    };
    let kind = match (&args.kind, &old) {
        (None, Some(old)) => old.kind,
        _ => kind,
    };
    let mut req = request(args, key, name, kind, body)?;
    if let (true, Some(old)) = (req.tags.is_empty(), &old) {
        req.tags = old.tags.clone();
    }
    let ctx = app.ctx(&store)?;
    let outcome = memoir::ops::write::remember(&store, &ctx, &req)?;
    render(app, outcome, origin, &req.name)
}

/// `--type`: one of the four types, else refused.
fn parse_type(text: &str) -> Result<MemoryType, CliError> {
    MemoryType::parse(text).ok_or_else(|| {
        CliError::refused(
            "type",
            "--type",
            format!("unknown type `{text}` (expected user, feedback, project or reference)"),
        )
    })
}

/// `--expect` is an event id; `--confidence` is in 0..1.
fn check_flags(args: &Args) -> Result<(), CliError> {
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
    Ok(())
}

/// The body: `--body`, or `--body-file` (stdin with `-`) read up to a
/// memory file's cap, or empty.
fn body(args: &Args) -> Result<String, CliError> {
    /// A body is at most what a memory file may hold.
    const MAX: usize = memoir::model::memory::MAX_FILE_BYTES;
    let path = match (&args.body, &args.body_file) {
        (Some(b), _) => return Ok(b.clone()),
        (None, Some(p)) => p,
        (None, None) => return Ok(String::new()),
    };
    let label = path.display().to_string();
    let bytes = if label == "-" {
        read_capped(std::io::stdin(), MAX)?
    } else {
        let unreadable = |e: std::io::Error| CliError::Input {
            input: label.clone(),
            message: e.to_string(),
        };
        let f = std::fs::File::open(path).map_err(unreadable)?;
        // Read one byte past the limit: enough to refuse without reading a huge file.
        read_capped(f, MAX).map_err(unreadable)?
    };
    if bytes.len() > MAX {
        return Err(CliError::refused(
            "size",
            &label,
            format!("the body is more than {MAX} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|_| CliError::Input {
        input: label,
        message: "not valid UTF-8".into(),
    })
}

/// The request the flags make.
fn request(
    args: Args,
    key: Key,
    name: String,
    kind: MemoryType,
    body: String,
) -> Result<Remember, CliError> {
    let collision = if args.replace {
        Collision::Replace
    } else if args.keep_both {
        Collision::KeepBoth
    } else if args.propose {
        Collision::Propose
    } else {
        Collision::Ask
    };
    Ok(Remember {
        key,
        name,
        description: args.description,
        kind,
        // `--tags a,,b` is a list typed by hand: its blanks are dropped.
        // `--tag` is one label as a client sent it: the policy judges it.
        tags: args
            .tags
            .into_iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .chain(args.tag)
            .collect(),
        source: args.source,
        confidence: args.confidence,
        body,
        review_by: date("--review-by", &args.review_by)?,
        expires: date("--expires", &args.expires)?,
        collision,
        expect: args.expect,
    })
}

/// Says what happened, in text and JSON; exit 4 when a human must decide.
///
/// `name` is the name as given, kept in the file: when it is not its own
/// slug (`My Fact Name`, key `project/my-fact-name`), the text says so and
/// the JSON carries both, so no caller (a model over MCP least of all)
/// takes the key for the name it sent.
fn render(
    app: &mut App,
    outcome: RememberOutcome,
    origin: Origin,
    name: &str,
) -> Result<u8, CliError> {
    let store = origin.as_str();
    // A memory kept beside another (`--keep-both`) is named by its new slug.
    let name_of = |key: &Key| match memoir::model::key::slugify(name) {
        Ok(slug) if slug == key.slug => name.to_string(),
        _ => key.slug.clone(),
    };
    let named = |key: &Key| {
        let n = name_of(key);
        if n == key.slug {
            String::new()
        } else {
            format!(" (named \"{n}\"; the key is its slug)")
        }
    };
    let personal = if origin == Origin::Personal {
        " (in your personal store)"
    } else {
        ""
    };
    match outcome {
        RememberOutcome::Written {
            key,
            id,
            replaced,
            superseded,
        } => {
            app.out.json(&json!({
                "status": "written", "key": key.to_string(), "name": name_of(&key), "path": key.rel_path(), "id": id,
                "replaced": replaced, "superseded": strings(&superseded), "store": store,
            }))?;
            for s in &superseded {
                app.out.line(format!("forgot {s} (superseded by {key})"))?;
            }
            app.out.line(format!(
                "{} {key}{personal}{}",
                if replaced { "replaced" } else { "remembered" },
                named(&key)
            ))?;
            Ok(code::OK)
        }
        RememberOutcome::Unchanged { key } => {
            app.out.json(
                &json!({ "status": "unchanged", "key": key.to_string(), "name": name_of(&key), "path": key.rel_path(), "store": store }),
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
        } => proposed(app, &key, &name_of(&key), &id, &reason, &diff, store),
        RememberOutcome::Moved {
            key,
            expected,
            heads,
        } => {
            app.out.json(&json!({ "status": "moved", "key": key.to_string(), "expected": expected, "heads": heads }))?;
            diagnostic(&format!(
                "memoir: {key} moved on: expected version {expected}, current is {}; nothing written",
                if heads.is_empty() { "none".to_string() } else { heads.join(", ") }
            ));
            Ok(code::DECISION)
        }
    }
}

/// A proposal: asked for (exit 0), or kept because the memory collides
/// (the difference shown, exit 4).
fn proposed(
    app: &mut App,
    key: &Key,
    name: &str,
    id: &str,
    reason: &ProposalReason,
    diff: &str,
    store: &str,
) -> Result<u8, CliError> {
    let (why, reason_json, other) = match reason {
        ProposalReason::Requested => ("proposed".to_string(), "requested", None),
        ProposalReason::Changed => (
            format!("{key} exists with different content"),
            "changed",
            None,
        ),
        ProposalReason::Conflict => (format!("{key} has an open conflict"), "conflict", None),
        ProposalReason::NearDuplicate { other, similarity } => (
            format!("{other} says nearly the same (similarity {similarity:.2})"),
            "near-duplicate",
            Some(other.to_string()),
        ),
    };
    app.out.json(&json!({
        "status": "proposed", "key": key.to_string(), "name": name, "id": id, "reason": reason_json,
        "other": other, "diff": diff, "store": store,
    }))?;
    if *reason == ProposalReason::Requested {
        app.out.line(format!("proposed {key} ({id})"))?;
        return Ok(code::OK);
    }
    // Why it exits 4: shown even with -q.
    app.out.show_data();
    app.out.diff(diff)?;
    app.out.line(format!(
        "{why}: kept as proposal {id}.\nRerun with --replace to overwrite, or --keep-both to keep both."
    ))?;
    Ok(code::DECISION)
}
