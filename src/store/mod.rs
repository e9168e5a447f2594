//! The store: discovery, layout, safe file access, and the persistent index.
//!
//! A store is a directory in a git work tree holding `MEMORY.md` and
//! `memory/`. Every write holds the store lock; the log is appended (one
//! write, fsync) before any view file is replaced (temp file, rename).
//! Nothing here follows a symbolic link.

pub(crate) mod folder;
pub mod safe_file;

use crate::git::{self, GitError};
use crate::local::lock::{LockError, StoreLock};
use crate::local::state::{self, fingerprint, Cache, Dict, FileEntry, KeyState, Stamp, StateDir};
use crate::log::replay::Replay;
use crate::model::config::{Config, ConfigError, CONFIG_PATH};
use crate::model::event::{self, Event, LogError, Op, ParsedLog, TORN_MARKER};
use crate::model::key::Key;
use crate::model::memory::{Memory, MemoryError, Summary, MAX_FILE_BYTES};
use crate::model::time::Timestamp;
use crate::render::memory_md::{self, INDEX_PATH};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
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

/// Why a store operation failed. The CLI maps each kind to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No store at or above the directory.
    #[error("no memoir store in {0} or any parent directory (a store has memory/log/; run `memoir init`)")]
    NotFound(PathBuf),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The lock was not acquired in time.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// Malformed input: a file that does not parse or breaks the format.
    #[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// Store-relative path (or the argument) at fault.
        path: String,
        /// 1-based line.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// The write policy refused the change; nothing was written.
    #[error("{path}{}: refused ({rule}): {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Refused {
        /// The rule that refused, e.g. `secret:github-pat` or `source`.
        rule: String,
        /// Where (a store-relative path or an argument name).
        path: String,
        /// 1-based line within it.
        line: Option<usize>,
        /// Why, never echoing a secret.
        message: String,
    },
    /// The memory does not exist.
    #[error("no memory {0}")]
    NoSuchMemory(String),
    /// A human must decide first (exit 4).
    #[error("{0}")]
    Decision(String),
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> StoreError {
        let path = path.into();
        move |source| StoreError::Io { path, source }
    }

    pub(crate) fn invalid(path: &str, e: &MemoryError) -> StoreError {
        match e.rule {
            Some(rule) => StoreError::Refused {
                rule: rule.to_string(),
                path: path.to_string(),
                line: e.line,
                message: e.message.clone(),
            },
            None => StoreError::Invalid {
                path: path.to_string(),
                line: e.line,
                message: e.message.clone(),
            },
        }
    }

    /// A store file that [`crate::store::safe_file`] would not read.
    pub(crate) fn unreadable(
        rel: &str,
        e: crate::store::safe_file::ReadError,
        cap: u64,
    ) -> StoreError {
        use crate::store::safe_file::ReadError;
        match e {
            ReadError::TooLarge(size) => StoreError::Refused {
                rule: "size".into(),
                path: rel.to_string(),
                line: None,
                message: format!("file is {size} bytes, more than the limit of {cap}"),
            },
            ReadError::Io(source) => StoreError::Io {
                path: PathBuf::from(rel),
                source,
            },
            e => StoreError::Invalid {
                path: rel.to_string(),
                line: None,
                message: e.to_string(),
            },
        }
    }

    fn log(path: &str, e: LogError) -> StoreError {
        StoreError::Invalid {
            path: path.to_string(),
            line: Some(e.line),
            message: e.message,
        }
    }

    fn config(e: ConfigError) -> StoreError {
        StoreError::Invalid {
            path: CONFIG_PATH.to_string(),
            line: e.line,
            message: e.message,
        }
    }
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
    lock_timeout: Duration,
    /// What was read of the store since it was opened (shared, so that
    /// tests can check that per-write commands have a flat cost).
    pub stats: std::sync::Arc<Stats>,
    /// Test hook: `after-log-append` stops a write between log and views.
    pub failpoint: Option<String>,
    /// Folders this command already checked (no symlink on the way) and
    /// created: a consolidation writes a thousand views into a few.
    ready_dirs: std::sync::Mutex<std::collections::HashSet<String>>,
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
    memory.join("log").is_dir() || (memory.is_dir() && dir.join(INDEX_PATH).is_file())
}

pub use crate::store::safe_file::{MAX_CONFIG_BYTES, MAX_INDEX_BYTES, MAX_LOG_BYTES};

/// The most memoir reads of a store file, by what the file is.
pub fn read_cap(rel: &str) -> u64 {
    if rel.starts_with("memory/log/") {
        MAX_LOG_BYTES
    } else if rel == INDEX_PATH {
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

/// Creates a store in `dir` (and a git repository there if it is in none).
pub fn init(dir: &Path) -> Result<InitReport, StoreError> {
    fs::create_dir_all(dir).map_err(StoreError::io(dir))?;
    let root = fs::canonicalize(dir).map_err(StoreError::io(dir))?;
    let created_repo = match git::Repo::discover(&root) {
        Ok(_) => false,
        Err(GitError::NotARepo(_)) => {
            git::init(&root)?;
            true
        }
        Err(e) => return Err(e.into()),
    };
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
        // git keeps no empty folders; a .gitkeep keeps the layout in a clone.
        let keep = p.join(".gitkeep");
        if d != "memory"
            && fs::read_dir(&p)
                .map(|mut r| r.next().is_none())
                .unwrap_or(false)
        {
            fs::write(&keep, "").map_err(StoreError::io(&keep))?;
        }
    }
    let index = root.join(INDEX_PATH);
    refuse_symlink(&index, INDEX_PATH)?;
    if !index.exists() {
        fs::write(&index, memory_md::initial()).map_err(StoreError::io(&index))?;
        created.push(INDEX_PATH.to_string());
    }
    let attrs = root.join(".gitattributes");
    refuse_symlink(&attrs, ".gitattributes")?;
    // Only a regular file (a FIFO here would hang `init`).
    let current = match crate::store::safe_file::read(&attrs, 1 << 20) {
        Ok(bytes) => String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned(),
        Err(e) => return Err(StoreError::unreadable(".gitattributes", e, 1 << 20)),
    };
    let missing: Vec<&str> = GITATTRIBUTES
        .iter()
        .copied()
        .filter(|want| !current.lines().any(|l| l.trim() == *want))
        .collect();
    if !missing.is_empty() {
        let mut text = current.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# memoir: logs and memories are byte-exact (no line-ending conversion);\n");
        text.push_str("# view files merge with memoir's drivers where configured\n");
        for line in missing {
            text.push_str(line);
            text.push('\n');
        }
        fs::write(&attrs, text).map_err(StoreError::io(&attrs))?;
        created.push(".gitattributes".to_string());
    }
    Ok(InitReport {
        root,
        created_repo,
        created,
    })
}

/// Refuses to append to a log that is not a regular file of its own: a
/// FIFO or device, or a hard link, through which an append would reach a
/// file outside the store.
fn refuse_special(meta: &fs::Metadata, rel: &str) -> Result<(), StoreError> {
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

fn refuse_symlink(path: &Path, rel: &str) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(StoreError::Invalid {
            path: rel.to_string(),
            line: None,
            message: "is a symbolic link; memoir never follows links in a store".into(),
        }),
        _ => Ok(()),
    }
}

/// A file's content as text, or the line of its first invalid byte.
fn utf8(bytes: Vec<u8>, rel: &str) -> Result<String, StoreError> {
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

/// A log file found on disk.
#[derive(Debug, Clone)]
pub struct LogFile {
    pub rel: String,
    pub stamp: Stamp,
}

/// Refuses to write views from the logs when one of them could not be
/// read: its events are unknown, so a view could be removed or a hand edit
/// recorded against versions that are only missing from this read.
pub(crate) fn all_logs_read(issues: &[LogIssue]) -> Result<(), StoreError> {
    match issues.iter().find(|i| i.error) {
        Some(i) => Err(StoreError::Invalid {
            path: i.path.clone(),
            line: None,
            message: format!(
                "{}; memoir writes nothing from the logs until every log can be read",
                i.message.trim_end_matches(" (skipped)")
            ),
        }),
        None => Ok(()),
    }
}

/// Something a reader of the logs skipped, and where: a torn or
/// quarantined entry, a file that is no log, a replay's warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogIssue {
    /// Store-relative path (`memory/log` when no one file).
    pub path: String,
    /// 1-based line, when there is one.
    pub line: Option<usize>,
    /// What was skipped and why.
    pub message: String,
    /// `check` fails on it (else a warning).
    pub error: bool,
}

impl std::fmt::Display for LogIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// A quarantined entry's problem, naming where the entry starts when that
/// is not the line at fault.
fn quarantine_message(q: &event::Quarantined) -> String {
    if q.error.line != q.line {
        format!(
            "malformed entry (from line {}): {}",
            q.line, q.error.message
        )
    } else {
        format!("malformed entry: {}", q.error.message)
    }
}

/// An error's message without the path it names (the issue names it).
fn error_message(e: &StoreError) -> String {
    match e {
        StoreError::Invalid { message, .. } | StoreError::Refused { message, .. } => {
            message.clone()
        }
        StoreError::Io { source, .. } => source.to_string(),
        e => e.to_string(),
    }
}

/// All events of the store's logs, with what a reader should be told.
#[derive(Debug, Default)]
pub struct Logs {
    /// Every event, in file order, file by file.
    pub events: Vec<Event>,
    /// Warnings: torn entries skipped.
    pub warnings: Vec<String>,
    /// Each log file and the range of `events` it holds.
    pub files: Vec<(String, std::ops::Range<usize>)>,
}

impl Store {
    /// Opens the store rooted at `root`.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        let root = fs::canonicalize(root).map_err(StoreError::io(root))?;
        if !is_store(&root) {
            return Err(StoreError::NotFound(root));
        }
        refuse_symlink(&root.join("memory"), "memory")?;
        let repo = git::Repo::discover(&root)?.info()?;
        let config_path = root.join(CONFIG_PATH);
        let config = match crate::store::safe_file::read(&config_path, MAX_CONFIG_BYTES) {
            Ok(Some(bytes)) => {
                Config::parse(&utf8(bytes, CONFIG_PATH)?).map_err(StoreError::config)?
            }
            Ok(None) => Config::default(),
            Err(e) => return Err(StoreError::unreadable(CONFIG_PATH, e, MAX_CONFIG_BYTES)),
        };
        let clone = state::clone_id(&repo.common_dir).map_err(StoreError::io(&repo.common_dir))?;
        let state =
            StateDir::open(&repo.common_dir, &root).map_err(StoreError::io(&repo.common_dir))?;
        Ok(Store {
            writer: state::writer_id(&clone, repo.branch.as_deref(), repo.worktree.as_deref()),
            root,
            config,
            state,
            lock_timeout: Duration::from_secs(10),
            stats: Default::default(),
            ready_dirs: Default::default(),
            failpoint: None,
        })
    }

    /// Sets how long writers wait for the store lock.
    pub fn set_lock_timeout(&mut self, timeout: Duration) {
        self.lock_timeout = timeout;
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

    /// The store's folder relative to the work tree, `/`-separated, ending
    /// in `/` (empty when the store is the work tree's root).
    pub(crate) fn workdir_prefix(&self, workdir: &Path) -> String {
        match self.root.strip_prefix(workdir) {
            Ok(p) if !p.as_os_str().is_empty() => {
                format!("{}/", p.to_string_lossy().replace('\\', "/"))
            }
            _ => String::new(),
        }
    }

    /// Is `scope` one of the configured scopes?
    pub fn has_scope(&self, scope: &str) -> bool {
        self.config.scopes.iter().any(|s| s == scope)
    }

    /// Reads a store file that must be a regular file (never a link, a
    /// FIFO or a device), of at most `limit` bytes (default: the cap for
    /// its kind, [`read_cap`]): `None` if it does not exist.
    pub fn read(&self, rel: &str, limit: Option<u64>) -> Result<Option<String>, StoreError> {
        let path = self.path(rel);
        let cap = limit.unwrap_or_else(|| read_cap(rel));
        match crate::store::safe_file::read(&path, cap) {
            Ok(Some(bytes)) => Ok(Some(utf8(bytes, rel)?)),
            Ok(None) => Ok(None),
            Err(e) => Err(StoreError::unreadable(rel, e, cap)),
        }
    }

    /// The bytes of a store file from `offset` on, as text (`None` if that
    /// fails: callers fall back to reading everything).
    pub(crate) fn read_from(&self, rel: &str, offset: u64) -> Option<String> {
        let (mut f, meta) = crate::store::safe_file::open(&self.path(rel)).ok()??;
        f.seek(SeekFrom::Start(offset)).ok()?;
        let cap = read_cap(rel);
        let bytes =
            crate::store::safe_file::read_capped(f, meta.len().saturating_sub(offset), cap).ok()?;
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

    /// Replaces a view file atomically (temp file in the same folder, rename).
    /// No fsync: the log, written first, can always rebuild it.
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
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.memoir-{}", std::process::id()));
        fs::write(&tmp, content).map_err(StoreError::io(&tmp))?;
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            StoreError::Io {
                path: path.clone(),
                source: e,
            }
        })
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

    /// Appends events to this writer's logs (one file per UTC day) with one
    /// write and an fsync per file; repairs a torn final entry first.
    /// Returns the files appended to with their new stamps.
    pub(crate) fn append(&self, events: &[Event]) -> Result<Vec<LogFile>, StoreError> {
        let mut by_file: BTreeMap<String, String> = BTreeMap::new();
        for e in events {
            let rel = format!("memory/log/{}/{}.md", e.time.date(), self.writer);
            by_file.entry(rel).or_default().push_str(&e.render());
        }
        let mut out = Vec::new();
        let clean = self.state.appended_logs();
        for (rel, text) in by_file {
            self.check_dirs(&rel)?;
            let path = self.path(&rel);
            let dir = path.parent().unwrap_or(&self.root).to_path_buf();
            let new_dir = !dir.exists();
            fs::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
            refuse_symlink(&path, &rel)?;
            let mut options = OpenOptions::new();
            options.read(true).append(true).create(true);
            #[cfg(unix)]
            {
                // Never through a link, never blocked on a FIFO.
                use std::os::unix::fs::OpenOptionsExt;
                let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
                options.custom_flags(flags.bits() as i32);
            }
            let mut f = options.open(&path).map_err(|e| {
                if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    StoreError::Invalid {
                        path: rel.clone(),
                        line: None,
                        message: "is a symbolic link; memoir never follows links in a store".into(),
                    }
                } else {
                    StoreError::Io {
                        path: path.clone(),
                        source: e,
                    }
                }
            })?;
            let meta = f.metadata().map_err(StoreError::io(&path))?;
            refuse_special(&meta, &rel)?;
            let len = meta.len();
            let full = || {
                StoreError::Refused {
                rule: "size".into(),
                path: rel.clone(),
                line: None,
                message: format!(
                    "this writer's log for the day would pass {MAX_LOG_BYTES} bytes, more than memoir reads; nothing written"
                ),
            }
            };
            if len + text.len() as u64 > MAX_LOG_BYTES {
                return Err(full());
            }
            let mut payload = String::new();
            // A log as memoir left it after its last append ends cleanly; any
            // other (a crash in the middle of an append, a teammate's tool, a
            // checkout) is read as a reader reads it.
            if len > 0 && clean.get(&rel) != Some(&Stamp::of(&meta)) {
                // Read as every reader reads it: a torn or malformed end (or
                // a final entry whose length runs past the file) is closed.
                let mut bytes = Vec::new();
                f.read_to_end(&mut bytes).map_err(StoreError::io(&path))?;
                if !event::log_ends_cleanly(&String::from_utf8_lossy(&bytes)) {
                    payload.push_str(&format!("\n{TORN_MARKER}\n\n"));
                }
            }
            payload.push_str(&text);
            if len + payload.len() as u64 > MAX_LOG_BYTES {
                return Err(full());
            }
            f.write_all(payload.as_bytes())
                .and_then(|_| f.sync_data())
                .map_err(StoreError::io(&path))?;
            if len == 0 {
                // A new file's directory entry must be durable too.
                let _ = fs::File::open(&dir).and_then(|d| d.sync_all());
                if new_dir {
                    if let Some(parent) = dir.parent() {
                        let _ = fs::File::open(parent).and_then(|d| d.sync_all());
                    }
                }
            }
            let stamp = Stamp::of(&f.metadata().map_err(StoreError::io(&path))?);
            out.push(LogFile { rel, stamp });
        }
        let stamps: Vec<(String, Stamp)> = out.iter().map(|f| (f.rel.clone(), f.stamp)).collect();
        let _ = self.state.set_appended_logs(&stamps);
        Ok(out)
    }

    /// Every log file, sorted by path (only regular files: see
    /// [`Store::log_listing`]).
    pub fn log_files(&self) -> Result<Vec<LogFile>, StoreError> {
        Ok(self.log_listing()?.0)
    }

    /// Every log file, sorted by path, and what is in the log folder that
    /// memoir will not read as a log (a link, a FIFO, a device: never
    /// opened, so never followed and never waited on).
    pub fn log_listing(&self) -> Result<(Vec<LogFile>, Vec<LogIssue>), StoreError> {
        let mut out = Vec::new();
        let mut skipped = Vec::new();
        let log_dir = self.path("memory/log");
        refuse_symlink(&log_dir, "memory/log")?;
        let Ok(days) = fs::read_dir(&log_dir) else {
            return Ok((out, skipped));
        };
        let not_a_log = |rel: String, what: &str| LogIssue {
            path: rel,
            line: None,
            message: format!("{what}; memoir reads only regular files as logs (skipped)"),
            error: true,
        };
        for day in days.flatten() {
            let name = day.file_name().to_string_lossy().to_string();
            let ft = day.file_type().map_err(StoreError::io(day.path()))?;
            if ft.is_symlink() && crate::model::time::Date::parse(&name).is_ok() {
                skipped.push(not_a_log(
                    format!("memory/log/{name}"),
                    "is a symbolic link",
                ));
                continue;
            }
            if !ft.is_dir() || crate::model::time::Date::parse(&name).is_err() {
                continue;
            }
            let files = fs::read_dir(day.path()).map_err(StoreError::io(day.path()))?;
            for f in files.flatten() {
                let fname = f.file_name().to_string_lossy().to_string();
                if !fname.ends_with(".md") || fname.starts_with('.') {
                    continue;
                }
                let rel = format!("memory/log/{name}/{fname}");
                let meta = match fs::symlink_metadata(f.path()) {
                    Ok(m) => m,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(StoreError::io(f.path())(e)),
                };
                if meta.file_type().is_symlink() {
                    skipped.push(not_a_log(rel, "is a symbolic link"));
                } else if !meta.is_file() {
                    skipped.push(not_a_log(rel, "is not a regular file"));
                } else if meta.len() > MAX_LOG_BYTES {
                    skipped.push(LogIssue {
                        path: rel,
                        line: None,
                        message: format!(
                            "is {} bytes, more than the {MAX_LOG_BYTES} memoir reads (skipped; memoir will not rebuild or record without it)",
                            meta.len()
                        ),
                        error: true,
                    });
                } else {
                    out.push(LogFile {
                        rel,
                        stamp: Stamp::of(&meta),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.rel.cmp(&b.rel));
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((out, skipped))
    }

    /// Parses a log's text as every reader must: malformed entries, and
    /// entries for a scope the store does not have (a forged entry must not
    /// make a folder), are quarantined.
    pub(crate) fn parse_log(&self, rel: &str, text: &str) -> Result<ParsedLog, StoreError> {
        let mut parsed = event::parse_log(text).map_err(|e| StoreError::log(rel, e))?;
        if parsed
            .events
            .iter()
            .any(|e| e.key.as_ref().is_some_and(|k| !self.has_scope(&k.scope)))
        {
            let events = std::mem::take(&mut parsed.events);
            let spans = std::mem::take(&mut parsed.spans);
            for (e, span) in events.into_iter().zip(spans) {
                match e.key.as_ref().filter(|k| !self.has_scope(&k.scope)) {
                    None => {
                        parsed.events.push(e);
                        parsed.spans.push(span);
                    }
                    Some(k) => {
                        let line = text[..span.start].matches('\n').count() + 1;
                        parsed.quarantined.push(event::Quarantined {
                            line,
                            error: LogError {
                                line,
                                message: format!(
                                    "entry {} is for the unknown scope `{}` (configured: {})",
                                    e.id,
                                    k.scope,
                                    self.config.scopes.join(", ")
                                ),
                            },
                        });
                    }
                }
            }
        }
        Ok(parsed)
    }

    /// Reads and parses every log.
    pub fn read_logs(&self) -> Result<Logs, StoreError> {
        let mut logs = Logs::default();
        let mut issues = Vec::new();
        self.each_log(&mut issues, |rel, events| {
            let start = logs.events.len();
            logs.events.extend(events);
            logs.files.push((rel.to_string(), start..logs.events.len()));
        })?;
        logs.warnings = issues.iter().map(LogIssue::to_string).collect();
        Ok(logs)
    }

    /// Reads and parses every log, one at a time (its text let go before
    /// the next is read), handing each one's events to `each`. What a
    /// reader skips becomes an issue: entries torn by a crash, quarantined
    /// entries, files that are no logs or cannot be read.
    fn each_log(
        &self,
        issues: &mut Vec<LogIssue>,
        mut each: impl FnMut(&str, Vec<Event>),
    ) -> Result<(), StoreError> {
        self.stats
            .replays
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (files, skipped) = self.log_listing()?;
        issues.extend(skipped);
        for f in files {
            let text = match self.read_log(&f.rel) {
                Ok(text) => text,
                Err(e) => {
                    issues.push(LogIssue {
                        path: f.rel.clone(),
                        line: None,
                        message: format!("{} (skipped)", error_message(&e)),
                        error: true,
                    });
                    continue;
                }
            };
            let parsed = self.parse_log(&f.rel, &text)?;
            drop(text);
            for line in &parsed.torn {
                issues.push(LogIssue {
                    path: f.rel.clone(),
                    line: Some(*line),
                    message: "skipped an entry torn by a crash (never acknowledged)".into(),
                    error: false,
                });
            }
            for q in &parsed.quarantined {
                issues.push(LogIssue {
                    path: f.rel.clone(),
                    line: Some(q.error.line.max(q.line)),
                    message: format!(
                        "{}; skipped by every reader (the change it held, if any, must be made again)",
                        quarantine_message(q)
                    ),
                    error: false,
                });
            }
            each(&f.rel, parsed.events);
        }
        Ok(())
    }

    /// A log's text. Bytes that are not UTF-8 are replaced (U+FFFD), so that
    /// only the entries holding them fail their length check and are
    /// quarantined, rather than the whole log.
    pub(crate) fn read_log(&self, rel: &str) -> Result<String, StoreError> {
        let cap = MAX_LOG_BYTES;
        match crate::store::safe_file::read(&self.path(rel), cap) {
            Ok(Some(bytes)) => {
                let text = match String::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                };
                // Checked out by a clone with core.autocrlf before the
                // store's `-text` attributes were committed: read as written.
                Ok(crate::model::text::git_crlf_undone(&text).unwrap_or(text))
            }
            Ok(None) => Ok(String::new()),
            Err(e) => Err(StoreError::unreadable(rel, e, cap)),
        }
    }

    /// Replays every log, with `extra` events (not logged yet) added. Lean:
    /// the text of versions that can no longer be a view is let go as the
    /// logs are read one at a time (see [`crate::log::replay::Builder`]), so
    /// memory stays bounded by the memories rather than the logs' length;
    /// history's old versions need [`Store::read_logs`].
    pub fn replay_with(&self, extra: Vec<Event>) -> Result<(Replay, Vec<String>), StoreError> {
        let (mut replay, issues) = self.replay_keeping(extra, crate::log::replay::Keep::Views)?;
        // Conflicts show a common ancestor, whose text was let go: read the
        // logs again for those versions only.
        let missing = replay.missing_views();
        self.restore(&mut replay, &missing)?;
        Ok((replay, issues.iter().map(LogIssue::to_string).collect()))
    }

    /// Puts back the text of versions `ids` that a replay let go, from a
    /// second read of the logs.
    pub(crate) fn restore(
        &self,
        replay: &mut Replay,
        ids: &std::collections::HashSet<String>,
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.each_event(|e| {
            if ids.contains(&e.id) {
                replay.restore(e);
            }
            Ok(())
        })
    }

    /// Hands every logged event to `each`, from a read of the logs a file at
    /// a time; stops at `each`'s first error.
    pub(crate) fn each_event(
        &self,
        mut each: impl FnMut(Event) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut failed = None;
        self.each_log(&mut Vec::new(), |_, events| {
            for e in events {
                if failed.is_none() {
                    failed = each(e).err();
                }
            }
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// Replays every log keeping the text of `keep`, with `extra` events.
    pub(crate) fn replay_keeping(
        &self,
        extra: Vec<Event>,
        keep: crate::log::replay::Keep,
    ) -> Result<(Replay, Vec<LogIssue>), StoreError> {
        let mut b = crate::log::replay::Builder::new(keep);
        let mut issues = Vec::new();
        self.each_log(&mut issues, |_, events| {
            events.into_iter().for_each(|e| b.add(e))
        })?;
        extra.into_iter().for_each(|e| b.add(e));
        let replay = b.finish();
        issues.extend(replay.warnings.iter().map(|w| LogIssue {
            path: "memory/log".into(),
            line: None,
            message: w.clone(),
            error: false,
        }));
        Ok((replay, issues))
    }

    /// Replays every log (lean: see [`Store::replay_with`]).
    pub fn replay(&self) -> Result<(Replay, Vec<String>), StoreError> {
        self.replay_with(Vec::new())
    }

    /// Memory file paths on disk in configured scopes, with their stamps.
    pub(crate) fn memory_files(&self) -> Result<Vec<(String, Stamp)>, StoreError> {
        for scope in &self.config.scopes {
            let rel_dir = format!("memory/{scope}");
            refuse_symlink(&self.path(&rel_dir), &rel_dir)?;
        }
        // Listing a folder and one lstat per file are most of a query's time
        // on a large store, nearly all of it in the kernel: each folder is
        // listed and its files stat'd on a thread of its own (DirEntry::metadata
        // is an lstat relative to the open folder: no path walk per file, no
        // link followed), and a large folder's files are split over the cores.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Threads per folder: the cores the folders leave over.
        let split = (cores / self.config.scopes.len().max(1)).clamp(1, 4);
        let listed: Vec<Result<Vec<(String, Stamp)>, StoreError>> = std::thread::scope(|scope| {
            let workers: Vec<_> = self
                .config
                .scopes
                .iter()
                .map(|s| scope.spawn(move || self.list_folder(&format!("memory/{s}"), split)))
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|_| Err(self.thread_failed())))
                .collect()
        });
        let mut out = Vec::new();
        for part in listed {
            out.extend(part?);
        }
        self.stats
            .files_listed
            .fetch_add(out.len(), std::sync::atomic::Ordering::Relaxed);
        // Each folder's files came sorted; the folders' order is all that is
        // left to sort (a stable sort of sorted runs is a merge).
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The memory files of one folder with their stamps, in path order; a
    /// missing folder has none.
    fn list_folder(&self, rel_dir: &str, split: usize) -> Result<Vec<(String, Stamp)>, StoreError> {
        let Some(folder) = crate::store::folder::Folder::open(&self.path(rel_dir)) else {
            return Ok(Vec::new());
        };
        // Each name with its text: a name that is not UTF-8 is stat'ed as it
        // is, and shown lossily (reading it then fails with a warning).
        let mut names: Vec<(OsString, String)> = folder
            .names()
            .map(|raw| {
                let text = raw.to_string_lossy().into_owned();
                (raw, text)
            })
            .filter(|(_, name)| name.ends_with(".md") && !name.starts_with('.'))
            .collect();
        // Sorted here, on this folder's thread, rather than all together.
        names.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        let stamp = |part: &[(OsString, String)]| -> Result<Vec<(String, Stamp)>, StoreError> {
            part.iter()
                .filter_map(|(raw, name)| match folder.stamp(raw) {
                    Ok(stamp) => Some(Ok((format!("{rel_dir}/{name}"), stamp))),
                    // Removed since the listing (a `forget` beside a query):
                    // not there, rather than a failed query.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                    Err(e) => Some(Err(StoreError::Io {
                        path: self.path(rel_dir).join(raw),
                        source: e,
                    })),
                })
                .collect()
        };
        let chunk = names.len().div_ceil(split).max(4096);
        if names.len() <= chunk {
            return stamp(&names);
        }
        std::thread::scope(|scope| {
            let workers: Vec<_> = names
                .chunks(chunk)
                .map(|part| scope.spawn(move || stamp(part)))
                .collect();
            let mut out = Vec::with_capacity(names.len());
            for w in workers {
                out.extend(w.join().unwrap_or_else(|_| Err(self.thread_failed()))?);
            }
            Ok(out)
        })
    }

    pub(crate) fn thread_failed(&self) -> StoreError {
        StoreError::Io {
            path: self.path("memory"),
            source: io::Error::other("a thread listing memory files failed"),
        }
    }

    /// Loads the persistent index and brings it up to date with the logs
    /// and the memory files, reading only what changed.
    pub fn refreshed_cache(&self) -> Result<Cache, StoreError> {
        let mut cache = self.state.load_cache();
        self.refresh_logs(&mut cache)?;
        self.refresh_files(&mut cache)?;
        Ok(cache)
    }

    /// Brings `cache.keys` up to date with the logs: appended bytes are
    /// parsed and applied when they only extend the DAG; anything else
    /// (a rewritten or removed log, a fork) replays everything.
    pub(crate) fn refresh_logs(&self, cache: &mut Cache) -> Result<(), StoreError> {
        let files = self.log_files()?;
        if let Some(appended) = log_growth(&files, &cache.logs) {
            if appended.is_empty() {
                return Ok(());
            }
            if self.apply_appended(cache, &appended)? {
                for f in &files {
                    cache.logs.insert(f.rel.clone(), f.stamp);
                }
                cache.dirty = true;
                return Ok(());
            }
        }
        cache.dirty = true;
        // What a failed incremental pass applied goes before the replay.
        cache.keys.clear();
        cache.pending.clear();
        // Heads and the views' fingerprints are all the index keeps.
        let (replay, _) = self.replay_keeping(Vec::new(), crate::log::replay::Keep::Prints)?;
        cache.keys = key_states(&replay);
        cache.pending = replay.pending_events();
        cache.logs = files.into_iter().map(|f| (f.rel, f.stamp)).collect();
        Ok(())
    }

    /// Applies the entries appended to logs since they were last seen, if
    /// each only moves a memory forward; `false` asks for a full replay.
    fn apply_appended(
        &self,
        cache: &mut Cache,
        appended: &[(&LogFile, u64)],
    ) -> Result<bool, StoreError> {
        // A day at a time (logs are `memory/log/<day>/<writer>.md`), so that
        // a cold start never holds every log; within a day, the writers'
        // entries in time order, so that one naming another writer's
        // version of the same day comes after it. (Returning false part-way
        // is fine: the full replay resets it all.)
        let day = |f: &LogFile| f.rel.rsplit_once('/').map(|(d, _)| d.to_string());
        let mut at = 0;
        while at < appended.len() {
            let this = day(appended[at].0);
            let mut events = Vec::new();
            while at < appended.len() && day(appended[at].0) == this {
                let (f, from) = appended[at];
                at += 1;
                let Some(text) = self.read_from(&f.rel, from) else {
                    return Ok(false);
                };
                // Quarantined entries are skipped as a full replay skips
                // them; a torn end may yet be completed: replay it all.
                match self.parse_log(&f.rel, &text) {
                    Ok(p) if p.torn.is_empty() && !p.open_end => events.extend(p.events),
                    _ => return Ok(false),
                }
            }
            // Stable: entries of one time keep their order in their log.
            events.sort_by_key(|e| e.time);
            if !apply_events(cache, events) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The logs that grew since `recorded` (their stamps when last read), each
/// with the offset it grew from (0 for a new log); `None` when a recorded
/// log was removed or rewritten (anything but grown), which needs a full
/// replay.
pub(crate) fn log_growth<'a>(
    files: &'a [LogFile],
    recorded: &BTreeMap<String, Stamp>,
) -> Option<Vec<(&'a LogFile, u64)>> {
    let mut grown = Vec::new();
    let mut seen = 0;
    for f in files {
        match recorded.get(&f.rel) {
            Some(old) if *old == f.stamp => seen += 1,
            Some(old) if f.stamp.size > old.size => {
                seen += 1;
                grown.push((f, old.size));
            }
            None => grown.push((f, 0)),
            Some(_) => return None,
        }
    }
    (seen == recorded.len()).then_some(grown)
}

/// Keeps the index's pending proposals in step with an event.
pub(crate) fn track_pending(cache: &mut Cache, e: &Event) {
    if e.op == Op::Propose {
        cache.pending.push(e.clone());
    }
    if !e.consumed.is_empty() {
        cache.pending.retain(|p| !e.consumed.contains(&p.id));
    }
}

/// Keeps a list of pending proposals in step with an event.
pub(crate) fn track_pending_in(pending: &mut Vec<String>, e: &Event) {
    if e.op == Op::Propose {
        pending.push(e.id.clone());
    }
    if !e.consumed.is_empty() {
        pending.retain(|p| !e.consumed.contains(p));
    }
}

/// A memory's state after version event `e`, if `e` only moves it forward
/// from `state` (its `prev` are the heads; a first version has none).
/// `None` for a fork or an unknown `prev`: those need a full replay.
pub(crate) fn advance(state: Option<&KeyState>, e: &Event) -> Option<KeyState> {
    let forward = match state {
        None => e.prev.is_empty(),
        // Naming every head (even of an open conflict) makes e the only one.
        Some(ks) => {
            !e.prev.is_empty()
                && ks.heads.iter().collect::<BTreeSet<_>>() == e.prev.iter().collect()
        }
    };
    forward.then(|| KeyState::after(e))
}

/// Applies events that only move memories forward to the index's key
/// states; `false` when one does not (a fork, an unknown `prev`).
fn apply_events(cache: &mut Cache, events: Vec<Event>) -> bool {
    // What the batch consumes, wherever in it: entries of one time from
    // several writers are not in causal order.
    let consumed: HashSet<&str> = events
        .iter()
        .flat_map(|e| e.consumed.iter().map(String::as_str))
        .collect();
    cache.pending.retain(|p| !consumed.contains(p.id.as_str()));
    let proposals: Vec<Event> = events
        .iter()
        .filter(|e| e.op == Op::Propose && !consumed.contains(e.id.as_str()))
        .cloned()
        .collect();
    cache.pending.extend(proposals);
    for e in events {
        if !e.op.is_version() {
            continue;
        }
        let Some(key) = &e.key else { continue };
        let k = key.to_string();
        let Some(after) = advance(cache.keys.get(&k), &e) else {
            return false;
        };
        cache.keys.insert(k, after);
    }
    true
}

impl Store {
    /// Re-reads memory files whose stamp changed (or is too recent to trust).
    pub(crate) fn refresh_files(&self, cache: &mut Cache) -> Result<(), StoreError> {
        let files = self.memory_files()?;
        let mut old = std::mem::take(&mut cache.files);
        let mut stale = Vec::new();
        for (rel, stamp) in files {
            match old.remove(&rel) {
                // git's racy-index rule: a file changed in the same tick as
                // the index was written may look unchanged; re-read it.
                Some(e) if e.stamp == stamp && stamp.mtime < cache.loaded_mtime => {
                    cache.files.insert(rel, e);
                }
                _ => stale.push((rel, stamp)),
            }
        }
        cache.dirty |= !old.is_empty() || !stale.is_empty();
        // Reading and tokenizing is the cost of a cold index: workers on every
        // core read batches (a bounded channel keeps memory flat) while this
        // thread interns their terms.
        let threads = crate::worker_threads();
        // Up to 3 × threads batches' term maps are alive at once: batches of
        // 512 memories with 40-sentence bodies took a cold query of 50,000
        // to 200 MB; 128 keep it to 172 MB, no slower.
        let batches: Vec<&[(String, Stamp)]> = stale.chunks(128).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<Option<Result<Parsed, String>>>)>(
            threads * 2,
        );
        let mut received = 0;
        std::thread::scope(|s| {
            for _ in 0..threads {
                let (tx, next, batches) = (tx.clone(), &next, &batches);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(batch) = batches.get(i) else { break };
                    let parsed = batch
                        .iter()
                        .map(|(rel, _)| self.parse_for_index(rel))
                        .collect();
                    if tx.send((i, parsed)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            // Intern on this thread while the workers read on.
            for (i, parsed) in rx {
                received += 1;
                for ((rel, stamp), parsed) in batches[i].iter().zip(parsed) {
                    let entry = match parsed {
                        // Removed since the listing (a `forget` beside this
                        // read): not there.
                        None => continue,
                        Some(Ok(p)) => p.into_entry(*stamp, &mut cache.dict),
                        Some(Err(error)) => FileEntry {
                            stamp: *stamp,
                            hash: 0,
                            summary: None,
                            error: Some(error),
                            terms: Default::default(),
                            len: 0,
                        },
                    };
                    cache.files.insert(rel.clone(), entry);
                }
            }
        });
        if received != batches.len() {
            return Err(StoreError::Io {
                path: self.path("memory"),
                source: io::Error::other("a thread reading memory files failed"),
            });
        }
        Ok(())
    }

    /// Reads, validates and tokenizes a memory file for the index (`None`:
    /// it is gone).
    fn parse_for_index(&self, rel: &str) -> Option<Result<Parsed, String>> {
        match self.read_memory_file(rel) {
            Ok(Some(c)) => Some(
                validate_file(&c, rel)
                    .map(|m| Parsed::of(&c, &m))
                    .map_err(|e| e.to_string()),
            ),
            Ok(None) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }

    /// Regenerates MEMORY.md from the index's summaries; `true` if it changed.
    pub(crate) fn write_index(&self, cache: &Cache) -> Result<bool, StoreError> {
        let summaries = summaries(cache);
        let block = memory_md::render_block(
            summaries.iter().map(|(k, s)| (k, *s)),
            self.config.index_budget,
        );
        self.write_index_block(&block.text)
    }

    /// MEMORY.md as it is and as it is with this generated block.
    pub(crate) fn index_with(&self, block: &str) -> Result<(Option<String>, String), StoreError> {
        let current = self.read(INDEX_PATH, None)?;
        let mut base = current.clone().unwrap_or_default();
        if crate::integration::merge::has_conflict_markers(&base) {
            // A text merge without memoir's driver: the block is regenerated;
            // of the team's text, our side of each conflict is kept.
            base = crate::integration::merge::ours_of_conflicts(&base);
        }
        let wanted = memory_md::splice(&base, block);
        Ok((current, wanted))
    }

    /// Writes MEMORY.md with this generated block; `true` if it changed.
    pub(crate) fn write_index_block(&self, block: &str) -> Result<bool, StoreError> {
        let (current, wanted) = self.index_with(block)?;
        if current.as_deref() == Some(wanted.as_str()) {
            return Ok(false);
        }
        self.write_view(INDEX_PATH, &wanted)?;
        Ok(true)
    }

    /// Saves the persistent index; losing it only costs time.
    pub(crate) fn save_cache(&self, cache: &Cache) {
        let _ = self.state.save_cache(cache);
    }

    /// Saves the persistent index if a refresh changed it; clears `dirty`
    /// once it is on disk.
    pub(crate) fn save_if_dirty(&self, cache: &mut Cache) {
        if cache.dirty && self.state.save_cache(cache).is_ok() {
            cache.dirty = false;
        }
    }

    /// Rewrites the journal from scratch.
    pub(crate) fn journal_reset(&self, views: impl IntoIterator<Item = (String, u64)>) {
        let _ = self.state.journal_compact(views);
    }
}

/// The description terms of one scope's memories, inverted: which memories
/// have each term. Built once from the persistent index (each memory's
/// description terms are in its posting list, field mask bit 1, as ids), it
/// answers many near-duplicate questions (a consolidation of a thousand
/// proposals) without comparing all pairs or re-reading any description.
pub(crate) struct Descriptions<'a> {
    /// Path and number of description terms, per memory.
    docs: Vec<(&'a str, usize)>,
    /// The memories (positions in `docs`) whose description has each term.
    by_term: HashMap<u32, Vec<usize>>,
    /// Ids of terms the index's dictionary does not have yet.
    extra: HashMap<String, u32>,
}

impl<'a> Descriptions<'a> {
    /// The descriptions of memories given as path, description term ids and
    /// (if not their number) how many words the description has.
    pub(crate) fn from_docs(
        docs: impl Iterator<Item = (&'a str, Vec<u32>, Option<usize>)>,
        extra: HashMap<String, u32>,
    ) -> Descriptions<'a> {
        let mut out = Descriptions {
            docs: Vec::new(),
            by_term: HashMap::new(),
            extra,
        };
        for (path, ids, words) in docs {
            let doc = out.docs.len();
            for id in &ids {
                out.by_term.entry(*id).or_default().push(doc);
            }
            out.docs.push((path, words.unwrap_or(ids.len())));
        }
        out
    }

    /// The memory (other than `except`) whose description is most like
    /// `description`, if at or above `threshold`.
    pub(crate) fn nearest(
        &self,
        lookup: impl Fn(&str) -> Option<u32>,
        except: Option<&Key>,
        description: &str,
        threshold: f64,
    ) -> Option<(Key, f64)> {
        let words: BTreeSet<String> = crate::model::text::words(description).into_iter().collect();
        let mut nearest = Nearest::new(words.len(), except, threshold)?;
        // Each word's posting list (docs in ascending order); a word no
        // memory has cannot be shared, but it still counts in the union.
        let mut postings: Vec<&[usize]> = words
            .iter()
            .map(|w| {
                lookup(w)
                    .or_else(|| self.extra.get(w).copied())
                    .and_then(|id| self.by_term.get(&id))
                    .map_or(&[][..], Vec::as_slice)
            })
            .collect();
        // Prefix filtering: a memory at or above the threshold shares at
        // least ceil(threshold x words) of the words, so it is in the
        // postings of any (words - that + 1) of them: only the docs in the
        // rarest words' postings are candidates. Shared words are counted
        // in a dense array (a hash map per proposal was most of a
        // consolidation of 1,000 proposals).
        postings.sort_by_key(|p| p.len());
        let need = ((threshold * words.len() as f64) - 1e-9).ceil().max(1.0) as usize;
        let prefix = (words.len() + 1).saturating_sub(need).min(postings.len());
        let mut common = vec![0u32; self.docs.len()];
        for &doc in postings.iter().flat_map(|p| p.iter()) {
            common[doc] += 1;
        }
        for &doc in postings[..prefix].iter().flat_map(|p| p.iter()) {
            // Zeroed once offered: each candidate is offered once.
            let c = std::mem::take(&mut common[doc]);
            if c > 0 {
                let (path, n) = self.docs[doc];
                nearest.offer(path, n, c as usize);
            }
        }
        nearest.best()
    }
}

/// The search for a near-duplicate: the memory whose description's word set
/// is most like a new description's (Jaccard similarity), at or above a
/// threshold; ties go to the smaller key.
pub(crate) struct Nearest<'a> {
    words: usize,
    except: Option<&'a Key>,
    threshold: f64,
    best: Option<(Key, f64)>,
}

impl<'a> Nearest<'a> {
    /// A search for a description of `words` distinct words (none: no search).
    pub(crate) fn new(words: usize, except: Option<&'a Key>, threshold: f64) -> Option<Self> {
        (words > 0).then_some(Nearest {
            words,
            except,
            threshold,
            best: None,
        })
    }

    /// A candidate: its path, its description's word count, and how many
    /// of those words the new description has.
    pub(crate) fn offer(&mut self, path: &str, theirs: usize, common: usize) {
        if common == 0 {
            return;
        }
        let sim = common as f64 / (self.words + theirs - common) as f64;
        if sim < self.threshold {
            return;
        }
        let Some(key) = Key::from_rel_path(path) else {
            return;
        };
        if Some(&key) != self.except
            && self
                .best
                .as_ref()
                .is_none_or(|b| sim > b.1 || (sim == b.1 && key < b.0))
        {
            self.best = Some((key, sim));
        }
    }

    /// The best candidate offered.
    pub(crate) fn best(self) -> Option<(Key, f64)> {
        self.best
    }
}

/// Summaries of every valid memory file in the index, by key.
pub fn summaries(cache: &Cache) -> Vec<(Key, &Summary)> {
    cache
        .files
        .iter()
        .filter_map(|(rel, e)| Some((Key::from_rel_path(rel)?, e.summary.as_ref()?)))
        .collect()
}

/// The index entry for a file's content: summary when it is a valid memory
/// whose name matches its file name.
pub(crate) fn entry_for(content: &str, stamp: Stamp, rel: &str, dict: &mut Dict) -> FileEntry {
    match validate_file(content, rel) {
        Ok(m) => entry_of(content, &m, stamp, dict),
        Err(e) => FileEntry {
            stamp,
            hash: fingerprint(content.as_bytes()),
            summary: None,
            error: Some(e.to_string()),
            terms: Default::default(),
            len: 0,
        },
    }
}

/// The index entry of a valid memory file.
fn entry_of(content: &str, m: &Memory, stamp: Stamp, dict: &mut Dict) -> FileEntry {
    Parsed::of(content, m).into_entry(stamp, dict)
}

/// What the index keeps of a valid memory file, before its terms are interned
/// (so that files can be read and tokenized in parallel).
struct Parsed {
    hash: u64,
    summary: Summary,
    terms: crate::search::rank::Terms,
    len: u32,
}

impl Parsed {
    fn of(content: &str, m: &Memory) -> Parsed {
        let (terms, len) = crate::search::rank::term_counts(m);
        Parsed {
            hash: fingerprint(content.as_bytes()),
            summary: Summary::of(m),
            terms,
            len,
        }
    }

    fn into_entry(self, stamp: Stamp, dict: &mut Dict) -> FileEntry {
        let terms = crate::local::state::TermList::of(
            self.terms
                .into_iter()
                .map(|(t, (tf, mask))| (dict.intern(&t), tf, mask))
                .collect(),
        );
        FileEntry {
            stamp,
            hash: self.hash,
            summary: Some(self.summary),
            error: None,
            terms,
            len: self.len,
        }
    }
}

/// Parses a memory file and checks that its name belongs to its path.
pub fn validate_file(content: &str, rel: &str) -> Result<Memory, StoreError> {
    let m = Memory::parse(content).map_err(|e| StoreError::invalid(rel, &e))?;
    let key = Key::from_rel_path(rel).ok_or_else(|| StoreError::Invalid {
        path: rel.to_string(),
        line: None,
        message: "not a memory path (memory/<scope>/<slug>.md)".into(),
    })?;
    if !crate::model::key::is_slug(&key.slug) {
        let hint = crate::model::key::slugify(&key.slug)
            .map(|s| format!(" (rename it {s}.md)"))
            .unwrap_or_default();
        return Err(StoreError::Invalid {
            path: rel.to_string(),
            line: None,
            message: format!("file name `{}` is not a slug{hint}", key.slug),
        });
    }
    match crate::model::key::slugify(&m.name) {
        Ok(s) if s == key.slug => Ok(m),
        Ok(s) => Err(StoreError::Invalid {
            path: rel.to_string(),
            line: Some(2),
            message: format!(
                "name normalizes to `{s}`, but the file is `{}.md`",
                key.slug
            ),
        }),
        Err(e) => Err(StoreError::Refused {
            rule: "name".into(),
            path: rel.to_string(),
            line: Some(2),
            message: e.to_string(),
        }),
    }
}

/// The persistent index's view of a replay.
pub fn key_states(replay: &Replay) -> BTreeMap<String, KeyState> {
    replay
        .memories
        .iter()
        .map(|(k, v)| {
            let view_hash = replay.view_print(k);
            (
                k.to_string(),
                KeyState {
                    heads: v.heads.clone(),
                    view: v.view.clone(),
                    view_hash,
                    conflict: v.conflict,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The nearest memory by comparing the description with every other.
    fn brute_force(descs: &[String], description: &str, threshold: f64) -> Option<(Key, f64)> {
        let words: BTreeSet<String> = crate::model::text::words(description).into_iter().collect();
        let mut nearest = Nearest::new(words.len(), None, threshold)?;
        for (i, d) in descs.iter().enumerate() {
            let theirs: BTreeSet<String> = crate::model::text::words(d).into_iter().collect();
            let common = theirs.intersection(&words).count();
            nearest.offer(&format!("memory/project/m{i}.md"), theirs.len(), common);
        }
        nearest.best()
    }

    proptest! {
        /// Prefix filtering finds what comparing all pairs finds.
        #[test]
        fn nearest_matches_all_pairs(
            descs in prop::collection::vec(prop::collection::vec(0u8..12, 1..7), 1..40),
            query in prop::collection::vec(0u8..14, 1..7),
            threshold in prop::sample::select(vec![0.0, 0.3, 0.5, 0.8, 1.0]),
        ) {
            let text = |ws: &[u8]| ws.iter().map(|w| format!("w{w}")).collect::<Vec<_>>().join(" ");
            let descs: Vec<String> = descs.iter().map(|d| text(d)).collect();
            let paths: Vec<String> = (0..descs.len()).map(|i| format!("memory/project/m{i}.md")).collect();
            let mut dict: HashMap<String, u32> = HashMap::new();
            let docs: Vec<(&str, Vec<u32>, Option<usize>)> = descs
                .iter()
                .zip(&paths)
                .map(|(d, p)| {
                    let words: BTreeSet<String> = crate::model::text::words(d).into_iter().collect();
                    let ids = words.iter().map(|w| {
                        let next = dict.len() as u32;
                        *dict.entry(w.clone()).or_insert(next)
                    }).collect();
                    (p.as_str(), ids, None)
                })
                .collect();
            let d = Descriptions::from_docs(docs.into_iter(), HashMap::new());
            let q = text(&query);
            let found = d.nearest(|w| dict.get(w).copied(), None, &q, threshold);
            prop_assert_eq!(found, brute_force(&descs, &q, threshold));
        }
    }
}
