//! `memoir import`

use super::error::code;
use super::stores::Origin;
use super::{error::CliError, App};
use memoir::model::key::Key;
use memoir::ops::import::{Item, Outcome, Route};
use memoir::store::Store;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Import another tool's memory: Claude Code's auto memory or an OpenClaw workspace.
///
/// Every item goes through the write policy, at its own date; a second
/// import of the same files adds nothing. claude-code: each topic file
/// becomes a memory (user type in the user scope, the others in project;
/// the file named in its source); one that would change a memory is kept
/// as a proposal (exit 4). openclaw: each entry of the daily notes
/// memory/YYYY-MM-DD*.md (a list item, a paragraph) becomes a note at its
/// date, one the policy refuses (a secret) reported by file and line and
/// left out; MEMORY.md sections and USER.md directives become proposals
/// (confidence 0.8) that consolidate holds until you accept them
/// (consolidate --accept KEY, --accept-all), but questions and to-dos
/// (## Open questions, ## TODO), which become notes. user/ memories (and USER.md's
/// proposals) go to your personal store, as `remember user/…` does, never
/// to the repository. Every bad file is reported; exit 3 if one was
/// refused, else 1 if one could not be read.
///
/// Examples:
///   memoir import claude-code --dry-run
///   memoir import claude-code ~/.claude/projects/-home-ada-shop/memory
///   memoir import openclaw ~/.openclaw/workspace
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// What to import: claude-code or openclaw.
    #[arg(value_parser = ["claude-code", "openclaw"])]
    from: String,
    /// The folder (default: where that tool keeps this project's memory).
    dir: Option<PathBuf>,
    /// Say what would be imported; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Imports the folder and reports each item.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let ctx = app.ctx_unless_dry(&store, args.dry_run)?;
    // Where user/ memories go, asked before anything is written.
    let place = app.personal_place(&store)?;
    let given = args.dir.is_some();
    let dir = match args.dir {
        Some(d) => d,
        None if args.from == "openclaw" => openclaw_folder()?,
        None => claude_code_folder(&store)?,
    };
    if !dir.is_dir() {
        // Looked for where the tool keeps it: say so, and how to point
        // elsewhere.
        let message = match (given, args.from.as_str()) {
            (true, _) => "no such folder".to_string(),
            (false, "openclaw") => "no OpenClaw workspace here (pass its folder, or set \
                 OPENCLAW_WORKSPACE_DIR)"
                .to_string(),
            (false, _) => "no Claude Code auto memory for this project here (Claude Code \
                 writes it once it remembers something; or pass the folder)"
                .to_string(),
        };
        return Err(CliError::Input {
            input: dir.display().to_string(),
            message,
        });
    }
    let mut route = ToPersonal {
        app,
        repo: &store,
        place,
        personal: None,
    };
    let items = if args.from == "openclaw" {
        memoir::ops::import::openclaw(&store, &mut route, &ctx, &dir, args.dry_run)?
    } else {
        memoir::ops::import::claude_code(&store, &mut route, &ctx, &dir, args.dry_run)?
    };
    // Where each item went, as the route sent it.
    let personal = |key: &Key| route.elsewhere(key);
    let origins: Vec<Option<Origin>> = items
        .iter()
        .map(|item| match (&item.key, &item.outcome) {
            (Some(k), _) if personal(k) => Some(Origin::Personal),
            (Some(_), _) | (None, Outcome::Added | Outcome::Unchanged) => Some(Origin::Repo),
            (None, _) => None,
        })
        .collect();
    report(app, &args.from, &dir, args.dry_run, &items, &origins)
}

/// An imported memory goes where `remember` would put it: a `user/` one
/// into the person's own store (made by the first one written), unless
/// the repository holds it already or keeps `user/` itself.
struct ToPersonal<'a> {
    app: &'a App,
    repo: &'a Store,
    /// The personal store's folder (none: user/ stays in the repository).
    place: Option<PathBuf>,
    /// The personal store, once opened.
    personal: Option<Store>,
}

impl Route for ToPersonal<'_> {
    type Error = CliError;

    fn elsewhere(&self, key: &Key) -> bool {
        self.place.is_some() && !super::stores::in_repo(self.repo, key)
    }

    fn other(&mut self, create: bool) -> Result<Option<&Store>, CliError> {
        if let (None, Some(place)) = (&self.personal, &self.place) {
            self.personal = self.app.personal_at(place, create)?;
        }
        Ok(self.personal.as_ref())
    }
}

/// Each item's line, the counts, and the exit code they make.
fn report(
    app: &mut App,
    from: &str,
    dir: &Path,
    dry_run: bool,
    items: &[Item],
    origins: &[Option<Origin>],
) -> Result<u8, CliError> {
    let mut counts = [0usize; 5];
    let mut rows = Vec::new();
    for (item, origin) in items.iter().zip(origins) {
        let (i, name, message) = match &item.outcome {
            Outcome::Added => (0, "added", None),
            Outcome::Unchanged => (1, "unchanged", None),
            Outcome::Proposed => (2, "proposed", None),
            Outcome::Refused(m) => (3, "refused", Some(m.as_str())),
            Outcome::Invalid(m) => (4, "invalid", Some(m.as_str())),
        };
        counts[i] += 1;
        let key = item.key.as_ref().map(ToString::to_string);
        let store = origin.map(Origin::as_str);
        // A refusal's rule (`secret:aws-access-key-id`), for a script to act on.
        let rule = match &item.outcome {
            Outcome::Refused(m) => m.split_once(": ").map(|(rule, _)| rule),
            _ => None,
        };
        rows.push(json!({ "what": item.what, "key": key, "outcome": name, "rule": rule, "message": message, "store": store }));
        if i == 1 {
            continue;
        }
        // What waits or failed is why it exits non-zero: shown even with
        // -q, which still hides the rest (the summary too).
        let quiet = app.out.quiet;
        if i >= 2 {
            app.out.quiet = false;
        }
        let verb = if dry_run && i < 3 {
            format!("would be {name}")
        } else {
            name.to_string()
        };
        let target = match key {
            Some(k) => format!("{k} "),
            None if i < 3 => "note ".into(),
            None => String::new(),
        };
        let why = message.map(|m| format!(": {m}")).unwrap_or_default();
        let place = match origin {
            Some(Origin::Personal) if i < 3 => " in your personal store",
            _ => "",
        };
        app.out
            .line(format!("{verb} {target}({}){place}{why}", item.what))?;
        app.out.quiet = quiet;
    }
    let [added, unchanged, proposed, refused, invalid] = counts;
    app.out.json(&json!({
        "from": from, "dir": dir.display().to_string(), "dry_run": dry_run, "items": rows,
        "counts": { "added": added, "unchanged": unchanged, "proposed": proposed, "refused": refused, "invalid": invalid },
    }))?;
    app.out.line(format!(
        "{}{} from {}: {added} added, {unchanged} unchanged, {proposed} proposed, {refused} refused, {invalid} invalid",
        if dry_run { "would import " } else { "imported " },
        super::output::count(items.len(), "item", "items"),
        dir.display()
    ))?;
    Ok(if refused > 0 {
        code::REFUSED
    } else if invalid > 0 {
        code::ERROR
    } else if proposed > 0 && from == "claude-code" {
        code::DECISION
    } else {
        code::OK
    })
}

/// Claude Code's memory folder for the store's project, found as Claude
/// Code finds it: the override variable, `autoMemoryDirectory` in the
/// policy, local or user settings (never the checked-in project settings),
/// else `<config dir>/projects/<git root as a folder name>/memory` (the
/// repository's root, wherever in it the store is).
pub fn claude_code_folder(store: &Store) -> Result<PathBuf, CliError> {
    let root = store.root.as_path();
    if let Some(dir) =
        std::env::var_os("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE").filter(|d| !d.is_empty())
    {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".claude"), PathBuf::from);
    // Read as store files are (never blocking on a FIFO, capped); the
    // project's own never through a link (a repository can carry one), the
    // machine's and the person's through one (dotfile managers link them).
    const MAX_SETTINGS: u64 = 4 << 20;
    for (settings, in_project) in [
        (
            PathBuf::from("/etc/claude-code/managed-settings.json"),
            false,
        ),
        (root.join(".claude/settings.local.json"), true),
        (config.join("settings.json"), false),
    ] {
        let read = match in_project {
            true => memoir::fs::safe_file::read(&settings, MAX_SETTINGS),
            false => memoir::fs::safe_file::read_following(&settings, MAX_SETTINGS),
        };
        let Some(text) = read.ok().flatten().and_then(|b| String::from_utf8(b).ok()) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if let Some(dir) = v
            .get("autoMemoryDirectory")
            .and_then(|d| d.as_str())
            .filter(|d| !d.is_empty())
        {
            return Ok(match dir.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => PathBuf::from(dir),
            });
        }
    }
    // Claude Code keys a project by its git root, not the folder a store
    // sits in (`<repo>/pkg`): the same folder its own sessions there use.
    let git_root = store.repo().workdir().to_path_buf();
    let canonical = std::fs::canonicalize(&git_root).unwrap_or(git_root);
    let name = memoir::interop::claude_code::project_folder(&canonical.to_string_lossy());
    let projects = config.join("projects");
    if name.len() <= 200 {
        return Ok(projects.join(name).join("memory"));
    }
    // Past 200 characters Claude Code adds a hash of its own: find the folder by its prefix.
    let prefix = &name[..200];
    let found = std::fs::read_dir(&projects).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with(prefix))
    });
    found
        .map(|n| projects.join(n).join("memory"))
        .ok_or_else(|| CliError::Input {
            input: projects.display().to_string(),
            message: "no Claude Code folder for this project (name it with DIR)".into(),
        })
}

/// OpenClaw's workspace: `OPENCLAW_WORKSPACE_DIR`, else `~/.openclaw/workspace`.
fn openclaw_folder() -> Result<PathBuf, CliError> {
    if let Some(dir) = std::env::var_os("OPENCLAW_WORKSPACE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .ok_or_else(|| CliError::Usage("HOME is not set: name the workspace".into()))?;
    Ok(PathBuf::from(home).join(".openclaw/workspace"))
}
