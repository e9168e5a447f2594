//! The store lock: one exclusive `flock` on a sidecar file in the local state.
//!
//! The lock file is never replaced (a lock on a renamed-over inode would
//! protect nothing); the holder writes its pid into it so a waiter can say
//! who holds it.

use fs2::FileExt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A held store lock; released on drop (or when the process dies).
#[derive(Debug)]
pub struct StoreLock {
    file: File,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process held it for the whole timeout.
    #[error("the store is locked by another memoir process{}; gave up after {secs}s ({path})", holder.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Timeout {
        /// The lock file.
        path: PathBuf,
        /// The holder's pid, if it wrote one.
        holder: Option<u32>,
        /// How long we waited.
        secs: f64,
    },
    /// The lock file could not be opened.
    #[error("cannot open lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl StoreLock {
    /// Takes the lock at `path`, waiting up to `timeout`.
    pub fn acquire(path: &Path, timeout: Duration) -> Result<StoreLock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let start = Instant::now();
        let mut wait = Duration::from_millis(1);
        loop {
            if file.try_lock_exclusive().is_ok() {
                // Best effort: the pid only helps a waiter's message.
                let _ = file.set_len(0);
                let _ = file.seek(SeekFrom::Start(0));
                let _ = write!(file, "{}", std::process::id());
                return Ok(StoreLock { file });
            }
            if start.elapsed() >= timeout {
                let mut text = String::new();
                let _ = file.seek(SeekFrom::Start(0));
                let _ = file.read_to_string(&mut text);
                return Err(LockError::Timeout {
                    path: path.to_path_buf(),
                    holder: text.trim().parse().ok(),
                    secs: timeout.as_secs_f64(),
                });
            }
            std::thread::sleep(wait.min(timeout.saturating_sub(start.elapsed())));
            wait = (wait * 2).min(Duration::from_millis(20));
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}
