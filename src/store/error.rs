//! Why a store operation failed: one error type for the core, whose kinds
//! the CLI maps to exit codes.

use crate::git::GitError;
use crate::local::lock::LockError;
use crate::model::config::{ConfigError, CONFIG_PATH};
use crate::model::event::LogError;
use crate::model::memory::MemoryError;
use crate::store::Failpoint;
use std::io;
use std::path::PathBuf;

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
    /// A human must decide first.
    #[error("{0}")]
    Decision(String),
    /// The store changed while the command read it (a git command beside
    /// memoir): nothing was written; running it again will do.
    #[error("{0}")]
    Busy(String),
    /// A conflict's resolution names a version that is none of its candidates.
    #[error("{id} is not a version of {key} in conflict (choose one of: {candidates})")]
    NoSuchVersion {
        /// The memory in conflict.
        key: String,
        /// The id given.
        id: String,
        /// The candidates' ids, comma-separated.
        candidates: String,
    },
    /// A bug: something memoir made could not be read back.
    #[error("internal error: {0}")]
    Internal(&'static str),
    /// A test's failpoint stopped the command (see [`Failpoint`]).
    #[error("failpoint {}: {}", .0.name(), .0.skipped())]
    Stopped(Failpoint),
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> StoreError {
        let path = path.into();
        move |source| StoreError::Io { path, source }
    }

    /// A store path that is a symbolic link, which memoir never follows.
    pub(crate) fn link(rel: &str) -> StoreError {
        StoreError::Invalid {
            path: rel.to_string(),
            line: None,
            message: crate::fs::safe_file::ReadError::Link.to_string(),
        }
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

    /// A store file that [`crate::fs::safe_file`] would not read.
    pub(crate) fn unreadable(
        rel: &str,
        e: crate::fs::safe_file::ReadError,
        cap: u64,
    ) -> StoreError {
        use crate::fs::safe_file::ReadError;
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

    pub(crate) fn log(path: &str, e: LogError) -> StoreError {
        StoreError::Invalid {
            path: path.to_string(),
            line: Some(e.line),
            message: e.message,
        }
    }

    pub(crate) fn config(e: ConfigError) -> StoreError {
        StoreError::Invalid {
            path: CONFIG_PATH.to_string(),
            line: e.line,
            message: e.message,
        }
    }
}
