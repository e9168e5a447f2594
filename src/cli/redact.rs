//! `memoir redact`

use super::{error::CliError, App};
use memoir::ops::redact::RedactOptions;
use serde_json::json;

/// Remove a secret that slipped into the store: the one audited rewrite.
///
/// Every log entry, memory file and MEMORY.md in which the secret rules find
/// a secret (or, with ids, the entries named, whole) is rewritten with each
/// secret replaced by `[redacted:<rule>:<hash>]`; a `redact` event lists each entry
/// rewritten with the git blob id of its old text, so that `check --base`
/// and `consolidate` accept exactly that rewrite. The views are rebuilt.
/// Rotate the secret: it stays in git history until purged (docs/cli.md).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir redact --dry-run\n  memoir redact 01JD8X... --reason 'a token was pasted'"
)]
pub struct Args {
    /// Log entries to redact whole, by event id (a secret the rules miss).
    ids: Vec<String>,
    /// Why, recorded in each redacted entry.
    #[arg(long, short = 'r', allow_hyphen_values = true)]
    reason: Option<String>,
    /// Change nothing; list what would be redacted.
    #[arg(long)]
    dry_run: bool,
}

/// Redacts the secrets (or the entries named) and rebuilds the views.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let ctx = app.ctx_unless_dry(&store, args.dry_run)?;
    if let Some(f) = args
        .reason
        .as_deref()
        .and_then(|r| memoir::policy::secrets::find_secrets(r).into_iter().next())
    {
        return Err(CliError::refused(
            &format!("secret:{}", f.rule),
            "--reason",
            "looks like a secret (value not shown)".into(),
        ));
    }
    let r = memoir::ops::redact::redact(
        &store,
        &ctx,
        &RedactOptions {
            ids: args.ids,
            reason: args.reason,
            dry_run: args.dry_run,
        },
    )?;
    app.out.json(&json!({
        "dry_run": args.dry_run,
        "entries": r.entries.iter().map(|e| json!({"path": e.path, "id": e.id, "rules": e.rules, "removed": e.removed, "review": e.review})).collect::<Vec<_>>(),
        "files": r.files,
        "event": r.event,
        "rebuilt": r.rebuilt, "already": r.already,
    }))?;
    let verb = if args.dry_run {
        "would redact"
    } else {
        "redacted"
    };
    for e in &r.entries {
        let rules = if e.rules.is_empty() {
            "whole entry".to_string()
        } else {
            e.rules.join(", ")
        };
        app.out
            .line(format!("{verb} {}: entry {} ({rules})", e.path, e.id))?;
        if let Some(id) = &e.review {
            // Not chatter: without it the next version refuses the rewrite.
            app.out.line(format!(
                "  no rule shows it held a secret: list {id} under `accepted_entries:` in memory/config.yaml to commit it"
            ))?;
        }
    }
    app.out.items(&format!("{verb} "), &r.files)?;
    for id in &r.already {
        app.out.line(format!(
            "entry {id} is redacted already; nothing more to do"
        ))?;
    }
    if r.entries.is_empty() && r.files.is_empty() {
        if !r.already.is_empty() {
            return Ok(0);
        }
        app.out.line("nothing to redact")?;
        return Ok(0);
    }
    if !args.dry_run {
        next_steps(app, &store, &r.files)?;
    }
    Ok(0)
}

/// What comes after a redaction: a redacted file that is a hand edit
/// memoir never recorded (the usual way a secret gets past the policy)
/// still fails `check` until it is recorded, and the rewrite is committed
/// by the next version.
fn next_steps(
    app: &mut App,
    store: &memoir::store::Store,
    files: &[String],
) -> Result<(), CliError> {
    let (_, drifts) = memoir::change::drift::drifts(store)?;
    let hand: Vec<String> = drifts
        .iter()
        .filter(|d| !d.kind.is_memoirs() && files.contains(&d.path))
        .map(|d| d.path.clone())
        .collect();
    // Not chatter: without it `check` keeps failing on the file.
    if !hand.is_empty() {
        app.out.line(format!(
            "next: `memoir record` records the redacted hand edit of {} (`memoir rebuild --force` discards it instead), then `memoir consolidate` commits the redaction; rotate the secret too",
            hand.join(", ")
        ))?;
    } else {
        app.out.line(
            "next: `memoir consolidate` commits the redaction; rotate the secret too (it stays in git's history)",
        )?;
    }
    Ok(())
}
