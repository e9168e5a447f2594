//! `memoir consolidate`

use super::{error::code, error::CliError, parse_key, App};
use memoir::model::memory::MemoryType;
use memoir::model::time::Date;
use memoir::ops::consolidate::{Action, Options};
use memoir::ops::resolve::Decision;
use memoir::ops::write::Remember;
use serde_json::json;
use std::io::IsTerminal;

/// Turn pending proposals into memory and commit the store as one version.
///
/// A proposal for a new memory is added; one that repeats its memory is
/// merged into it (sources and tags joined); one that differs from its memory
/// or nearly duplicates another is a conflict, left pending for a human (exit
/// 4); memories past `expires` are forgotten. Shows every change as a diff,
/// then commits exactly the store's paths (your other staged and unstaged
/// changes stay as they are).
#[derive(Debug, clap::Args)]
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

fn default_type() -> String {
    "project".into()
}

fn default_confidence() -> f64 {
    0.8
}

/// Runs the extractor on the pending notes; returns its candidates and the
/// notes it answered for (those a candidate names as drawn from, and those
/// it says it consumed with nothing to remember): only those are consumed,
/// so a note an extractor never read is given to the next one.
fn extract(
    cmd: &str,
    store: &memoir::store::Store,
) -> Result<(Vec<Remember>, Vec<String>), CliError> {
    use std::io::{Read, Write};
    let notes = memoir::ops::consolidate::pending_notes(store)?;
    let mut input = String::new();
    for n in &notes {
        input.push_str(
            &json!({"id": n.id, "time": n.time.millis(), "actor": n.actor, "text": n.body})
                .to_string(),
        );
        input.push('\n');
    }
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(&store.root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
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
    // Its output, read on a thread up to a cap: an endless one (`yes`) is
    // refused, and one left open by a process it started in the background
    // is not waited for once it has exited.
    const MAX_OUTPUT: u64 = 64 << 20;
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = stdout.take(MAX_OUTPUT + 1).read_to_end(&mut bytes);
            let _ = tx.send(read.map(|_| bytes));
        });
    }
    let failed = |why: String| {
        CliError::Failed(format!("the extractor `{cmd}` {why}; nothing consolidated"))
    };
    let mut output = None;
    let status = loop {
        if output.is_none() {
            if let Ok(read) = rx.recv_timeout(std::time::Duration::from_millis(50)) {
                let bytes = read?;
                if bytes.len() as u64 > MAX_OUTPUT {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(failed("printed more than 64 MiB".into()));
                }
                output = Some(bytes);
            }
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if output.is_some() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !status.success() {
        return Err(failed(format!("failed ({status})")));
    }
    let bytes = match output {
        Some(bytes) => bytes,
        None => match rx.recv_timeout(std::time::Duration::from_secs(5)) {
            Ok(read) => read?,
            Err(_) => {
                return Err(failed(
                    "exited with its output still open (a process it left in the background?)"
                        .into(),
                ))
            }
        },
    };
    if bytes.len() as u64 > MAX_OUTPUT {
        return Err(failed("printed more than 64 MiB".into()));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::Failed("the extractor's output is not UTF-8".into()))?;
    let given: std::collections::HashSet<&str> = notes.iter().map(|n| n.id.as_str()).collect();
    let mut consumed: Vec<String> = Vec::new();
    let mut candidates = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = |m: String| CliError::Failed(format!("extractor output line {}: {m}", i + 1));
        // A candidate's own errors (a missing field) are worth naming.
        let answer: Answer = serde_json::from_str(line).map_err(|e| {
            at(match serde_json::from_str::<Candidate>(line) {
                Err(c) if line.contains("\"key\"") => c.to_string(),
                _ if e.is_data() => "neither a candidate ({\"key\", \"description\", \"source\", …}) nor {\"consumed\": [note ids]}".into(),
                _ => e.to_string(),
            })
        })?;
        let answered = match &answer {
            Answer::Candidate(c) => &c.notes,
            Answer::Consumed { consumed } => consumed,
        };
        for id in answered {
            if !given.contains(id.as_str()) {
                return Err(at(format!("`{id}` is not a note it was given")));
            }
            if !consumed.contains(id) {
                consumed.push(id.clone());
            }
        }
        let Answer::Candidate(c) = answer else {
            continue;
        };
        let (key, name) = parse_key(&c.key)?;
        let kind = MemoryType::parse(&c.kind).ok_or_else(|| CliError::Refused {
            rule: "type".into(),
            input: format!("extractor output line {}", i + 1),
            message: format!("unknown type `{}`", c.kind),
        })?;
        if !(0.0..=1.0).contains(&c.confidence) {
            return Err(at("`confidence` must be between 0 and 1".into()));
        }
        let date = |d: &Option<String>| {
            d.as_deref()
                .map(Date::parse)
                .transpose()
                .map_err(|e| at(e.to_string()))
        };
        candidates.push(Remember {
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
        });
    }
    Ok((candidates, consumed))
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

/// Asks what to do with one conflict: keep, take, both or skip.
fn ask(app: &mut App, step: &memoir::ops::consolidate::Step) -> Result<Option<Decision>, CliError> {
    use std::io::{BufRead, Write};
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

pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let ctx = app.ctx(&store)?;
    let (extracted, notes) = match &args.extract_cmd {
        Some(cmd) => extract(cmd, &store)?,
        None => (Vec::new(), Vec::new()),
    };
    let mut opts = Options {
        dry_run: args.dry_run,
        message: args.message,
        author: author()?,
        allow_detached: args.allow_detached,
        extracted,
        notes,
        decisions: Default::default(),
    };
    // On a terminal, ask about each conflict first; otherwise they wait.
    let interactive = !args.dry_run
        && !args.yes
        && !app.out.json
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal();
    if interactive {
        let preview = memoir::ops::consolidate::consolidate(
            &store,
            &ctx,
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
                match &step.action {
                    Action::Conflict { reason } => reason.as_str(),
                    _ => "",
                }
            ))?;
            app.out.diff(&step.diff())?;
            if let Some(d) = ask(app, step)? {
                opts.decisions.insert(step.key.clone(), d);
            }
        }
    }
    let plan = memoir::ops::consolidate::consolidate(&store, &ctx, &opts)?;
    let name = |a: &Action| match a {
        Action::Add => "add",
        Action::Merge => "merge",
        Action::Duplicate => "duplicate",
        Action::Expire => "expire",
        Action::Evict => "evict",
        Action::Conflict { .. } => "conflict",
        Action::Decided { .. } => "decided",
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
