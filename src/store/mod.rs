//! The store: finding, opening and initializing one; its paths, configuration,
//! writer id, local state and lock; and single-file access that never
//! follows a link (capped reads, atomic view writes).
//!
//! A store is a directory in a git work tree holding `MEMORY.md` and
//! `memory/`. Every write holds the store lock; the log is appended (one
//! write, fsync) before any view file is replaced (temp file, rename).
//! Nothing here follows a symbolic link.

mod error;
mod failpoint;
pub(crate) mod listing;
mod origin;
mod progress;

pub use error::StoreError;
pub use failpoint::Failpoint;
pub use origin::Origin;
pub use progress::{Meter, Progress};

use crate::git::{self, GitError};
use crate::local::lock::StoreLock;
use crate::local::state::{self, StateDir};
use crate::model::config::{Config, CONFIG_PATH};
use crate::model::memory::MAX_FILE_BYTES;
use crate::model::time::Timestamp;
use crate::render::memory_md::{self, MEMORY_MD};
use std::fs::{self};
use std::io::{self, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Who is acting and when: passed in, never read by the core.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The current time.
    pub now: Timestamp,
    /// `Name <email>`.
    pub actor: String,
}

/// What `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitReport {
    /// The store's root.
    pub root: PathBuf,
    /// A git repository was created.
    pub created_repo: bool,
    /// Paths created (store-relative).
    pub created: Vec<String>,
}

/// What a command read of the store: per-write commands must read a
/// bounded number of memory files however large the store is.
#[derive(Debug, Default)]
pub struct Stats {
    /// Memory files read.
    pub files_read: std::sync::atomic::AtomicUsize,
    /// Memory files listed with their stamps (a whole-store scan).
    pub files_listed: std::sync::atomic::AtomicUsize,
    /// Passes over every log (a full replay).
    pub replays: std::sync::atomic::AtomicUsize,
    /// Answers of the watcher used instead of a listing (`watch`).
    pub watched: std::sync::atomic::AtomicUsize,
}

/// An open store.
#[derive(Debug)]
pub struct Store {
    /// Absolute path of the store's root.
    pub root: PathBuf,
    /// The store's configuration.
    pub config: Config,
    /// This clone's branch as a writer: the log file name.
    pub writer: String,
    pub(crate) state: StateDir,
    /// The repository the store lives in, opened once.
    repo: git::SharedRepo,
    /// The store's folder relative to the work tree, `/`-separated, ending
    /// in `/` (empty when the store is the work tree's root).
    prefix: String,
    lock_timeout: Duration,
    /// What was read of the store since it was opened (shared, so that
    /// tests can check that per-write commands have a flat cost).
    pub stats: std::sync::Arc<Stats>,
    /// Where a test stops this command (see [`Failpoint`]).
    failpoint: Option<Failpoint>,
    /// Folders this command already checked (no symlink on the way) and
    /// created: a consolidation writes a thousand views into a few.
    ready_dirs: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Where long work says how far it is (nowhere unless the CLI asks).
    progress: Option<std::sync::Arc<dyn Progress>>,
}

/// The lines `init` puts in .gitattributes: no line-ending conversion for
/// the store (logs must stay byte-exact even where `core.autocrlf` is on,
/// as on Git for Windows), and memoir's merge drivers for view files (a
/// driver that is not configured falls back to git's text merge, which
/// `rebuild` settles). Consolidation commits them.
pub const GITATTRIBUTES: [&str; 4] = [
    "memory/** -text",
    "MEMORY.md -text",
    "memory/*/*.md merge=memoir",
    "MEMORY.md merge=memoir-index",
];

/// Is `dir` a store? A store is found by what cannot be derived: its
/// `memory/` folder with the logs in it (`memory/log/`), so that a deleted
/// or broken MEMORY.md (a view) can still be rebuilt. A store whose logs
/// folder is gone (git keeps no empty folder) still has both MEMORY.md and
/// `memory/`.
pub fn is_store(dir: &Path) -> bool {
    let memory = dir.join("memory");
    memory.join("log").is_dir() || (memory.is_dir() && dir.join(MEMORY_MD).is_file())
}

pub use crate::fs::safe_file::{MAX_CONFIG_BYTES, MAX_INDEX_BYTES, MAX_LOG_BYTES};

/// The most memoir reads of a store file, by what the file is.
pub fn read_cap(rel: &str) -> u64 {
    if rel.starts_with("memory/log/") {
        MAX_LOG_BYTES
    } else if rel == MEMORY_MD {
        MAX_INDEX_BYTES
    } else if rel == CONFIG_PATH {
        MAX_CONFIG_BYTES
    } else {
        MAX_FILE_BYTES as u64
    }
}

/// Finds the nearest directory at or above `start` that holds a store.
pub fn discover(start: &Path) -> Result<PathBuf, StoreError> {
    let start = fs::canonicalize(start).map_err(StoreError::io(start))?;
    start
        .ancestors()
        .find(|d| is_store(d))
        .map(Path::to_path_buf)
        .ok_or(StoreError::NotFound(start))
}

/// Creates a store in a git repository of its own at `dir`: a personal
/// store must not land inside a repository that happens to hold `dir` (a
/// home folder kept in git).
pub fn init_standalone(dir: &Path) -> Result<InitReport, StoreError> {
    fs::create_dir_all(dir).map_err(StoreError::io(dir))?;
    if !dir.join(".git").exists() {
        git::init(dir)?;
    }
    init(dir)
}

/// Creates a store in `dir` (and a git repository there if it is in none).
pub fn init(dir: &Path) -> Result<InitReport, StoreError> {
    init_in(dir, None)
}

/// Creates a store in `dir`, in the repository `named` when `dir` is in
/// its work tree, else in the one found there (or a new one there if it is
/// in none).
pub fn init_in(dir: &Path, named: Option<&git::NamedRepo>) -> Result<InitReport, StoreError> {
    fs::create_dir_all(dir).map_err(StoreError::io(dir))?;
    let root = fs::canonicalize(dir).map_err(StoreError::io(dir))?;
    let (found, created_repo) = match git::Repo::find(&root, named) {
        Ok(found) => (found, false),
        Err(GitError::NotARepo(_)) => {
            git::init(&root)?;
            (git::Repo::find(&root, named)?, true)
        }
        Err(e) => return Err(e.into()),
    };
    // A clone set up before memoir wrote the line gets it here.
    let _ = state::exclude_temporaries(&found.info()?.common_dir);
    let mut created = init_folders(&root)?;
    created.extend(init_memory_md(&root)?);
    created.extend(init_gitattributes(&root)?);
    Ok(InitReport {
        root,
        created_repo,
        created,
    })
}

/// The store's folders, each with a `.gitkeep` while empty (git keeps no
/// empty folders; the layout must survive a clone). Returns those created.
fn init_folders(root: &Path) -> Result<Vec<String>, StoreError> {
    let mut created = Vec::new();
    for d in [
        "memory",
        "memory/user",
        "memory/project",
        "memory/task",
        "memory/log",
    ] {
        let p = root.join(d);
        refuse_symlink(&p, d)?;
        if !p.is_dir() {
            fs::create_dir_all(&p).map_err(StoreError::io(&p))?;
            created.push(format!("{d}/"));
        }
        let keep = p.join(".gitkeep");
        if d != "memory"
            && fs::read_dir(&p)
                .map(|mut r| r.next().is_none())
                .unwrap_or(false)
        {
            fs::write(&keep, "").map_err(StoreError::io(&keep))?;
        }
    }
    Ok(created)
}

/// `MEMORY.md` with memoir's block: a new file, or a team's own with the
/// block added after its text (`check` is clean right after init).
fn init_memory_md(root: &Path) -> Result<Option<String>, StoreError> {
    let index = root.join(MEMORY_MD);
    refuse_symlink(&index, MEMORY_MD)?;
    let current = if index.exists() {
        let text = crate::fs::safe_file::read(&index, read_cap(MEMORY_MD))
            .map_err(|e| StoreError::unreadable(MEMORY_MD, e, read_cap(MEMORY_MD)))?
            .unwrap_or_default();
        Some(String::from_utf8(text).map_err(|_| StoreError::Invalid {
            path: MEMORY_MD.into(),
            line: None,
            message: "not UTF-8".into(),
        })?)
    } else {
        None
    };
    let Some(text) = memory_md::at_init(current.as_deref()) else {
        return Ok(None);
    };
    // The team's text is kept whole, whatever happens midway.
    replace_synced(&index, text.as_bytes())?;
    Ok(Some(match current {
        None => MEMORY_MD.to_string(),
        Some(_) => format!("{MEMORY_MD} (memoir's block added)"),
    }))
}

/// `.gitattributes` with the lines memoir needs, kept after any the
/// repository has.
fn init_gitattributes(root: &Path) -> Result<Option<String>, StoreError> {
    let attrs = root.join(".gitattributes");
    refuse_symlink(&attrs, ".gitattributes")?;
    // Only a regular file (a FIFO here would hang `init`).
    let current = match crate::fs::safe_file::read(&attrs, 1 << 20) {
        Ok(bytes) => String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned(),
        Err(e) => return Err(StoreError::unreadable(".gitattributes", e, 1 << 20)),
    };
    let missing: Vec<&str> = GITATTRIBUTES
        .iter()
        .copied()
        .filter(|want| !current.lines().any(|l| l.trim() == *want))
        .collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# memoir: logs and memories are byte-exact (no line-ending conversion);\n");
    text.push_str("# view files merge with memoir's drivers where configured\n");
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    replace_synced(&attrs, text.as_bytes())?;
    Ok(Some(".gitattributes".to_string()))
}

/// A file of the team's that init changes (MEMORY.md with its text,
/// `.gitattributes`): replaced whole (`fs::replace`, never through a link
/// planted after the check above, never cut short by a crash).
fn replace_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    crate::fs::replace::replace(path, bytes, crate::fs::replace::Durability::Synced)
        .map_err(StoreError::io(path))
}

/// Refuses to append to a log that is not a regular file of its own: a
/// FIFO or device, or a hard link, through which an append would reach a
/// file outside the store.
pub(crate) fn refuse_special(meta: &fs::Metadata, rel: &str) -> Result<(), StoreError> {
    let message = if !meta.is_file() {
        "is not a regular file; memoir appends only to regular files"
    } else if hard_links(meta) > 1 {
        "is a hard link (the same file is elsewhere too); memoir never writes through a link: \
         replace it with a copy (`cp f f.tmp && mv f.tmp f`)"
    } else {
        return Ok(());
    };
    Err(StoreError::Invalid {
        path: rel.to_string(),
        line: None,
        message: message.into(),
    })
}

/// How many names the file has (1 where the platform cannot say).
fn hard_links(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(meta)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        1
    }
}

/// Refuses a store path that is a symbolic link.
pub(crate) fn refuse_symlink(path: &Path, rel: &str) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(StoreError::link(rel)),
        _ => Ok(()),
    }
}

/// A file's content as text, or the line of its first invalid byte.
pub(crate) fn utf8(bytes: Vec<u8>, rel: &str) -> Result<String, StoreError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        StoreError::Invalid {
            path: rel.to_string(),
            line: Some(line),
            message: "not valid UTF-8".into(),
        }
    })
}

/// `root`'s folder relative to the work tree at `workdir`, `/`-separated,
/// ending in `/` (empty when it is the work tree's root).
fn workdir_prefix(root: &Path, workdir: &Path) -> String {
    match root.strip_prefix(workdir) {
        Ok(p) if !p.as_os_str().is_empty() => {
            format!("{}/", p.to_string_lossy().replace('\\', "/"))
        }
        _ => String::new(),
    }
}

impl Store {
    /// Opens the store rooted at `root`, in the repository found there.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        Store::open_in(root, None)
    }

    /// Opens the store rooted at `root`, in the repository `named` when
    /// `root` is in its work tree (see [`git::Repo::find`]).
    pub fn open_in(root: &Path, named: Option<&git::NamedRepo>) -> Result<Store, StoreError> {
        let root = fs::canonicalize(root).map_err(StoreError::io(root))?;
        if !is_store(&root) {
            return Err(StoreError::NotFound(root));
        }
        refuse_symlink(&root.join("memory"), "memory")?;
        let found = git::Repo::find(&root, named)?;
        let repo = found.info()?;
        let prefix = workdir_prefix(&root, found.workdir());
        let config_path = root.join(CONFIG_PATH);
        let config = match crate::fs::safe_file::read(&config_path, MAX_CONFIG_BYTES) {
            Ok(Some(bytes)) => {
                Config::parse(&utf8(bytes, CONFIG_PATH)?).map_err(StoreError::config)?
            }
            Ok(None) => Config::default(),
            // A config too large is a broken config (exit 1), as any other:
            // not a write the policy refused (exit 3).
            Err(crate::fs::safe_file::ReadError::TooLarge(size)) => {
                return Err(StoreError::Invalid {
                    path: CONFIG_PATH.to_string(),
                    line: None,
                    message: format!(
                        "the file is {size} bytes, more than a config's limit of {MAX_CONFIG_BYTES}"
                    ),
                })
            }
            Err(e) => return Err(StoreError::unreadable(CONFIG_PATH, e, MAX_CONFIG_BYTES)),
        };
        // The errors name memoir's own folder in the clone, not the git
        // directory above it, which is fine.
        let clone = state::clone_id(&repo.common_dir)
            .map_err(StoreError::io(repo.common_dir.join("memoir")))?;
        let state = StateDir::open(&repo.common_dir, &root)
            .map_err(|(path, source)| StoreError::Io { path, source })?;
        Ok(Store {
            writer: state::writer_id(&clone, repo.branch.as_deref(), repo.worktree.as_deref()),
            root,
            config,
            state,
            repo: found.share(),
            prefix,
            lock_timeout: Duration::from_secs(10),
            stats: Default::default(),
            ready_dirs: Default::default(),
            failpoint: None,
            progress: None,
        })
    }

    /// Sets how long writers wait for the store lock.
    pub fn set_lock_timeout(&mut self, timeout: Duration) {
        self.lock_timeout = timeout;
    }

    /// Sets where long work reports how far it is.
    pub fn set_progress(&mut self, progress: std::sync::Arc<dyn Progress>) {
        self.progress = Some(progress);
    }

    /// Work of `total` units of `task` that reports how far it is when it
    /// is `large` (seconds of work on a large store) and a [`Progress`] is
    /// set; otherwise its reports go nowhere.
    pub(crate) fn meter(&self, task: &'static str, total: usize, large: bool) -> Meter<'_> {
        Meter::new(self.progress.as_deref(), task, total, large)
    }

    /// Stops this command at `at`, as a crash there would (a test's
    /// failpoint; only a debug build takes one).
    #[cfg(debug_assertions)]
    pub fn set_failpoint(&mut self, at: Option<Failpoint>) {
        self.failpoint = at;
    }

    /// Whether a test stops this command at `at`.
    pub(crate) fn stops_at(&self, at: Failpoint) -> bool {
        self.failpoint == Some(at)
    }

    /// Fails with [`StoreError::Stopped`] if a test stops this command at `at`.
    pub(crate) fn stop_at(&self, at: Failpoint) -> Result<(), StoreError> {
        match self.stops_at(at) {
            true => Err(StoreError::Stopped(at)),
            false => Ok(()),
        }
    }

    /// Kills this process if a test's failpoint is `at`: nothing after it
    /// runs, no destructor, no clean-up, as with `kill -9` (an error would
    /// unwind through the clean-up a kill skips).
    pub(crate) fn killed_at(&self, at: Failpoint) {
        if !self.stops_at(at) {
            return;
        }
        #[cfg(unix)]
        {
            use rustix::process::{getpid, kill_process, Signal};
            let _ = kill_process(getpid(), Signal::KILL);
        }
        // Where there is no SIGKILL (or it was refused): as abrupt.
        std::process::abort();
    }

    pub(crate) fn lock(&self) -> Result<StoreLock, StoreError> {
        Ok(StoreLock::acquire(
            &self.state.lock_path(),
            self.lock_timeout,
        )?)
    }

    /// The absolute path of a store-relative path.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// The local (never committed) file caching embedding model `model`'s
    /// vectors for this store: what `embed::Vectors` loads and saves.
    pub fn vectors_path(&self, model: &str) -> PathBuf {
        self.state.vectors_path(model)
    }

    /// The repository the store lives in (a handle for this thread onto
    /// the one the store opened).
    pub fn repo(&self) -> git::Repo {
        self.repo.local()
    }

    /// The store's folder relative to the work tree, `/`-separated, ending
    /// in `/` (empty when the store is the work tree's root): what a
    /// store-relative path is prefixed with in git.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The store's files at revision `rev` (MEMORY.md and every file under
    /// the store-relative folder `under`), by store-relative path, each
    /// read within its kind's cap, with the commit's id.
    pub(crate) fn files_at(
        &self,
        rev: &str,
        under: &str,
    ) -> Result<(String, std::collections::BTreeMap<String, Vec<u8>>), StoreError> {
        let repo = self.repo();
        let prefix = self.prefix();
        let (commit, files) = repo.files_at(
            rev,
            &format!("{prefix}{MEMORY_MD}"),
            &format!("{prefix}{under}"),
            &|path: &str| read_cap(path.strip_prefix(prefix).unwrap_or(path)),
        )?;
        let files = files
            .into_iter()
            .filter_map(|(path, bytes)| Some((path.strip_prefix(prefix)?.to_string(), bytes)))
            .collect();
        Ok((commit, files))
    }

    /// Is `scope` one of the configured scopes?
    pub fn has_scope(&self, scope: &str) -> bool {
        self.config.has_scope(scope)
    }

    /// Reads a store file that must be a regular file (never a link, a
    /// FIFO or a device), of at most `limit` bytes (default: the cap for
    /// its kind, [`read_cap`]): `None` if it does not exist.
    pub fn read(&self, rel: &str, limit: Option<u64>) -> Result<Option<String>, StoreError> {
        let path = self.path(rel);
        let cap = limit.unwrap_or_else(|| read_cap(rel));
        match crate::fs::safe_file::read(&path, cap) {
            Ok(Some(bytes)) => Ok(Some(utf8(bytes, rel)?)),
            Ok(None) => Ok(None),
            Err(e) => Err(StoreError::unreadable(rel, e, cap)),
        }
    }

    /// The bytes of a store file from `offset` on, as text (`None` if that
    /// fails: callers fall back to reading everything).
    pub(crate) fn read_from(&self, rel: &str, offset: u64) -> Option<String> {
        let (mut f, meta) = crate::fs::safe_file::open(&self.path(rel)).ok()??;
        f.seek(SeekFrom::Start(offset)).ok()?;
        let cap = read_cap(rel);
        let bytes =
            crate::fs::safe_file::read_capped(f, meta.len().saturating_sub(offset), cap).ok()?;
        String::from_utf8(bytes).ok()
    }

    /// Reads a memory file (bounded, link-refusing).
    pub fn read_memory_file(&self, rel: &str) -> Result<Option<String>, StoreError> {
        self.stats
            .files_read
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let read = self.read(rel, Some(MAX_FILE_BYTES as u64));
        // A listed name that is not UTF-8 comes here lossily, as a path
        // that does not exist: say why rather than that it is missing.
        if matches!(read, Ok(None)) && rel.contains(char::REPLACEMENT_CHARACTER) {
            return Err(StoreError::Invalid {
                path: rel.to_string(),
                line: None,
                message: "file name is not UTF-8 (rename it)".into(),
            });
        }
        read
    }

    /// Checks that every existing folder on the way to `rel` is a real folder.
    pub(crate) fn check_dirs(&self, rel: &str) -> Result<(), StoreError> {
        let mut acc = String::new();
        let parts: Vec<&str> = rel.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            refuse_symlink(&self.path(&acc), &acc)?;
        }
        Ok(())
    }

    /// Replaces a view file atomically ([`crate::fs::replace`]). No fsync:
    /// the log, written first, can always rebuild it.
    pub(crate) fn write_view(&self, rel: &str, content: &str) -> Result<(), StoreError> {
        let path = self.path(rel);
        let folder = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
        let ready = |dirs: &std::collections::HashSet<String>| dirs.contains(folder);
        if !self.ready_dirs.lock().is_ok_and(|d| ready(&d)) {
            self.check_dirs(rel)?;
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(StoreError::io(dir))?;
            }
            if let Ok(mut dirs) = self.ready_dirs.lock() {
                dirs.insert(folder.to_string());
            }
        }
        crate::fs::replace::replace(
            &path,
            content.as_bytes(),
            crate::fs::replace::Durability::Cached,
        )
        .map_err(StoreError::io(&path))
    }

    /// Removes a view file if it exists.
    pub(crate) fn remove_view(&self, rel: &str) -> Result<(), StoreError> {
        self.check_dirs(rel)?;
        let path = self.path(rel);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(StoreError::Io { path, source: e })
            }
            _ => Ok(()),
        }
    }
}

impl Store {
    /// Rewrites the journal from scratch.
    pub(crate) fn journal_reset(&self, views: impl IntoIterator<Item = (String, u64)>) {
        let _ = self.state.journal_compact(views);
    }
}
