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
/// tools and the approval of its server; the `memoir` server in .mcp.json;
/// a section in CLAUDE.md telling the agent to remember through memoir.
/// The files' own entries are kept; a second run changes nothing.
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
    if !args.dry_run && which_memoir().is_none() {
        diagnostic("memoir: warning: `memoir` is not on PATH, and Claude Code runs it by name: `cargo install --locked --path .`");
    }
    Ok(0)
}

/// The `memoir` that PATH finds, as Claude Code will run it.
fn which_memoir() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("memoir"))
        .find(|p| p.is_file())
}
