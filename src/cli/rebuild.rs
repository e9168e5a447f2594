//! `memoir rebuild`

use super::output::{diagnostic, would};
use super::{error::code, error::CliError, App};
use serde_json::json;

/// Regenerate every memory file and MEMORY.md from the logs.
///
/// Repairs views an interrupted write left stale and re-creates missing ones;
/// a file edited by hand whose content exists nowhere in the logs is left
/// alone (exit 1) unless --force.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir rebuild --check\n  memoir rebuild")]
pub struct Args {
    /// Change nothing; exit 1 if anything would change.
    #[arg(long)]
    check: bool,
    /// Also overwrite hand edits (their content is lost; `memoir record` keeps it instead).
    #[arg(long)]
    force: bool,
}

/// The logs the views are rebuilt from, first: a merge's unmerged logs
/// joined (`log::joined`), and, unless `--force`, a refusal when a log
/// was cut short or edited in place since HEAD (rebuilding from it would
/// delete what it lost with no word).
fn logs_first(args: &Args, app: &mut App, store: &memoir::store::Store) -> Result<(), CliError> {
    let joined = memoir::integration::merge::join_unmerged_logs(store, args.check)?;
    for rel in &joined {
        app.out.line(format!(
            "{}join {rel}: both sides' entries kept",
            would(args.check)
        ))?;
    }
    if args.force {
        return Ok(());
    }
    let mut rewritten = memoir::ops::check::rewritten_logs(store)?;
    rewritten.retain(|p| !joined.contains(&p.path));
    if rewritten.is_empty() {
        return Ok(());
    }
    for p in &rewritten {
        diagnostic(&super::output::problem(p));
    }
    Err(CliError::Failed(format!(
        "{} rewritten since HEAD; a rebuild would drop what was lost: restore as said above, \
         or `memoir rebuild --force` rebuilds from the logs as they are",
        super::output::count(rewritten.len(), "log", "logs"),
    )))
}

/// Rebuilds the views from the logs (or says what that would change).
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    logs_first(&args, app, &store)?;
    let r = memoir::change::rebuild::rebuild(&store, args.force, args.check)?;
    // A merge's next step once rebuild settled it (or, with --check, the
    // step still to take), as `status` and `check` say it.
    let merge = app.merge_in_progress(&store)?;
    app.out.json(&json!({
        "next_step": merge.as_ref().map(|(_, step)| step),
        "written": r.written, "removed": r.removed, "index_changed": r.index_changed,
        "refused": r.refused.iter().map(|d| json!({"path": d.path, "kind": d.kind.as_str()})).collect::<Vec<_>>(),
        "unreadable": r.unreadable.iter().map(|(path, error)| json!({"path": path, "error": error})).collect::<Vec<_>>(),
    }))?;
    let verb = would(args.check);
    app.out.items(&format!("{verb}write "), &r.written)?;
    app.out.items(&format!("{verb}remove "), &r.removed)?;
    if r.index_changed {
        app.out.line(format!("{verb}regenerate MEMORY.md"))?;
    }
    for d in &r.refused {
        // A hand edit that does not parse cannot be recorded: say why.
        let invalid = store
            .read_memory_file(&d.path)
            .ok()
            .flatten()
            .and_then(|text| memoir::model::memory::Memory::parse(&text).err());
        diagnostic(&match invalid {
            Some(e) => format!(
                "memoir: {}{}: does not parse ({}); left alone: fix it (then `memoir record`), or `--force` replaces it from the logs",
                d.path,
                e.line.map(|l| format!(":{l}")).unwrap_or_default(),
                e.message
            ),
            None => format!(
                "memoir: {}: {} by hand and not in the logs; left alone (`memoir record` keeps it, `--force` discards it)",
                d.path,
                d.kind.as_str()
            ),
        });
    }
    for (_, why) in &r.unreadable {
        diagnostic(&format!(
            "memoir: {why}; left alone (`--force` replaces it from the logs)"
        ));
    }
    // What rebuild leaves for a person: two teammates' sentences.
    let team_text = memoir::integration::merge::team_text_conflicts(&store);
    for line in &team_text {
        diagnostic(&format!(
            "memoir: MEMORY.md:{line}: both branches changed the team's own text here; left as git \
             left it: keep what is true and remove the markers"
        ));
    }
    if let Some((_, step)) = &merge {
        diagnostic(&format!("memoir: {step}"));
    }
    let changes = !r.written.is_empty() || !r.removed.is_empty() || r.index_changed;
    let left = !r.refused.is_empty() || !r.unreadable.is_empty() || !team_text.is_empty();
    Ok(if left || (args.check && changes) {
        code::ERROR
    } else {
        code::OK
    })
}
