//! `memoir doctor`

use super::output::count;
use super::{error::code, error::CliError, App};
use memoir::store::Store;
use serde_json::json;

/// Check this clone's set-up: what memoir needs around the store to work.
///
/// Reports the merge drivers (without them a memory changed on two
/// branches is a text conflict), the git hooks, who writes are logged as
/// (without an identity every write is refused), the `memoir` that PATH
/// finds (hooks, drivers and agents run it by name), whether the store
/// checks clean, the personal store, and the MCP entry for agents. Exit 1
/// when something needs fixing; each finding says how.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir doctor\n  memoir --json doctor")]
pub struct Args {}

/// One finding: what was checked, whether it is fine, and what to do.
/// A note is fine (exit 0) and still comes with a suggestion: it is marked
/// `note`, never `ok`, so that an `ok` line never carries advice.
struct Finding {
    what: &'static str,
    ok: bool,
    note: bool,
    detail: String,
    fix: Option<String>,
}

impl Finding {
    fn new(what: &'static str, ok: bool, detail: String, fix: &str) -> Finding {
        Finding {
            what,
            ok,
            note: false,
            detail,
            fix: (!ok && !fix.is_empty()).then(|| fix.to_string()),
        }
    }
}

/// Runs every check and prints them.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    app.out.show_data();
    let store = app.store()?;
    let mut findings = git_setup(&store);
    findings.push(identity(app, &store));
    findings.push(committer(&store));
    findings.push(on_path());
    findings.push(store_checks(&store)?);
    findings.push(personal(app, &store)?);
    findings.push(mcp_entry(&store));
    app.out.json(&json!({
        "ok": findings.iter().all(|f| f.ok),
        "checks": findings.iter().map(|f| json!({ "what": f.what, "ok": f.ok, "note": f.note, "detail": f.detail, "fix": f.fix })).collect::<Vec<_>>(),
    }))?;
    for f in &findings {
        let mark = match (f.ok, f.note) {
            (false, _) => "FIX ",
            (true, true) => "note",
            (true, false) => "ok  ",
        };
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

/// The merge drivers and the hooks of this clone.
fn git_setup(store: &Store) -> Vec<Finding> {
    let setup = match memoir::integration::hooks::setup(store) {
        Ok(s) => s,
        Err(e) => return vec![Finding::new("git", false, e.to_string(), "")],
    };
    let drivers_ok = setup
        .drivers
        .iter()
        .all(|(_, c)| c.as_deref().is_some_and(|c| c.contains("merge-driver")));
    let drivers = setup
        .drivers
        .iter()
        .map(|(d, c)| format!("merge.{d}: {}", c.as_deref().unwrap_or("not configured")))
        .collect::<Vec<_>>()
        .join("; ");
    let missing: Vec<&str> = setup
        .hooks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(h, _)| *h)
        .collect();
    let hooks = if missing.is_empty() {
        "pre-commit, post-merge, post-rewrite".to_string()
    } else {
        format!("missing: {}", missing.join(", "))
    };
    vec![
        Finding::new("merge drivers", drivers_ok, drivers, "memoir hooks install"),
        Finding::new(
            "git hooks",
            missing.is_empty(),
            hooks,
            "memoir hooks install",
        ),
    ]
}

/// Who writes are logged as: with no one, every write is refused.
fn identity(app: &App, store: &Store) -> Finding {
    let (ok, detail) = match app.actor(store) {
        Ok(Some(actor)) => {
            let set = std::env::var("MEMOIR_ACTOR").is_ok_and(|a| !a.trim().is_empty());
            let from = if set { "MEMOIR_ACTOR" } else { "git" };
            (true, format!("{actor} (from {from})"))
        }
        Ok(None) => (
            false,
            "none: git has no user.name and user.email, and MEMOIR_ACTOR is not set, so every write is refused".into(),
        ),
        Err(e) => (false, e.message()),
    };
    Finding::new(
        "identity",
        ok,
        detail,
        "git config --global user.email \"you@example.com\" && git config --global user.name \"Your Name\" (or set MEMOIR_ACTOR=\"Name <email>\")",
    )
}

/// Who consolidate's and rollback's commits are by: MEMOIR_AUTHOR, else
/// git's identity. MEMOIR_ACTOR names the writer of events only, so a
/// clone with it and no git identity writes but cannot commit.
fn committer(store: &Store) -> Finding {
    let (ok, detail) = match super::consolidate::author() {
        Ok(Some((name, email))) => (true, format!("{name} <{email}> (from MEMOIR_AUTHOR)")),
        Ok(None) => match store.repo().identity() {
            Some(who) => (true, format!("{who} (from git)")),
            None => (
                false,
                "none: git has no user.name and user.email, and MEMOIR_AUTHOR is not set, so `consolidate` and `rollback` cannot commit".into(),
            ),
        },
        Err(e) => (false, e.message()),
    };
    Finding::new(
        "git identity (commits)",
        ok,
        detail,
        "git config --global user.email \"you@example.com\" && git config --global user.name \"Your Name\" (or set MEMOIR_AUTHOR=\"Name <email>\")",
    )
}

/// The `memoir` that hooks, drivers and agents will run.
fn on_path() -> Finding {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("memoir"))
            .find(|p| p.is_file())
    });
    let detail = found.as_ref().map_or(
        "not found: hooks and drivers will fail with `memoir: not found`".into(),
        |p| p.display().to_string(),
    );
    Finding::new(
        "memoir on PATH",
        found.is_some(),
        detail,
        "cargo install --locked --path <memoir's source>",
    )
}

/// Whether the store checks clean.
fn store_checks(store: &Store) -> Result<Finding, CliError> {
    let report = memoir::ops::check::check(store)?;
    let errors = report
        .problems
        .iter()
        .filter(|p| p.severity == memoir::change::drift::Severity::Error)
        .count();
    let state = if errors == 0 {
        "checks clean".to_string()
    } else {
        count(errors, "error", "errors")
    };
    Ok(Finding::new(
        "store",
        errors == 0,
        format!("{}, {state}", count(report.memories, "memory", "memories")),
        "memoir check says what; memoir rebuild or memoir record repairs",
    ))
}

/// Where user/ memories go, and whether only their owner can read them.
fn personal(app: &App, store: &Store) -> Result<Finding, CliError> {
    let path = match super::stores::personal_path() {
        Ok(path) => path,
        Err(e) => {
            return Ok(Finding::new(
                "personal store",
                false,
                e.message(),
                "set MEMOIR_USER_STORE to an absolute path (or unset it)",
            ))
        }
    };
    let detail = match (app.personal_store(store, false)?, path) {
        (Some(p), _) if !super::stores::is_private(&p.root) => {
            let fix = format!("chmod -R go= {}", p.root.display());
            let detail = format!("{}: other users can read it", p.root.display());
            return Ok(Finding::new("personal store", false, detail, &fix));
        }
        (Some(p), _) => format!("{} (private)", p.root.display()),
        (None, _) if store.config.user_store == memoir::model::config::UserStore::Shared => {
            "user/ is shared in this repository (user_store: shared)".into()
        }
        (None, Some(p)) => format!("{} (created by the first `remember user/…`)", p.display()),
        (None, None) => "no HOME: user/ memories stay in this repository".into(),
    };
    Ok(Finding::new("personal store", true, detail, ""))
}

/// Whether an agent finds memoir's MCP server (`.mcp.json`); advice only.
fn mcp_entry(store: &Store) -> Finding {
    let registered = std::fs::read_to_string(store.root.join(".mcp.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["mcpServers"]["memoir"].is_object());
    let mut f = Finding::new(
        "agents (MCP)",
        true,
        if registered {
            ".mcp.json registers memoir".into()
        } else {
            "no .mcp.json entry".into()
        },
        "",
    );
    if !registered {
        f.note = true;
        f.fix = Some("memoir setup claude-code (or register `memoir mcp` in your client)".into());
    }
    f
}
