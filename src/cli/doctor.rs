//! `memoir doctor`

use super::output::count;
use super::{error::code, error::CliError, App};
use serde_json::json;

/// Check this clone's set-up: what memoir needs around the store to work.
///
/// Reports the merge drivers (without them a memory changed on two
/// branches is a text conflict), the git hooks, the `memoir` that PATH
/// finds (hooks, drivers and agents run it by name), whether the store
/// checks clean, the personal store, and the MCP entry for agents. Exit 1
/// when something needs fixing; each finding says how.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir doctor\n  memoir --json doctor")]
pub struct Args {}

/// One finding: what was checked, whether it is fine, and what to do.
struct Finding {
    what: &'static str,
    ok: bool,
    detail: String,
    fix: Option<String>,
}

/// Runs every check and prints them.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    app.out.show_data();
    let store = app.store()?;
    let mut findings = Vec::new();
    match memoir::integration::hooks::setup(&store.root) {
        Ok(setup) => {
            let drivers_ok = setup.complete()
                || setup
                    .drivers
                    .iter()
                    .all(|(_, c)| c.as_deref().is_some_and(|c| c.starts_with("memoir ")));
            findings.push(Finding {
                what: "merge drivers",
                ok: drivers_ok,
                detail: setup
                    .drivers
                    .iter()
                    .map(|(d, c)| {
                        format!("merge.{d}: {}", c.as_deref().unwrap_or("not configured"))
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
                fix: (!drivers_ok).then(|| "memoir hooks install".into()),
            });
            let missing: Vec<&str> = setup
                .hooks
                .iter()
                .filter(|(_, ok)| !ok)
                .map(|(h, _)| *h)
                .collect();
            findings.push(Finding {
                what: "git hooks",
                ok: missing.is_empty(),
                detail: if missing.is_empty() {
                    "pre-commit, post-merge, post-rewrite".into()
                } else {
                    format!("missing: {}", missing.join(", "))
                },
                fix: (!missing.is_empty()).then(|| "memoir hooks install".into()),
            });
        }
        Err(e) => findings.push(Finding {
            what: "git",
            ok: false,
            detail: e.to_string(),
            fix: None,
        }),
    }
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("memoir"))
            .find(|p| p.is_file())
    });
    findings.push(Finding {
        what: "memoir on PATH",
        ok: found.is_some(),
        detail: found.as_ref().map_or(
            "not found: hooks and drivers will fail with `memoir: not found`".into(),
            |p| p.display().to_string(),
        ),
        fix: found
            .is_none()
            .then(|| "cargo install --locked --path <memoir's source>".into()),
    });
    let report = memoir::ops::check::check(&store)?;
    let errors = report
        .problems
        .iter()
        .filter(|p| p.severity == memoir::ops::drift::Severity::Error)
        .count();
    findings.push(Finding {
        what: "store",
        ok: errors == 0,
        detail: format!(
            "{}, {}",
            count(report.memories, "memory", "memories"),
            if errors == 0 {
                "checks clean".to_string()
            } else {
                count(errors, "error", "errors")
            }
        ),
        fix: (errors > 0)
            .then(|| "memoir check says what; memoir rebuild or memoir record repairs".into()),
    });
    let personal = app.personal_store(&store, false)?;
    findings.push(Finding {
        what: "personal store",
        ok: true,
        detail: match (&personal, super::stores::personal_path()) {
            (Some(p), _) => p.root.display().to_string(),
            (None, _) if store.config.user_store == memoir::model::config::UserStore::Shared => {
                "user/ is shared in this repository (user_store: shared)".into()
            }
            (None, Some(p)) => format!("{} (created by the first `remember user/…`)", p.display()),
            (None, None) => "no HOME: user/ memories stay in this repository".into(),
        },
        fix: None,
    });
    let mcp = std::fs::read_to_string(store.root.join(".mcp.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["mcpServers"]["memoir"].is_object());
    findings.push(Finding {
        what: "agents (MCP)",
        ok: true,
        detail: if mcp {
            ".mcp.json registers memoir".into()
        } else {
            "no .mcp.json entry".into()
        },
        fix: (!mcp)
            .then(|| "memoir setup claude-code (or register `memoir mcp` in your client)".into()),
    });
    app.out.json(&json!({
        "ok": findings.iter().all(|f| f.ok),
        "checks": findings.iter().map(|f| json!({ "what": f.what, "ok": f.ok, "detail": f.detail, "fix": f.fix })).collect::<Vec<_>>(),
    }))?;
    for f in &findings {
        let mark = if f.ok { "ok  " } else { "FIX " };
        app.out.line(format!("{mark} {}: {}", f.what, f.detail))?;
        if let Some(fix) = &f.fix {
            app.out.line(format!("     run: {fix}"))?;
        }
    }
    Ok(if findings.iter().all(|f| f.ok) {
        code::OK
    } else {
        code::ERROR
    })
}
