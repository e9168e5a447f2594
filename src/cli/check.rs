//! `memoir check`

use super::{error::code, error::CliError, App};
use memoir::drift::Severity;
use serde_json::json;

/// Check the store.
///
/// Every log parses; every memory file is valid, holds no secret and equals
/// what replaying the logs gives (drift is named: a view an interrupted write
/// left behind, or a hand edit); MEMORY.md is in sync and within its budget.
/// Exit 1 when any error is found.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let report = store.check()?;
    let sev = |s: Severity| {
        if s == Severity::Error {
            "error"
        } else {
            "warning"
        }
    };
    app.out.json(&json!({
        "ok": !report.failed(),
        "memories": report.memories,
        "events": report.events,
        "problems": report.problems.iter().map(|p| json!({
            "severity": sev(p.severity), "path": p.path, "line": p.line, "rule": p.rule, "message": p.message,
        })).collect::<Vec<_>>(),
    }))?;
    for p in &report.problems {
        let line = p.line.map(|l| format!(":{l}")).unwrap_or_default();
        let text = format!(
            "{}{line}: {}[{}]: {}",
            p.path,
            sev(p.severity),
            p.rule,
            p.message
        );
        // Errors are printed even with -q: they are why the command fails.
        if p.severity == Severity::Error || !app.quiet() {
            eprintln!("{text}");
        }
    }
    Ok(if report.failed() {
        code::ERROR
    } else {
        code::OK
    })
}
