//! `memoir check`

use super::output::{diagnostic, problem, severity};
use super::{error::code, error::CliError, App};
use memoir::change::drift::Severity;
use serde_json::json;

/// Check the store.
///
/// Every log parses; every memory file is valid, holds no secret and equals
/// what replaying the logs gives (drift is named: a view an interrupted write
/// left behind, or a hand edit); MEMORY.md is in sync and within its budget.
/// Exit 1 when any error is found.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir check\n  memoir check --base origin/main   # in CI on a pull request"
)]
pub struct Args {
    /// Also check the change since this revision (for CI on a pull request):
    /// every log at it is a prefix of the same log now, and nothing added
    /// since holds a secret.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
}

/// Checks the store; prints the report; exit 1 when it found an error.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let report = memoir::ops::check::check_against(&store, args.base.as_deref())?;
    let merge = app.merge_in_progress(&store)?;
    app.out.json(&json!({
        "ok": !report.failed(),
        "merge": merge.as_ref().map(|(m, step)| json!({
            "unmerged": m.unmerged, "settled": m.settled, "next_step": step,
        })),
        "memories": report.memories,
        "events": report.events,
        "problems": report.problems.iter().map(|p| json!({
            "severity": severity(p.severity), "path": p.path, "line": p.line, "rule": p.rule, "message": p.message,
        })).collect::<Vec<_>>(),
    }))?;
    for p in &report.problems {
        // Errors are printed even with -q: they are why the command fails.
        if p.severity == Severity::Error || !app.quiet() {
            diagnostic(&problem(p));
        }
    }
    // After the findings, the one step that settles those a merge left.
    if let Some((_, step)) = &merge {
        diagnostic(&format!("memoir: {step}"));
    }
    Ok(if report.failed() {
        code::ERROR
    } else {
        code::OK
    })
}
