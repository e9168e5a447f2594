//! The command-line interface: global flags, dispatch, environment.
//!
//! Everything here uses only the core's public API. Each subcommand lives in
//! its own file with its `Args` (whose doc comments are the help text) and a
//! `run` function.

mod check;
mod claude_hook;
mod completions;
mod conflicts;
mod consolidate;
mod context;
mod diff;
mod doctor;
mod error;
mod export;
mod forget;
mod history;
mod hooks;
mod import;
mod init;
mod list;
mod mcp;
mod merge_driver;
mod note;
mod output;
mod rebuild;
mod recall;
mod record;
mod redact;
mod reindex;
mod remember;
mod resolve;
mod rollback;
mod seen;
mod setup;
mod show;
mod status;
mod stores;
mod versions;
mod watch;

use clap::{Parser, Subcommand};
use error::{code, CliError};
use memoir::model::time::Timestamp;
use memoir::store::{self, Ctx, Store};
use output::Output;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Git-native memory for AI agents: plain markdown, append-only logs,
/// views you can rebuild.
#[derive(Debug, Parser)]
#[command(name = "memoir", version = env!("MEMOIR_VERSION"), about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Flags every command takes.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Global options")]
struct Global {
    /// The store's directory (default: the nearest ancestor with memory/log/).
    #[arg(long, global = true, env = "MEMOIR_STORE", value_name = "DIR")]
    store: Option<PathBuf>,
    /// Print data as JSON (shapes in docs/cli.md).
    #[arg(long, global = true)]
    json: bool,
    /// Seconds to wait for the store lock before giving up (exit 5).
    #[arg(long, global = true, value_name = "SECS", default_value_t = 10.0)]
    lock_timeout: f64,
    /// No chatter: the data asked for and why a command failed are still printed; warnings are not.
    #[arg(short, long, global = true)]
    quiet: bool,
}

/// The subcommands (each variant's help is its `Args`' doc comment).
#[derive(Debug, Subcommand)]
enum Command {
    Init(init::Args),
    Note(note::Args),
    Remember(Box<remember::Args>),
    Forget(forget::Args),
    Show(show::Args),
    List(list::Args),
    Reindex(reindex::Args),
    Rebuild(rebuild::Args),
    Recall(recall::Args),
    Context(context::Args),
    Seen(seen::Args),
    Record(record::Args),
    Redact(redact::Args),
    Check(check::Args),
    Status(status::Args),
    Consolidate(consolidate::Args),
    Versions(versions::Args),
    Conflicts(conflicts::Args),
    Resolve(resolve::Args),
    Rollback(rollback::Args),
    History(history::Args),
    Diff(diff::Args),
    // Internal: git runs it (docs/cli.md), so --help does not list it.
    #[command(hide = true)]
    MergeDriver(merge_driver::Args),
    Hooks(hooks::Args),
    // Internal: the hook shims run it (docs/cli.md), so --help does not list it.
    #[command(hide = true)]
    Hook(hooks::HookArgs),
    Mcp(mcp::Args),
    Setup(setup::Args),
    Import(import::Args),
    Export(export::Args),
    Doctor(doctor::Args),
    Completions(completions::Args),
    Man(completions::ManArgs),
    Watch(watch::Args),
}

/// What every command may need: output, the store, the clock and the actor.
pub struct App {
    global: Global,
    /// Where to look for the store when no --store is given (default: the current directory).
    cwd: Option<PathBuf>,
    /// Standard output.
    pub out: Output,
    /// The opened store's counts of what it read (for MEMOIR_DEBUG_STATS).
    stats: std::cell::RefCell<Option<std::sync::Arc<store::Stats>>>,
    /// Held once a private store is opened: what the command creates
    /// from then on is its owner's alone (see `stores`).
    private: std::cell::RefCell<Option<stores::Private>>,
    /// The repository git's environment names (`GIT_DIR`), if any.
    named: Option<memoir::git::NamedRepo>,
}

/// The store, clock and actor as the environment and flags name them.
impl App {
    /// Opens the store named by `--store`/`MEMOIR_STORE`, or the nearest one.
    pub fn store(&self) -> Result<Store, CliError> {
        let root = match &self.global.store {
            Some(dir) => dir.clone(),
            None => {
                let cwd = match &self.cwd {
                    Some(d) => d.clone(),
                    None => std::env::current_dir()?,
                };
                store::discover(&cwd)?
            }
        };
        self.open(&root)
    }

    /// Opens the store at `root` with the global flags' settings.
    pub fn open(&self, root: &std::path::Path) -> Result<Store, CliError> {
        let mut s = Store::open_in(root, self.named.as_ref())?;
        *self.stats.borrow_mut() = Some(s.stats.clone());
        if stores::is_private(&s.root) {
            self.keep_private();
        }
        if !(self.global.lock_timeout >= 0.0 && self.global.lock_timeout <= 86_400.0) {
            return Err(CliError::Usage(
                "--lock-timeout must be between 0 and 86400 seconds".into(),
            ));
        }
        s.set_lock_timeout(Duration::from_secs_f64(self.global.lock_timeout));
        if output::TerminalProgress::wanted(self.out.json, self.global.quiet) {
            s.set_progress(std::sync::Arc::new(output::TerminalProgress::default()));
        }
        #[cfg(debug_assertions)]
        s.set_failpoint(
            std::env::var("MEMOIR_FAILPOINT")
                .ok()
                .and_then(|name| memoir::store::Failpoint::parse(&name)),
        );
        Ok(s)
    }

    /// The repository for `dir` (the one git's environment names, when
    /// `dir` is in its work tree).
    pub fn repo(&self, dir: &std::path::Path) -> Result<memoir::git::Repo, memoir::git::GitError> {
        memoir::git::Repo::find(dir, self.named.as_ref())
    }

    /// The repository git's environment names, if any.
    pub fn named_repo(&self) -> Option<&memoir::git::NamedRepo> {
        self.named.as_ref()
    }

    /// The time: MEMOIR_NOW pins it, else the system clock.
    pub fn now(&self) -> Result<Timestamp, CliError> {
        match std::env::var("MEMOIR_NOW") {
            Ok(s) => Timestamp::parse(&s).map_err(|e| CliError::Usage(format!("MEMOIR_NOW: {e}"))),
            Err(std::env::VarError::NotUnicode(_)) => Err(CliError::Usage(
                "MEMOIR_NOW is not UTF-8 (expected YYYY-MM-DDTHH:MM:SSZ)".into(),
            )),
            Err(std::env::VarError::NotPresent) => {
                let d = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                Ok(Timestamp(d.as_millis() as i64))
            }
        }
    }

    /// Who is writing: MEMOIR_ACTOR, else git's identity (`user.name` and
    /// `user.email`, or `GIT_AUTHOR_*`); `None` when neither says.
    pub fn actor(&self, store: &Store) -> Result<Option<String>, CliError> {
        // The store's repository, then the one the command runs in: the
        // personal store is a repository of its own, with no identity of
        // its own, and a per-repository user.name names its writer too.
        let here = self.cwd.clone().or_else(|| std::env::current_dir().ok());
        let actor = std::env::var("MEMOIR_ACTOR")
            .ok()
            .filter(|a| !a.trim().is_empty())
            .or_else(|| store.repo().identity())
            .or_else(|| self.repo(&here?).ok()?.identity());
        if actor
            .as_ref()
            .is_some_and(|a| a.contains('\n') || a.chars().count() > 200)
        {
            return Err(CliError::Usage(
                "MEMOIR_ACTOR must be one line of at most 200 characters".into(),
            ));
        }
        Ok(actor)
    }

    /// The merge in progress in the store's repository and its next step,
    /// said the same by every command that meets one; `None` when no merge
    /// is in progress.
    pub fn merge_in_progress(
        &self,
        store: &Store,
    ) -> Result<Option<(memoir::integration::merge::MergeInProgress, String)>, CliError> {
        let Some(merge) = memoir::integration::merge::in_progress(store)? else {
            return Ok(None);
        };
        // `git add` takes paths from where the user is.
        let here = self.cwd.clone().or_else(|| std::env::current_dir().ok());
        let prefix = here
            .and_then(|h| relative(&store.root, &h))
            .filter(|p| !p.is_empty())
            .map(|p| format!("{p}/"))
            .unwrap_or_default();
        let step = merge.next_step(&format!("{prefix}memory {prefix}MEMORY.md"));
        Ok(Some((merge, step)))
    }

    /// The time and the actor of a write. With no actor the write is
    /// refused (exit 2, with git's advice): a log entry keeps its actor
    /// for good, and `unknown` tells a reader of the history nothing.
    pub fn ctx(&self, store: &Store) -> Result<Ctx, CliError> {
        let now = self.now()?;
        let actor = self.actor(store)?.ok_or(CliError::NoIdentity)?;
        Ok(Ctx { now, actor })
    }

    /// As [`App::ctx`], but a dry run, which logs nothing, needs no actor.
    pub fn ctx_unless_dry(&self, store: &Store, dry_run: bool) -> Result<Ctx, CliError> {
        if !dry_run {
            return self.ctx(store);
        }
        Ok(Ctx {
            now: self.now()?,
            actor: self.actor(store)?.unwrap_or_default(),
        })
    }

    /// Makes what this command creates from now on private (0600, 0700).
    pub fn keep_private(&self) {
        let mut private = self.private.borrow_mut();
        if private.is_none() {
            *private = Some(stores::Private::enter());
        }
    }

    /// Is output quiet?
    pub fn quiet(&self) -> bool {
        self.global.quiet
    }
}

/// Parses arguments, runs the command, maps the result to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage(&e),
    };
    let out = Output::new(
        cli.global.json,
        cli.global.quiet,
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    );
    let mut app = App {
        global: cli.global,
        cwd: None,
        out,
        stats: Default::default(),
        private: Default::default(),
        named: git_environment(),
    };
    // A bad MEMOIR_NOW is a usage error whatever the command (some never ask the time).
    let result = app.now().and_then(|_| dispatch(cli.command, &mut app));
    let result = result.and_then(|c| app.out.flush().map(|_| c).map_err(CliError::from));
    print_stats(&app);
    match result {
        Ok(c) => ExitCode::from(c),
        Err(e) if e.is_broken_pipe() => ExitCode::from(code::OK),
        Err(e) => {
            match e.advice() {
                // What memoir composed itself, in lines, as git prints it.
                Some((headline, advice)) => {
                    output::diagnostic_lines(&format!("memoir: {headline}\n{advice}"))
                }
                None => output::diagnostic(&format!("memoir: {}", e.message())),
            }
            if app.out.json {
                // A harness reads data on stdout: the error is data too.
                let mut error = e.to_json();
                error["message"] = output::redacted(&e.message()).into();
                if let Some(path) = error["path"].as_str().map(output::redacted) {
                    error["path"] = path.into();
                }
                let _ = app.out.json(&serde_json::json!({ "error": error }));
                let _ = app.out.flush();
            }
            ExitCode::from(e.code())
        }
    }
}

/// What clap stopped at: help and version (exit 0), or a usage error (exit 2).
fn usage(e: &clap::Error) -> ExitCode {
    let shown = matches!(
        e.kind(),
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
    );
    // clap quotes a bad argument back (a PEM key passed as a note
    // that starts with `-` was printed twice): help and version go
    // out as they are, every error through the redaction.
    if shown {
        let _ = e.print();
        return ExitCode::from(code::OK);
    }
    // Redacted first: an argument is found as it was given, newlines and all.
    let rendered = output::redacted(&e.render().to_string());
    // clap's paragraphs: what is wrong (its lines joined into one, as
    // every memoir diagnostic is), then usage and where to read more.
    let mut paragraphs = rendered
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let first = paragraphs.next().unwrap_or("bad usage");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let message = first.split_whitespace().collect::<Vec<_>>().join(" ");
    let rest: Vec<&str> = paragraphs.collect();
    output::diagnostic_lines(&format!("memoir: {message}\n{}", rest.join("\n")));
    let json = std::env::args()
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if json {
        let mut out = Output::new(true, false, true);
        let error = serde_json::json!({ "code": "usage", "message": message, "exit": code::USAGE });
        let _ = out.json(&serde_json::json!({ "error": error }));
        let _ = out.flush();
    }
    ExitCode::from(code::USAGE)
}

/// git's own variables name the repository as for git itself (hooks,
/// `git --git-dir`, scripted setups): GIT_DIR, and GIT_WORK_TREE or the
/// current directory as the top of the work tree. The work tree is made
/// canonical, as a store's root is, so that what lies in it is known.
fn git_environment() -> Option<memoir::git::NamedRepo> {
    let git_dir = std::env::var_os("GIT_DIR").filter(|d| !d.is_empty())?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let work_tree = std::env::var_os("GIT_WORK_TREE")
        .filter(|d| !d.is_empty())
        .map_or_else(|| cwd.clone(), |w| cwd.join(w));
    Some(memoir::git::NamedRepo {
        git_dir: cwd.join(git_dir),
        work_tree: std::fs::canonicalize(&work_tree).unwrap_or(work_tree),
    })
}

/// Runs the subcommand.
fn dispatch(command: Command, app: &mut App) -> Result<u8, CliError> {
    match command {
        Command::Init(a) => init::run(a, app),
        Command::Note(a) => note::run(a, app),
        Command::Remember(a) => remember::run(*a, app),
        Command::Forget(a) => forget::run(a, app),
        Command::Show(a) => show::run(a, app),
        Command::List(a) => list::run(a, app),
        Command::Reindex(a) => reindex::run(a, app),
        Command::Rebuild(a) => rebuild::run(a, app),
        Command::Recall(a) => recall::run(a, app),
        Command::Context(a) => context::run(a, app),
        Command::Seen(a) => seen::run(a, app),
        Command::Record(a) => record::run(a, app),
        Command::Redact(a) => redact::run(a, app),
        Command::Check(a) => check::run(a, app),
        Command::Status(a) => status::run(a, app),
        Command::Consolidate(a) => consolidate::run(a, app),
        Command::Versions(a) => versions::run(a, app),
        Command::Conflicts(a) => conflicts::run(a, app),
        Command::Resolve(a) => resolve::run(a, app),
        Command::Rollback(a) => rollback::run(a, app),
        Command::History(a) => history::run(a, app),
        Command::Diff(a) => diff::run(a, app),
        Command::MergeDriver(a) => merge_driver::run(a, app),
        Command::Hooks(a) => hooks::run(a, app),
        Command::Hook(a) => hooks::run_hook(a, app),
        Command::Mcp(a) => mcp::run(a, app),
        Command::Setup(a) => setup::run(a, app),
        Command::Import(a) => import::run(a, app),
        Command::Export(a) => export::run(a, app),
        Command::Doctor(a) => doctor::run(a, app),
        Command::Completions(a) => completions::run(a, app),
        Command::Man(a) => completions::run_man(a, app),
        Command::Watch(a) => watch::run(a, app),
    }
}

/// With MEMOIR_DEBUG_STATS, says what the opened store read: lets tests
/// check that per-write commands read a bounded number of files.
fn print_stats(app: &App) {
    if std::env::var_os("MEMOIR_DEBUG_STATS").is_none() {
        return;
    }
    if let Some(stats) = app.stats.borrow().as_ref() {
        let count =
            |n: &std::sync::atomic::AtomicUsize| n.load(std::sync::atomic::Ordering::Relaxed);
        eprintln!(
            "memoir: stats: memory files read: {}, listed: {}, log replays: {}, watched: {}",
            count(&stats.files_read),
            count(&stats.files_listed),
            count(&stats.replays),
            count(&stats.watched)
        );
    }
}

/// Reads at most `cap` bytes and one more: enough to refuse what is too
/// long without reading all of it (`< /dev/zero` must not fill the memory).
pub fn read_capped(input: impl std::io::Read, cap: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    input.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `--scope` and `--type` filters: a scope the store has and one of the
/// four types, else a usage error (a typo must not look like "nothing").
pub fn check_filters(
    store: &Store,
    scope: Option<&str>,
    kind: Option<&str>,
) -> Result<(), CliError> {
    if let Some(s) = scope.filter(|s| !store.has_scope(s)) {
        return Err(CliError::Usage(format!(
            "--scope: no scope `{s}` (this store's scopes: {})",
            store.config.scopes.join(", ")
        )));
    }
    if let Some(t) = kind.filter(|t| memoir::model::memory::MemoryType::parse(t).is_none()) {
        return Err(CliError::Usage(format!(
            "--type: unknown type `{t}` (expected user, feedback, project or reference)"
        )));
    }
    Ok(())
}

/// Parses a `<scope>/<name>` argument.
pub fn parse_key(text: &str) -> Result<(memoir::model::key::Key, String), CliError> {
    memoir::model::key::Key::parse(text).map_err(|e| CliError::refused("name", text, e.to_string()))
}

/// clap's own consistency checks of the definition.
/// `to` relative to `from`, with `/` separators (`..` where `from` is
/// deeper); `None` when they share no root.
fn relative(to: &std::path::Path, from: &std::path::Path) -> Option<String> {
    use std::path::Component;
    let to: Vec<Component<'_>> = to.components().collect();
    let from: Vec<Component<'_>> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// No conflicting flags, names or defaults.
    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
