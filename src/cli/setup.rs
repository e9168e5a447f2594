//! `memoir setup`

use super::output::diagnostic;
use super::{error::CliError, App};
use memoir::integration::claude_code;
use serde_json::json;

/// Set up an agent to use memoir's memory.
///
/// `claude-code` writes, in the project's root: hooks in
/// .claude/settings.json (SessionStart and UserPromptSubmit inject memory,
/// SessionEnd notes what the user asked), a permission for memoir's MCP
/// tools and the approval of its server (which Claude Code honours once
/// the teammate trusts the workspace); the `memoir` server in .mcp.json;
/// a section in CLAUDE.md telling the agent to remember through memoir.
/// The files' own entries are kept, in the file's style (a compact file
/// stays compact); a second run changes nothing.
///
/// Examples:
///   memoir setup claude-code --dry-run   # show what would change
///   memoir setup claude-code
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The agent: claude-code.
    #[arg(value_parser = ["claude-code"])]
    agent: String,
    /// Print what would change, as diffs, and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Plans the files, then writes them (or shows them with --dry-run).
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let planned = claude_code::plan(&store.root).map_err(|e| CliError::Failed(e.to_string()))?;
    if !args.dry_run {
        claude_code::apply(&store.root, &planned)
            .map_err(|e| CliError::Failed(format!("writing Claude Code's files: {e}")))?;
    }
    app.out.json(&json!({
        "agent": args.agent, "dry_run": args.dry_run,
        "files": planned.iter().map(|p| json!({
            "path": p.path, "action": if p.before.is_some() { "update" } else { "create" },
        })).collect::<Vec<_>>(),
    }))?;
    if planned.is_empty() {
        app.out
            .line("Claude Code is set up already; nothing to change")?;
        return Ok(0);
    }
    for p in &planned {
        if args.dry_run {
            let before = p.before.as_deref().unwrap_or("");
            let (a, b) = (format!("a/{}", p.path), format!("b/{}", p.path));
            app.out
                .diff(&memoir::model::text::unified_diff(before, &p.after, &a, &b))?;
        }
        let verb = match (args.dry_run, p.before.is_some()) {
            (true, true) => "would update",
            (true, false) => "would create",
            (false, true) => "updated",
            (false, false) => "created",
        };
        app.out.line(format!("{verb} {}", p.path))?;
    }
    if planned.iter().any(|p| p.path == ".claude/settings.json") {
        // The checked-in approval is not one on its own: Claude Code asks
        // each teammate to trust the workspace first.
        app.out.line(format!(
            "{TRUST_NOTE}{}",
            if args.dry_run { " (once written)" } else { "" }
        ))?;
    }
    if !args.dry_run && which_memoir().is_none() {
        diagnostic(&format!(
            "memoir: warning: `memoir` is not on PATH, and Claude Code runs it by name: `{}`",
            install_advice()
        ));
    }
    Ok(0)
}

/// What setup says of the server's approval in `enabledMcpjsonServers`.
const TRUST_NOTE: &str = "note: `enabledMcpjsonServers` in .claude/settings.json approves the \
memoir server for a teammate only once they trust this workspace in Claude Code (it asks on \
their first session in a new clone)";

/// How to put this `memoir` on PATH: from the checkout it was built from,
/// where that is still there (not the user's own project, which `--path .`
/// would name), else from memoir's sources by name.
fn install_advice() -> String {
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    if checkout.join("Cargo.toml").is_file() {
        format!("cargo install --locked --path {}", checkout.display())
    } else {
        "cargo install --locked --path <your memoir checkout>".to_string()
    }
}

/// The `memoir` that PATH finds, as Claude Code will run it.
fn which_memoir() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("memoir"))
        .find(|p| p.is_file())
}
