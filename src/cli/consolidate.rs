//! `memoir consolidate`

use super::output::{short_id, strings};
use super::{error::code, error::CliError, parse_key, App};
use memoir::model::memory::MemoryType;
use memoir::model::time::Date;
use memoir::ops::consolidate::{Action, Options, Plan};
use memoir::ops::resolve::Decision;
use memoir::ops::write::Remember;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitStatus;
use std::sync::mpsc::Receiver;
use std::time::Duration;

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

/// One line of an extractor's output: a candidate memory, or the notes it
/// read and found nothing in worth remembering.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Answer {
    Candidate(Box<Candidate>),
    Consumed { consumed: Vec<String> },
}

/// A candidate memory an extractor proposes.
#[derive(serde::Deserialize)]
struct Candidate {
    key: String,
    description: String,
    source: String,
    #[serde(rename = "type", default = "default_type")]
    kind: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default = "default_confidence")]
    confidence: f64,
    #[serde(default)]
    body: String,
    #[serde(default)]
    review_by: Option<String>,
    #[serde(default)]
    expires: Option<String>,
    /// The notes it was drawn from: consumed.
    #[serde(default)]
    notes: Vec<String>,
}

/// A candidate's type when it names none.
fn default_type() -> String {
    "project".into()
}

/// A candidate's confidence when it gives none.
fn default_confidence() -> f64 {
    0.8
}

/// The most an extractor may print: an endless output (`yes`) is refused.
const MAX_OUTPUT: u64 = 64 << 20;

/// Runs the extractor on the pending notes; returns its candidates and the
/// notes it answered for (those a candidate names as drawn from, and those
/// it says it consumed with nothing to remember): only those are consumed,
/// so a note an extractor never read is given to the next one.
fn extract(
    cmd: &str,
    store: &memoir::store::Store,
) -> Result<(Vec<Remember>, Vec<String>), CliError> {
    let notes = memoir::ops::consolidate::pending_notes(store)?;
    let mut input = String::new();
    for n in &notes {
        input.push_str(
            &json!({"id": n.id, "time": n.time.millis(), "actor": n.actor, "source": n.reason, "text": n.body})
                .to_string(),
        );
        input.push('\n');
    }
    let bytes = run_extractor(cmd, &store.root, input)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::Failed("the extractor's output is not UTF-8".into()))?;
    let given: HashSet<&str> = notes.iter().map(|n| n.id.as_str()).collect();
    answers(&text, &given)
}

/// The extractor failed: nothing is consolidated.
fn failed(cmd: &str, why: &str) -> CliError {
    CliError::Failed(format!("the extractor `{cmd}` {why}; nothing consolidated"))
}

/// Runs `cmd` with `sh -c` in `dir`, `input` on its stdin; returns its
/// output once it has exited successfully.
fn run_extractor(cmd: &str, dir: &Path, input: String) -> Result<Vec<u8>, CliError> {
    // In a process group of its own: killed, it takes what it started along.
    let mut child = memoir::service::process::spawn(
        std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped()),
    )
    .map_err(|e| CliError::Failed(format!("cannot run the extractor `{cmd}`: {e}")))?;
    // Written on a thread while the output is read: an extractor that
    // answers each line as it reads it would fill its output pipe while
    // memoir still writes, and both would wait for ever.
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            // An extractor that exits without reading is its own business.
            let _ = stdin.write_all(input.as_bytes());
        })
    });
    let output = read_output(child.stdout.take());
    let (status, bytes) = wait(cmd, &mut child, &output)?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !status.success() {
        return Err(failed(cmd, &format!("failed ({status})")));
    }
    let bytes = match bytes {
        Some(bytes) => bytes,
        None => match output.recv_timeout(Duration::from_secs(5)) {
            Ok(read) => read?,
            Err(_) => {
                memoir::service::process::kill(&mut child);
                return Err(failed(
                    cmd,
                    "exited with its output still open (a process it left in the background?)",
                ));
            }
        },
    };
    if bytes.len() as u64 > MAX_OUTPUT {
        return Err(failed(cmd, "printed more than 64 MiB"));
    }
    Ok(bytes)
}

/// What the extractor printed, as a thread reads it.
type Printed = Receiver<std::io::Result<Vec<u8>>>;

/// Reads the extractor's output on a thread up to a cap: an endless one
/// (`yes`) is refused, and one left open by a process it started in the
/// background is not waited for once it has exited.
fn read_output(stdout: Option<std::process::ChildStdout>) -> Printed {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = stdout.take(MAX_OUTPUT + 1).read_to_end(&mut bytes);
            let _ = tx.send(read.map(|_| bytes));
        });
    }
    rx
}

/// Waits for the extractor to exit, taking its output when it comes;
/// kills it once it has printed more than the cap.
fn wait(
    cmd: &str,
    child: &mut std::process::Child,
    output: &Printed,
) -> Result<(ExitStatus, Option<Vec<u8>>), CliError> {
    let mut bytes = None;
    loop {
        if bytes.is_none() {
            if let Ok(read) = output.recv_timeout(Duration::from_millis(50)) {
                let read = read?;
                if read.len() as u64 > MAX_OUTPUT {
                    memoir::service::process::kill(child);
                    return Err(failed(cmd, "printed more than 64 MiB"));
                }
                bytes = Some(read);
            }
        }
        if let Some(status) = child.try_wait()? {
            return Ok((status, bytes));
        }
        if bytes.is_some() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// An error in line `n` (1-based) of the extractor's output.
fn at_line(n: usize, message: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("extractor output line {n}: {message}"))
}

/// Parses the extractor's answers, one a line (blank lines skipped): the
/// candidates as requests, and the notes answered for, each once, every
/// one among those it was `given`.
fn answers(text: &str, given: &HashSet<&str>) -> Result<(Vec<Remember>, Vec<String>), CliError> {
    let mut consumed: Vec<String> = Vec::new();
    let mut candidates = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let n = i + 1;
        let answer = answer(line, n)?;
        let answered = match &answer {
            Answer::Candidate(c) => &c.notes,
            Answer::Consumed { consumed } => consumed,
        };
        for id in answered {
            if !given.contains(id.as_str()) {
                return Err(at_line(n, format!("`{id}` is not a note it was given")));
            }
            if !consumed.contains(id) {
                consumed.push(id.clone());
            }
        }
        if let Answer::Candidate(c) = answer {
            candidates.push(request(*c, n)?);
        }
    }
    Ok((candidates, consumed))
}

/// Line `n` of the extractor's output as an answer.
fn answer(line: &str, n: usize) -> Result<Answer, CliError> {
    // A candidate's own errors (a missing field) are worth naming.
    serde_json::from_str(line).map_err(|e| {
        at_line(n, match serde_json::from_str::<Candidate>(line) {
            Err(c) if line.contains("\"key\"") => c.to_string(),
            _ if e.is_data() => "neither a candidate ({\"key\", \"description\", \"source\", …}) nor {\"consumed\": [note ids]}".into(),
            _ => e.to_string(),
        })
    })
}

/// A candidate (from line `n`) as a request, its fields checked as
/// `remember` checks its flags.
fn request(c: Candidate, n: usize) -> Result<Remember, CliError> {
    let (key, name) = parse_key(&c.key)?;
    let kind = MemoryType::parse(&c.kind).ok_or_else(|| {
        CliError::refused(
            "type",
            &format!("extractor output line {n}"),
            format!("unknown type `{}`", c.kind),
        )
    })?;
    if !(0.0..=1.0).contains(&c.confidence) {
        return Err(at_line(n, "`confidence` must be between 0 and 1"));
    }
    let date = |d: &Option<String>| {
        d.as_deref()
            .map(Date::parse)
            .transpose()
            .map_err(|e| at_line(n, e))
    };
    Ok(Remember {
        key,
        name,
        description: c.description,
        kind,
        tags: c.tags,
        source: c.source,
        confidence: c.confidence,
        body: c.body,
        review_by: date(&c.review_by)?,
        expires: date(&c.expires)?,
        collision: Default::default(),
        expect: None,
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
    let (extracted, notes) = match &args.extract_cmd {
        Some(cmd) => extract(cmd, &store)?,
        None => (Vec::new(), Vec::new()),
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
        Err(memoir::ops::consolidate::ConsolidateError::Git(
            memoir::git::CommitError::InProgress("merge"),
        )) => {
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
