//! `memoir export`

use super::{error::CliError, import::claude_code_folder, output::count, App};
use memoir::interop::claude_code::Limit;
use serde_json::json;
use std::path::PathBuf;

/// Export the memories as Claude Code's auto memory, so its own memory reads memoir's.
///
/// Writes only what changed: a topic file per memory (the file it was
/// imported from, else <scope>_<slug>.md with _ between words, as Claude
/// Code names its own: project_deploy_day.md; with its key and source in
/// `metadata`), a file that already says what the memory says left byte
/// for byte, a changed one keeping Claude Code's title, originSessionId and
/// other fields; and in MEMORY.md, the index Claude Code loads, only the
/// lines of files written, added or removed (new ones appended, most
/// valuable first, within 200 lines and 25,000 bytes). Topic files of
/// memories memoir no longer has are removed; Claude Code's own files are
/// kept, and so is a topic file Claude Code changed after memoir's version
/// (import it). Importing what was exported changes nothing.
///
/// Examples:
///   memoir export claude-code --dry-run
///   memoir export claude-code ~/.claude/projects/-home-ada-shop/memory
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Where to: claude-code.
    #[arg(value_parser = ["claude-code"])]
    to: String,
    /// The folder (default: Claude Code's memory folder for this project).
    dir: Option<PathBuf>,
    /// Say what would be written; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Exports and says what changed.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let dir = match args.dir {
        Some(d) => d,
        None => claude_code_folder(&store)?,
    };
    // The person's own memories too: Claude Code's user memories were
    // imported there, and a folder without them loses them both ways.
    let both: Vec<memoir::store::Store> = app.stores()?.into_iter().map(|(s, _)| s).collect();
    let stores: Vec<&memoir::store::Store> = both.iter().collect();
    let e = memoir::ops::export::claude_code(&stores, &dir, args.dry_run)?;
    app.out.json(&json!({
        "to": args.to, "dir": dir.display().to_string(), "dry_run": args.dry_run,
        "written": e.written, "removed": e.removed, "unchanged": e.unchanged, "kept": e.kept,
        "index_written": e.index_written, "left_out": e.left_out,
        "cut_by": e.cut_by.map(|l| l.as_str()),
    }))?;
    let would = if args.dry_run { "would " } else { "" };
    for f in &e.written {
        app.out.line(format!("{would}write {f}"))?;
    }
    for f in &e.removed {
        app.out.line(format!("{would}remove {f}"))?;
    }
    for f in &e.kept {
        app.out.line(format!(
            "keep {f}: changed in Claude Code after memoir's version (`memoir import claude-code` brings it in)"
        ))?;
    }
    if e.index_written {
        let limit = match e.cut_by {
            Some(Limit::Bytes) => "25,000 bytes",
            _ => "200 lines",
        };
        let left = if e.left_out > 0 {
            format!(
                " ({} left out: Claude Code loads the first {limit})",
                count(e.left_out, "memory", "memories")
            )
        } else {
            String::new()
        };
        app.out.line(format!("{would}write MEMORY.md{left}"))?;
    }
    let (verb, written, removed) = if args.dry_run {
        ("would export", "to write", "to remove")
    } else {
        ("exported", "written", "removed")
    };
    let kept = if e.kept.is_empty() {
        String::new()
    } else {
        format!(", {} kept", e.kept.len())
    };
    app.out.line(format!(
        "{verb} to {}: {} {written}, {} {removed}, {} unchanged{kept}",
        dir.display(),
        e.written.len(),
        e.removed.len(),
        e.unchanged
    ))?;
    Ok(0)
}
