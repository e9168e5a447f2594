//! `memoir resolve`

use super::output::strings;
use super::{error::CliError, parse_key, App};
use memoir::change::resolve::Decision;
use memoir::model::event::Op;
use serde_json::json;

/// Decide a conflict.
///
/// `--keep` keeps what the file shows now (after a fork: the version both
/// branches started from, neither side's); `--take ID` takes one version (a
/// head or a pending proposal, from `memoir conflicts`); `--both` keeps the
/// sides: after a fork, one side's version at the key and the other's
/// under `<slug>-2` (the ancestor both started from is dropped;
/// `--keep-ancestor` keeps it at the key and both sides under `<slug>-2`,
/// `<slug>-3`), for a proposal what the file shows and the proposal under
/// `<slug>-2`; `--edit` opens the file in git's editor (GIT_EDITOR, core.editor, VISUAL,
/// EDITOR, else vi) and takes what you save, as a decision made now.
/// The decision is logged; commit it with the next `memoir consolidate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir resolve project/db --take 01JD8X...\n  memoir resolve project/db --edit"
)]
#[command(group(clap::ArgGroup::new("decision").required(true).args(["keep", "take", "both", "edit"])))]
pub struct Args {
    /// The memory: <scope>/<name>.
    key: String,
    /// Keep what the file shows now.
    #[arg(long)]
    keep: bool,
    /// Take this version (an event id, or a unique prefix of at least 6 characters).
    #[arg(long, value_name = "EVENT_ID")]
    take: Option<String>,
    /// Keep both sides: one at the key, the other under a new key.
    #[arg(long)]
    both: bool,
    /// With --both: keep the version both sides started from too (at the
    /// key; the sides under new keys).
    #[arg(long, requires = "both")]
    keep_ancestor: bool,
    /// Edit the memory in git's editor and take the result.
    #[arg(long)]
    edit: bool,
}

/// The editor as git chooses one: GIT_EDITOR, core.editor, VISUAL,
/// EDITOR, else `vi`; like git, no `vi` on a dumb terminal (or none),
/// where it would wait for keys that never come.
fn editor(store: &memoir::store::Store) -> Result<String, CliError> {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let chosen = set("GIT_EDITOR")
        .or_else(|| store.repo().core_editor())
        .or_else(|| set("VISUAL"))
        .or_else(|| set("EDITOR"));
    if let Some(e) = chosen {
        return Ok(e);
    }
    match set("TERM") {
        Some(t) if t != "dumb" => Ok("vi".into()),
        _ => Err(CliError::Usage(
            "--edit needs an editor: the terminal is dumb and none of GIT_EDITOR, core.editor, VISUAL or EDITOR is set".into(),
        )),
    }
}

/// Opens `current` in `editor`; returns what the user saved.
fn edit(editor: &str, current: &str, key: &str) -> Result<String, CliError> {
    // A folder of our own, with a name no one could have made first: in a
    // shared temp folder, a predictable one could be another user's link.
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(std::io::Error::other)?;
    let suffix: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("memoir-resolve-{suffix}"));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    let file = dir.join(format!("{}.md", key.replace('/', "-")));
    std::fs::write(&file, current)?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file)
        .status()?;
    let text = std::fs::read_to_string(&file);
    let _ = std::fs::remove_dir_all(&dir);
    if !status.success() {
        return Err(CliError::Failed(format!(
            "the editor exited with {status}; nothing resolved"
        )));
    }
    Ok(text?)
}

/// Records the decision on the memory's conflict.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let (key, _) = parse_key(&args.key)?;
    // No one to log the decision as: refused before an editor is opened.
    app.ctx(&store)?;
    // Versions that disagree (a fork), not only proposals: the file then
    // shows what they agreed on, which --keep keeps.
    let forked = args.keep
        && memoir::ops::resolve::conflicts(&store)?
            .iter()
            .find(|c| c.key == key)
            .is_some_and(|c| c.candidates.iter().filter(|v| v.op != Op::Propose).count() > 1);
    let decision = if args.keep {
        Decision::Keep
    } else if let Some(id) = args.take {
        Decision::Take(id)
    } else if args.both && args.keep_ancestor {
        Decision::BothWithAncestor
    } else if args.both {
        Decision::Both
    } else {
        let conflict = memoir::ops::resolve::conflicts(&store)?
            .into_iter()
            .find(|c| c.key == key)
            .ok_or_else(|| CliError::Failed(format!("no conflict on {key}")))?;
        let start = conflict
            .current
            .or_else(|| conflict.candidates.iter().find_map(|c| c.content.clone()))
            .unwrap_or_default();
        let edited = edit(&editor(&store)?, &start, &args.key)?;
        // Quitting the editor without a change is no decision: `--keep`
        // says "what the file shows" (after a fork, neither side's).
        if edited.trim_end() == start.trim_end() {
            return Err(CliError::Failed(format!(
                "nothing was changed in the editor; the conflict on {key} stays open \
                 (`--keep` keeps what the file shows)"
            )));
        }
        Decision::Content(edited)
    };
    let ctx = app.ctx(&store)?;
    let done = memoir::ops::resolve::resolve(&store, &ctx, &key, &decision)?;
    app.out.json(&json!({
        "key": key.to_string(), "id": done.id,
        "added": strings(&done.added),
    }))?;
    app.out.line(format!("resolved {key}"))?;
    if forked {
        app.out.line(format!(
            "kept the version both branches started from, not either side's (`memoir history {key}` lists theirs)"
        ))?;
    }
    app.out.items("kept the other version as ", &done.added)?;
    Ok(0)
}
