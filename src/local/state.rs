//! Local, never-committed state: `<git common dir>/memoir/`.
//!
//! Per clone: `clone-id` (random, makes writer ids). Per store (keyed by the
//! store's absolute path, so worktrees and several stores in one repository
//! stay apart): `stores/<hash>/lock`, `journal` (what memoir last wrote to
//! each view file), `receipts.jsonl` and `access.bin` (what `context`
//! injected, `local::receipts` and `local::access`) and `index.bin` (the persistent index, laid out in the index's layout: file stamps and
//! summaries, and each memory's heads as of the log stamps recorded with
//! them), and `vectors-<hash>.bin` (the embedding vectors of one model,
//! `embed::Vectors`). The index is a cache: when it is missing or unreadable it is
//! rebuilt silently; every entry is checked against the file system before
//! use.

use crate::model::fingerprint::fingerprint;
use crate::model::stamp::Stamp;
use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The per-store state directory.
#[derive(Debug, Clone)]
pub struct StateDir {
    /// `<git common dir>/memoir/stores/<hash>`.
    pub path: PathBuf,
}

impl StateDir {
    /// Opens (creating) the state directory of the store at `store_root`;
    /// an error names the folder it could not make.
    pub fn open(common_dir: &Path, store_root: &Path) -> Result<StateDir, (PathBuf, io::Error)> {
        let key = fingerprint(store_root.to_string_lossy().as_bytes());
        let path = common_dir
            .join("memoir")
            .join("stores")
            .join(format!("{key:016x}"));
        match fs::create_dir_all(&path) {
            Ok(()) => Ok(StateDir { path }),
            Err(e) => Err((path, e)),
        }
    }

    /// The store lock's file.
    pub fn lock_path(&self) -> PathBuf {
        self.path.join("lock")
    }

    fn journal_path(&self) -> PathBuf {
        self.path.join("journal")
    }

    /// The persistent index's file (see `index::Index`).
    pub fn index_path(&self) -> PathBuf {
        self.path.join("index.bin")
    }

    /// The folder of `memoir watch`: its socket and the cookie files it
    /// writes to know it has seen every event before a request.
    pub fn watch_dir(&self) -> PathBuf {
        self.path.join("watch")
    }

    /// The socket `memoir watch` answers on (`watch::client`).
    pub fn watch_socket_path(&self) -> PathBuf {
        self.watch_dir().join("sock")
    }

    /// What each `memoir context` call injected (`local::receipts`).
    pub fn receipts_path(&self) -> PathBuf {
        self.path.join("receipts.jsonl")
    }

    /// How often and how lately each memory was injected or recalled
    /// (`local::access`).
    pub fn access_path(&self) -> PathBuf {
        self.path.join("access.bin")
    }

    /// The lock the receipts' and the access signal's writers take: not
    /// the store lock, which a consolidation holds for seconds while a
    /// prompt hook must not wait.
    pub fn seen_lock_path(&self) -> PathBuf {
        self.path.join("seen.lock")
    }

    /// The vector cache of embedding model `model` (see `embed::Vectors`):
    /// one file per model name, so that switching back and forth between
    /// two models keeps both caches.
    pub fn vectors_path(&self, model: &str) -> PathBuf {
        self.path.join(format!(
            "vectors-{:016x}.bin",
            fingerprint(model.as_bytes())
        ))
    }

    /// The stamp each log had when memoir last appended to it (so ending
    /// in a complete entry of its own): a log still at that stamp needs no
    /// reading before the next append.
    pub fn appended_logs(&self) -> HashMap<String, Stamp> {
        let text = fs::read_to_string(self.path.join("appended")).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let mut parts = l.splitn(4, ' ');
                let size = parts.next()?.parse().ok()?;
                let secs = parts.next()?.parse().ok()?;
                let nanos = parts.next()?.parse().ok()?;
                let rel = parts.next()?;
                Some((rel.to_string(), Stamp::from_parts(size, secs, nanos)))
            })
            .collect()
    }

    /// Records the stamps of the logs just appended to (see
    /// [`StateDir::appended_logs`]); losing them only costs a read.
    pub fn set_appended_logs(&self, logs: &[(String, Stamp)]) -> io::Result<()> {
        let text: String = logs
            .iter()
            .map(|(rel, s)| {
                let (secs, nanos) = (
                    s.mtime.div_euclid(1_000_000_000),
                    s.mtime.rem_euclid(1_000_000_000),
                );
                format!("{} {secs} {nanos} {rel}\n", s.size)
            })
            .collect();
        write_replace(&self.path.join("appended"), text.as_bytes())
    }

    /// Records that memoir wrote `hash` to each path (`None`: removed it).
    pub fn journal_append(&self, entries: &[(String, Option<u64>)]) -> io::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for (path, hash) in entries {
            match hash {
                Some(h) => text.push_str(&format!("{h:016x} {path}\n")),
                None => text.push_str(&format!("- {path}\n")),
            }
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.journal_path())?;
        f.write_all(text.as_bytes())
    }

    /// What memoir last wrote to each path. A damaged journal reads as what
    /// it can: a lost line only makes `check` call a stale view a hand edit.
    pub fn journal(&self) -> HashMap<String, Option<u64>> {
        let text = fs::read_to_string(self.journal_path()).unwrap_or_default();
        let mut map = HashMap::new();
        for line in text.lines() {
            let Some((hash, path)) = line.split_once(' ') else {
                continue;
            };
            let hash = if hash == "-" {
                None
            } else {
                match u64::from_str_radix(hash, 16) {
                    Ok(h) => Some(h),
                    Err(_) => continue,
                }
            };
            map.insert(path.to_string(), hash);
        }
        map
    }

    /// Rewrites the journal with one line per path.
    pub fn journal_compact(
        &self,
        views: impl IntoIterator<Item = (String, u64)>,
    ) -> io::Result<()> {
        let mut text = String::new();
        for (path, h) in views {
            text.push_str(&format!("{h:016x} {path}\n"));
        }
        write_replace(&self.journal_path(), text.as_bytes())
    }
}

/// Replaces the file at `path` with `bytes` atomically
/// ([`crate::fs::replace`]: a reader sees the old file or the new one).
/// Not synced: local state is rebuilt from the store when lost.
pub(crate) fn write_replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    crate::fs::replace::replace(path, bytes, crate::fs::replace::Durability::Cached)
}

/// The clone's random id, created on first use, and bound to the git
/// directory it lives in: a work tree copied with its `.git` (`cp -a`, a
/// restored backup) would otherwise share the id, and both copies would
/// append to the same log files, which git then merges with conflict
/// markers inside an append-only log. A copy gets a fresh id (a new writer).
pub fn clone_id(common_dir: &Path) -> io::Result<String> {
    let dir = common_dir.join("memoir");
    let path = dir.join("clone-id");
    let here = dir_identity(common_dir);
    if let Some((id, bound)) = read_clone_id(&path) {
        if here.is_none() || bound == here {
            return Ok(id);
        }
    }
    fs::create_dir_all(&dir)?;
    // Under a lock: two first uses at once must agree on one id.
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("clone-id.lock"))?;
    fs2::FileExt::lock_exclusive(&lock)?;
    let id = match read_clone_id(&path) {
        // Bound since, by another process; or an id from before binding,
        // kept (its clone cannot be told from a copy), now bound.
        Some((id, bound)) if bound == here || bound.is_none() => id,
        _ => {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).map_err(io::Error::other)?;
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
    };
    let binding = here.map(|h| format!("git-dir {h}\n")).unwrap_or_default();
    write_replace(&path, format!("{id}\n{binding}").as_bytes())?;
    // A clone's first use: from now on its temporary files are git's to
    // ignore (best effort: `rebuild` still removes them).
    let _ = exclude_temporaries(common_dir);
    Ok(id)
}

/// The line in `info/exclude` by which git ignores the temporary files of
/// a replacement (`fs::replace`) killed before its rename.
pub const EXCLUDE_TEMPORARIES: &str = ".*.memoir-*";

/// Makes git ignore, in this clone, the temporary files of a replacement
/// killed before its rename: `git add -A` right after such a kill must not
/// stage one (`rebuild` removes them, but a person may commit first). The
/// line goes in `<git common dir>/info/exclude`, which git reads and never
/// commits; added once, after whatever the file holds.
pub fn exclude_temporaries(common_dir: &Path) -> io::Result<()> {
    let info = common_dir.join("info");
    let path = info.join("exclude");
    // Not a regular file, or past a megabyte: not memoir's to append to.
    let Ok(current) = crate::fs::safe_file::read(&path, 1 << 20) else {
        return Ok(());
    };
    let current = String::from_utf8_lossy(current.as_deref().unwrap_or_default());
    if current.lines().any(|l| l.trim() == EXCLUDE_TEMPORARIES) {
        return Ok(());
    }
    fs::create_dir_all(&info)?;
    let sep = if current.is_empty() || current.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    io::Write::write_all(
        &mut file,
        format!(
            "{sep}# memoir: a replacement's temporary file, left if it was killed\n{EXCLUDE_TEMPORARIES}\n"
        )
        .as_bytes(),
    )
}

/// The id in a clone-id file and the git directory it is bound to.
fn read_clone_id(path: &Path) -> Option<(String, Option<String>)> {
    let text = fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let id = lines.next()?.trim();
    if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bound = lines.find_map(|l| l.strip_prefix("git-dir ").map(str::to_string));
    Some((id.to_string(), bound))
}

/// What tells this git directory from a copy of it: its device and inode
/// (a copy is a new folder; a rename keeps both). `None` where the
/// platform cannot say.
fn dir_identity(dir: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(dir).ok()?;
        Some(format!("{} {}", m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// A writer id: a readable prefix from the branch, and 8 hex digits of a
/// fingerprint of the clone id and the branch. One clone's branch is one
/// writer, so no two ever append to the same log file.
pub fn writer_id(clone_id: &str, branch: Option<&str>, worktree: Option<&str>) -> String {
    // A branch is checked out in one worktree at most, but any number of
    // worktrees can have a detached HEAD: those are told apart by name.
    let detached = match worktree {
        Some(name) if branch.is_none() => format!("(detached)\0{name}"),
        _ => "(detached)".to_string(),
    };
    let hashed = branch.unwrap_or(&detached);
    let branch = branch.unwrap_or("(detached)");
    let mut prefix: String = branch
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    prefix = prefix
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    prefix.truncate(24);
    let prefix = prefix.trim_end_matches('-');
    let prefix = if prefix.is_empty() { "writer" } else { prefix };
    let h = fingerprint(format!("{clone_id}\0{hashed}").as_bytes());
    format!("{prefix}-{:08x}", h >> 32)
}
