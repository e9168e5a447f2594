//! `memoir consolidate`

use super::output::{short_id, strings};
use super::{error::code, error::CliError, parse_key, App};
use memoir::change::resolve::Decision;
use memoir::extract::{ExtractError, Extracted};
use memoir::ops::consolidate::{Action, Options, Plan};
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};

/// Turn pending proposals into memory and commit the store as one version.
///
/// A proposal for a new memory is added; one that repeats its memory is
/// merged into it (sources and tags joined); one that differs from its memory
/// or nearly duplicates another is a conflict, left pending for a human (exit
/// 4); so is imported curated text (OpenClaw's MEMORY.md), until accepted
/// with --accept KEY or --accept-all; memories past `expires` are forgotten. Shows every change as a diff,
/// then commits exactly the store's paths (your other staged and unstaged
/// changes stay as they are).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir consolidate --dry-run\n  memoir consolidate --yes -m 'memory: weekly consolidation'"
)]
pub struct Args {
    /// Show the plan; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Apply without asking about conflicts (they stay pending); the default
    /// when not on a terminal.
    #[arg(long)]
    yes: bool,
    /// The commit message's first line.
    #[arg(short = 'm', long = "message", value_name = "MSG")]
    message: Option<String>,
    /// Commit even when HEAD is detached.
    #[arg(long)]
    allow_detached: bool,
    /// Run this shell command as the extractor: it reads the notes no
    /// consolidation has consumed yet as JSON lines on stdin and prints
    /// candidate memories as JSON lines (protocol in docs/cli.md); they pass
    /// the write policy and are consolidated like proposals.
    #[arg(long, value_name = "CMD")]
    extract_cmd: Option<String>,
    /// Add this imported proposal (held for review: imported curated text,
    /// e.g. OpenClaw's MEMORY.md sections); repeatable.
    #[arg(long, value_name = "KEY")]
    accept: Vec<String>,
    /// Add every imported proposal held for review.
    #[arg(long)]
    accept_all: bool,
}

/// Runs the extractor (`memoir::extract`) on the pending notes; its errors
/// as the CLI's: a refused key or type is a refusal (exit 3), the rest
/// failures (exit 1).
fn extract(cmd: &str, store: &memoir::store::Store) -> Result<Extracted, CliError> {
    memoir::extract::extract(cmd, store).map_err(|e| match e {
        ExtractError::Store(e) => CliError::Store(e),
        ExtractError::Io(e) => CliError::Io(e),
        ExtractError::Key { key, message } => CliError::refused("name", &key, message),
        ExtractError::Type { line, kind } => CliError::refused(
            "type",
            &format!("extractor output line {line}"),
            format!("unknown type `{kind}`"),
        ),
        e @ (ExtractError::Spawn { .. }
        | ExtractError::Failed { .. }
        | ExtractError::NotUtf8
        | ExtractError::Line { .. }) => CliError::Failed(e.to_string()),
    })
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

/// The time and actor of a command that commits (consolidate, rollback):
/// without MEMOIR_ACTOR or git's identity, MEMOIR_AUTHOR, who commits,
/// is who writes its events.
pub fn committing_ctx(
    app: &App,
    store: &memoir::store::Store,
    dry_run: bool,
    author: &Option<(String, String)>,
) -> Result<memoir::store::Ctx, CliError> {
    match (app.ctx_unless_dry(store, dry_run), author) {
        (Err(CliError::NoIdentity), Some((name, email))) => Ok(memoir::store::Ctx {
            now: app.now()?,
            actor: format!("{name} <{email}>"),
        }),
        (ctx, _) => ctx,
    }
}

/// Asks what to do with one conflict: keep, take, both or skip.
fn ask(app: &mut App, step: &memoir::ops::consolidate::Step) -> Result<Option<Decision>, CliError> {
    use std::io::BufRead;
    loop {
        print!(
            "{}: [k]eep current, [t]ake new, keep [b]oth, [s]kip? ",
            step.key
        );
        app.out.flush()?;
        std::io::stdout().flush()?;
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer)? == 0 {
            return Ok(None);
        }
        match answer.trim() {
            "k" | "keep" => return Ok(Some(Decision::Keep)),
            "t" | "take" => return Ok(step.proposal.clone().map(Decision::Take)),
            "b" | "both" => return Ok(Some(Decision::Both)),
            "s" | "skip" | "" => return Ok(None),
            _ => continue,
        }
    }
}

/// Consolidates (after asking about each conflict, on a terminal) and
/// shows the plan; exit 4 while conflicts stay pending.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let author = author()?;
    let ctx = committing_ctx(app, &store, args.dry_run, &author)?;
    let Extracted {
        candidates: extracted,
        notes,
    } = match &args.extract_cmd {
        Some(cmd) => extract(cmd, &store)?,
        None => Extracted::default(),
    };
    let mut opts = Options {
        dry_run: args.dry_run,
        message: args.message,
        author,
        allow_detached: args.allow_detached,
        extracted,
        notes,
        decisions: Default::default(),
        accept: args
            .accept
            .iter()
            .map(|k| parse_key(k).map(|(key, _)| key))
            .collect::<Result<_, _>>()?,
        accept_all: args.accept_all,
    };
    // On a terminal, ask about each conflict first; otherwise they wait.
    let interactive = !args.dry_run
        && !args.yes
        && !app.out.json
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal();
    if interactive {
        decide(app, &store, &ctx, &mut opts)?;
    }
    let plan = match memoir::ops::consolidate::consolidate(&store, &ctx, &opts) {
        Ok(p) => p,
        // A merge's one next step, as `status` and `check` say it.
        Err(memoir::change::version::VersionError::Git(memoir::git::CommitError::InProgress(
            "merge",
        ))) => {
            let step = app
                .merge_in_progress(&store)?
                .map(|(_, step)| step)
                .unwrap_or_else(|| "a merge is in progress: `git commit` finishes it".into());
            return Err(CliError::Failed(format!(
                "{step}; then run `memoir consolidate` again (or `git merge --abort` gives up the merge)"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    app.out.json(&plan_json(&plan, args.dry_run))?;
    let conflicts = show_plan(app, &plan, args.dry_run)?;
    Ok(if conflicts > 0 {
        code::DECISION
    } else {
        code::OK
    })
}

/// Shows each conflict a dry run finds and records what the user decides.
fn decide(
    app: &mut App,
    store: &memoir::store::Store,
    ctx: &memoir::store::Ctx,
    opts: &mut Options,
) -> Result<(), CliError> {
    let preview = memoir::ops::consolidate::consolidate(
        store,
        ctx,
        &Options {
            dry_run: true,
            ..opts.clone()
        },
    )?;
    for step in preview.conflicts() {
        if opts.decisions.contains_key(&step.key) {
            continue;
        }
        app.out.line(format!(
            "conflict {}: {}",
            step.key,
            conflict_reason(&step.action).unwrap_or("")
        ))?;
        app.out.diff(&step.diff())?;
        if let Some(d) = ask(app, step)? {
            opts.decisions.insert(step.key.clone(), d);
        }
    }
    Ok(())
}

/// A step's action as text and JSON name it.
fn action_name(a: &Action) -> &'static str {
    match a {
        Action::Add => "add",
        Action::Merge => "merge",
        Action::Duplicate => "duplicate",
        Action::Expire => "expire",
        Action::Evict => "evict",
        Action::Conflict { .. } => "conflict",
        Action::Decided { .. } => "decided",
    }
}

/// Why a step is a conflict; nothing for any other step.
fn conflict_reason(a: &Action) -> Option<&str> {
    match a {
        Action::Conflict { reason } => Some(reason),
        _ => None,
    }
}

/// The plan in JSON.
fn plan_json(plan: &Plan, dry_run: bool) -> Value {
    json!({
        "dry_run": dry_run,
        "steps": plan.steps.iter().map(|s| json!({
            "key": s.key.to_string(), "action": action_name(&s.action), "proposal": s.proposal,
            "reason": conflict_reason(&s.action),
            "diff": s.diff(),
        })).collect::<Vec<_>>(),
        "stale": strings(&plan.stale),
        "setup": plan.setup,
        "event": plan.event, "commit": plan.commit,
    })
}

/// The plan as text: each step and its diff, the stale memories, the
/// counts and the commit; returns how many conflicts stay pending.
fn show_plan(app: &mut App, plan: &Plan, dry_run: bool) -> Result<usize, CliError> {
    if plan.conflicts().next().is_some() {
        // The conflicts are why it exits 4: shown even with -q.
        app.out.show_data();
    }
    for s in &plan.steps {
        match &s.action {
            Action::Conflict { reason } => app.out.line(format!(
                "conflict {}: {reason} (proposal {})",
                s.key,
                s.proposal.as_deref().unwrap_or("-")
            ))?,
            a => app.out.line(format!("{} {}", action_name(a), s.key))?,
        }
        if !matches!(s.action, Action::Duplicate) {
            app.out.diff(&s.diff())?;
        }
    }
    for k in &plan.stale {
        app.out.line(format!("stale {k}: past its review date"))?;
    }
    let (added, changed, forgotten, conflicts) = plan.counts();
    let verb = if dry_run {
        "would consolidate"
    } else {
        "consolidated"
    };
    app.out.line(format!(
        "{verb}: {added} added, {changed} changed, {forgotten} forgotten, {conflicts} conflicts"
    ))?;
    if let Some(c) = &plan.commit {
        if plan.setup.is_empty() {
            app.out.line(format!("committed {}", short_id(c)))?;
        } else {
            // The counts alone say nothing was committed.
            app.out.line(format!(
                "committed {}: the store's first version, with its set-up ({})",
                short_id(c),
                plan.setup.join(", ")
            ))?;
        }
    }
    Ok(conflicts)
}
