//! `memoir consolidate`

use super::{error::code, error::CliError, App};
use memoir::consolidate::{Action, Options};
use serde_json::json;

/// Turn pending proposals into memory and commit the store as one version.
/// A proposal for a new memory is added; one that repeats its memory is
/// merged into it (sources and tags joined); one that differs from its
/// memory or nearly duplicates another is a conflict, left pending for a
/// human (exit 4); memories past `expires` are forgotten. Shows every change
/// as a diff, then commits exactly the store's paths (your other staged and
/// unstaged changes stay as they are).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show the plan; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Apply without asking (the default when not on a terminal, for now always).
    #[arg(long)]
    yes: bool,
    /// The commit message's first line.
    #[arg(short = 'm', long = "message", value_name = "MSG")]
    message: Option<String>,
    /// Commit even when HEAD is detached.
    #[arg(long)]
    allow_detached: bool,
}

/// `MEMOIR_AUTHOR="Name <email>"`, if set.
pub fn author() -> Result<Option<(String, String)>, CliError> {
    let Ok(text) = std::env::var("MEMOIR_AUTHOR") else {
        return Ok(None);
    };
    let parsed = text
        .strip_suffix('>')
        .and_then(|t| t.split_once(" <"))
        .filter(|(n, e)| {
            !n.trim().is_empty()
                && e.contains('@')
                && !e.contains(['<', '>', '\n'])
                && !n.contains('\n')
        });
    match parsed {
        Some((n, e)) => Ok(Some((n.trim().to_string(), e.to_string()))),
        None => Err(CliError::Usage(format!(
            "MEMOIR_AUTHOR must be \"Name <email>\", not {text:?}"
        ))),
    }
}

pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let ctx = app.ctx(&store)?;
    let opts = Options {
        dry_run: args.dry_run,
        message: args.message,
        author: author()?,
        allow_detached: args.allow_detached,
    };
    let _ = args.yes;
    let plan = store.consolidate(&ctx, &opts)?;
    let name = |a: &Action| match a {
        Action::Add => "add",
        Action::Merge => "merge",
        Action::Duplicate => "duplicate",
        Action::Expire => "expire",
        Action::Conflict { .. } => "conflict",
    };
    app.out.json(&json!({
        "dry_run": args.dry_run,
        "steps": plan.steps.iter().map(|s| json!({
            "key": s.key.to_string(), "action": name(&s.action), "proposal": s.proposal,
            "reason": match &s.action { Action::Conflict { reason } => Some(reason.clone()), _ => None },
            "diff": s.diff(),
        })).collect::<Vec<_>>(),
        "stale": plan.stale.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "event": plan.event, "commit": plan.commit,
    }))?;
    for s in &plan.steps {
        match &s.action {
            Action::Conflict { reason } => app.out.line(format!(
                "conflict {}: {reason} (proposal {})",
                s.key,
                s.proposal.as_deref().unwrap_or("-")
            ))?,
            a => app.out.line(format!("{} {}", name(a), s.key))?,
        }
        if !matches!(s.action, Action::Duplicate) {
            app.out.diff(&s.diff())?;
        }
    }
    for k in &plan.stale {
        app.out.line(format!("stale {k}: past its review date"))?;
    }
    let (added, changed, forgotten, conflicts) = plan.counts();
    let verb = if args.dry_run {
        "would consolidate"
    } else {
        "consolidated"
    };
    app.out.line(format!(
        "{verb}: {added} added, {changed} changed, {forgotten} forgotten, {conflicts} conflicts"
    ))?;
    if let Some(c) = &plan.commit {
        app.out
            .line(format!("committed {}", &c[..c.len().min(12)]))?;
    }
    Ok(if conflicts > 0 {
        code::DECISION
    } else {
        code::OK
    })
}
