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
    /// A log that does not parse (an entry's heading or metadata).
    #[error("{path}:{}: {}", source.line, source.message)]
    Log {
        /// Store-relative path of the log.
        path: String,
        /// Where and why.
        source: LogError,
    },
    /// `memory/config.yaml` that does not parse or names what cannot be.
    #[error("{CONFIG_PATH}{}: {}", .0.line.map(|l| format!(":{l}")).unwrap_or_default(), .0.message)]
    Config(#[source] ConfigError),
    /// A memory file that breaks the format (not the write policy: that
    /// is [`StoreError::Refused`]).
    #[error("{path}{}: {}", source.line.map(|l| format!(":{l}")).unwrap_or_default(), source.message)]
    Memory {
        /// Store-relative path of the file.
        path: String,
        /// Where and why.
        source: MemoryError,
    },
    /// A store path memoir will not read: a symbolic link, a folder or
    /// another file that is not a regular one.
    #[error("{path}: {source}")]
    Unreadable {
        /// Store-relative path.
        path: String,
        /// Which kind of path it is.
        source: crate::fs::safe_file::ReadError,
    },
    /// Other malformed input: an argument or a file that breaks the format.
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
    /// A conflict's resolution names a prefix that more than one of its
    /// versions starts with.
    #[error("{id} names more than one version of {key} in conflict (choose one of: {matches})")]
    AmbiguousVersion {
        /// The memory in conflict.
        key: String,
        /// The prefix given.
        id: String,
        /// The ids it starts, comma-separated.
        matches: String,
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
        StoreError::Unreadable {
            path: rel.to_string(),
            source: crate::fs::safe_file::ReadError::Link,
        }
    }

    /// Where the error is, when it names a place: the store-relative path
    /// (or the argument) and the 1-based line.
    pub fn location(&self) -> Option<(&str, Option<usize>)> {
        match self {
            StoreError::Log { path, source } => Some((path, Some(source.line))),
            StoreError::Config(e) => Some((CONFIG_PATH, e.line)),
            StoreError::Memory { path, source } => Some((path, source.line)),
            StoreError::Unreadable { path, .. } => Some((path, None)),
            StoreError::Invalid { path, line, .. } | StoreError::Refused { path, line, .. } => {
                Some((path, *line))
            }
            _ => None,
        }
    }

    /// Malformed input: a file that does not parse or breaks the format
    /// (not one the write policy refuses).
    pub fn is_malformed(&self) -> bool {
        matches!(
            self,
            StoreError::Log { .. }
                | StoreError::Config(_)
                | StoreError::Memory { .. }
                | StoreError::Unreadable { .. }
                | StoreError::Invalid { .. }
        )
    }

    /// What is wrong, without the path and line it names.
    pub fn detail(&self) -> String {
        match self {
            StoreError::Log { source, .. } => source.message.clone(),
            StoreError::Config(e) => e.message.clone(),
            StoreError::Memory { source, .. } => source.message.clone(),
            StoreError::Unreadable { source, .. } => source.to_string(),
            StoreError::Invalid { message, .. } | StoreError::Refused { message, .. } => {
                message.clone()
            }
            StoreError::Io { source, .. } => source.to_string(),
            e => e.to_string(),
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
            None => StoreError::Memory {
                path: path.to_string(),
                source: e.clone(),
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
            e => StoreError::Unreadable {
                path: rel.to_string(),
                source: e,
            },
        }
    }

    pub(crate) fn log(path: &str, e: LogError) -> StoreError {
        StoreError::Log {
            path: path.to_string(),
            source: e,
        }
    }

    pub(crate) fn config(e: ConfigError) -> StoreError {
        StoreError::Config(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// The typed kinds print as the one `Invalid` did (`path:line:
    /// message`), keep their cause as the source, and say where they are.
    #[test]
    fn typed_kinds_print_as_before_and_keep_their_cause() {
        let log = StoreError::log(
            "memory/log/2026-11-29/ada.md",
            LogError {
                line: 7,
                message: "metadata is not JSON".into(),
            },
        );
        assert_eq!(
            log.to_string(),
            "memory/log/2026-11-29/ada.md:7: metadata is not JSON"
        );
        assert_eq!(
            log.location(),
            Some(("memory/log/2026-11-29/ada.md", Some(7)))
        );
        assert!(log.source().is_some() && log.is_malformed());
        let config = StoreError::config(ConfigError {
            line: Some(3),
            message: "unknown key".into(),
        });
        assert_eq!(config.to_string(), "memory/config.yaml:3: unknown key");
        assert_eq!(config.detail(), "unknown key");
        let no_line = StoreError::config(ConfigError {
            line: None,
            message: "not a mapping".into(),
        });
        assert_eq!(no_line.to_string(), "memory/config.yaml: not a mapping");
        let link = StoreError::link("memory/project/db.md");
        assert_eq!(
            link.to_string(),
            "memory/project/db.md: is a symbolic link; memoir never follows links in a store"
        );
        assert_eq!(link.location(), Some(("memory/project/db.md", None)));
        let memory = StoreError::invalid(
            "memory/project/db.md",
            &MemoryError {
                line: Some(2),
                message: "no description".into(),
                rule: None,
            },
        );
        assert!(matches!(memory, StoreError::Memory { .. }));
        assert_eq!(memory.to_string(), "memory/project/db.md:2: no description");
        let refused = StoreError::invalid(
            "memory/project/db.md",
            &MemoryError {
                line: None,
                message: "no source".into(),
                rule: Some("source"),
            },
        );
        assert!(!refused.is_malformed());
    }
}
