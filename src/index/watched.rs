//! The memory files and logs as the watcher says they changed: what a
//! query and a refresh read instead of stat'ing every file, when
//! `memoir watch` answers (`watch`). Without an answer, or with `reset`,
//! the callers list everything as they always did.

use crate::index::cache::{scopes_print, WatchMark};
use crate::log::files::LogFile;
use crate::model::stamp::Stamp;
use crate::store::{refuse_symlink, Store, StoreError};
use crate::watch::protocol::{Answer, Token};
use std::collections::BTreeMap;
use std::io;

/// What the watcher said about the files since a mark.
#[derive(Debug, Clone)]
pub(crate) enum Since {
    /// These changed since the mark (and nothing else did).
    Changes {
        /// The watcher's token now.
        token: Token,
        /// Memory files (in a configured scope folder) that changed.
        memory: Vec<String>,
        /// Log files that changed.
        logs: Vec<String>,
    },
    /// The watcher cannot say: list everything; `token` vouches for
    /// what comes after.
    Reset(Token),
    /// No watcher answered: list everything.
    Absent,
}

impl Since {
    /// Asks the store's watcher what changed since `mark` (none: since
    /// ever, which is `reset`). A mark taken under other scopes is none.
    pub(crate) fn ask(store: &Store, mark: Option<&WatchMark>) -> Since {
        let scopes = scopes_print(&store.config.scopes);
        let since = mark.filter(|m| m.scopes == scopes).map(|m| &m.token);
        match crate::watch::client::ask(&store.state, since) {
            None => Since::Absent,
            Some(Answer::Reset { token }) => Since::Reset(token),
            Some(Answer::Changes { token, paths }) if since.is_some() => {
                store
                    .stats
                    .watched
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let (memory, logs) = classify(store, paths);
                Since::Changes {
                    token,
                    memory,
                    logs,
                }
            }
            // Changes since nothing cannot be: scan.
            Some(Answer::Changes { token, .. }) => Since::Reset(token),
        }
    }

    /// The mark to save with files listed after this answer, if any.
    pub(crate) fn mark(&self, store: &Store) -> Option<WatchMark> {
        let token = match self {
            Since::Changes { token, .. } | Since::Reset(token) => *token,
            Since::Absent => return None,
        };
        Some(WatchMark {
            token,
            scopes: scopes_print(&store.config.scopes),
        })
    }
}

/// The changed paths a listing would have found: memory files directly
/// in a configured scope's folder, and logs; the rest (temporary files,
/// other folders) is nothing a query reads.
fn classify(store: &Store, paths: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut memory = Vec::new();
    let mut logs = Vec::new();
    for p in paths {
        let Some((dir, name)) = p.strip_prefix("memory/").and_then(|r| r.rsplit_once('/')) else {
            continue;
        };
        if !name.ends_with(".md") || name.starts_with('.') {
            continue;
        }
        if dir.starts_with("log/") {
            logs.push(p);
        } else if store.config.scopes.iter().any(|s| s == dir) {
            memory.push(p);
        }
    }
    (memory, logs)
}

/// The log files now: `recorded` with the changed ones stat'ed again
/// (as `log::files::log_files` would list them).
pub(crate) fn log_files(
    store: &Store,
    recorded: &BTreeMap<String, Stamp>,
    since: &Since,
) -> Result<Vec<LogFile>, StoreError> {
    let Since::Changes { logs, .. } = since else {
        return crate::log::files::log_files(store);
    };
    let mut now = recorded.clone();
    for rel in logs {
        match crate::log::files::log_file_at(store, rel)? {
            Some(f) => now.insert(f.rel, f.stamp),
            None => now.remove(rel),
        };
    }
    Ok(now
        .into_iter()
        .map(|(rel, stamp)| LogFile { rel, stamp })
        .collect())
}

/// Each changed memory file with its stamp now (`None`: gone), in path
/// order, as `store::listing::memory_files` would stamp it.
pub(crate) fn memory_stamps(
    store: &Store,
    paths: &[String],
) -> Result<Vec<(String, Option<Stamp>)>, StoreError> {
    // A scope folder turned into a link is refused as a listing refuses it.
    for scope in &store.config.scopes {
        let rel_dir = format!("memory/{scope}");
        refuse_symlink(&store.path(&rel_dir), &rel_dir)?;
    }
    store
        .stats
        .files_listed
        .fetch_add(paths.len(), std::sync::atomic::Ordering::Relaxed);
    let mut out = Vec::with_capacity(paths.len());
    for rel in paths {
        match std::fs::symlink_metadata(store.path(rel)) {
            Ok(m) => out.push((rel.clone(), Some(Stamp::of(&m)))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => out.push((rel.clone(), None)),
            Err(e) => {
                return Err(StoreError::Io {
                    path: store.path(rel),
                    source: e,
                })
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Every memory file with its stamp, as `store::listing::memory_files`
/// lists them: from the watcher's answer, `recorded` (the index's) with
/// the changed ones stat'ed again; else a listing of every folder.
pub(crate) fn memory_files(
    store: &Store,
    recorded: impl Iterator<Item = (String, Stamp)>,
    since: &Since,
) -> Result<Vec<(String, Stamp)>, StoreError> {
    let Since::Changes { memory, .. } = since else {
        return crate::store::listing::memory_files(store);
    };
    let mut now: BTreeMap<String, Stamp> = recorded.collect();
    for (rel, stamp) in memory_stamps(store, memory)? {
        match stamp {
            Some(s) => now.insert(rel, s),
            None => now.remove(&rel),
        };
    }
    Ok(now.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempStore;

    fn changes(store: &Store, paths: &[&str]) -> Since {
        let (memory, logs) = classify(store, paths.iter().map(|p| p.to_string()).collect());
        Since::Changes {
            token: Token {
                instance: 1,
                seq: 1,
            },
            memory,
            logs,
        }
    }

    #[test]
    fn the_changed_files_over_the_recorded_ones_are_what_a_listing_finds() {
        let mut t = TempStore::new();
        t.memory("project/a", "alpha").memory("project/b", "beta");
        let files = crate::store::listing::memory_files(&t.store).expect("listed");
        let logs = crate::log::files::log_files(&t.store).expect("logs");
        let recorded_logs: BTreeMap<String, Stamp> =
            logs.into_iter().map(|f| (f.rel, f.stamp)).collect();
        // An edit, a removal, a new memory (and its log entry), and what
        // no listing reads: a temporary file, a folder, a log's neighbour.
        t.write("memory/project/a.md", "edited by hand\n");
        t.remove("memory/project/b.md");
        t.memory("project/c", "gamma");
        t.write("memory/project/.a.md.memoir-1-0", "temporary");
        let log = t.log();
        let since = changes(
            &t.store,
            &[
                "memory/project/a.md",
                "memory/project/b.md",
                "memory/project/c.md",
                "memory/project/.a.md.memoir-1-0",
                "memory/project",
                "memory/nowhere/x.md",
                &log,
            ],
        );
        let Since::Changes { memory, logs, .. } = &since else {
            panic!("changes");
        };
        assert_eq!(memory.len(), 3, "{memory:?}");
        assert_eq!(logs, std::slice::from_ref(&log));
        let now = memory_files(&t.store, files.into_iter(), &since).expect("files");
        assert_eq!(
            now,
            crate::store::listing::memory_files(&t.store).expect("listed")
        );
        let now = log_files(&t.store, &recorded_logs, &since).expect("logs");
        let listed = crate::log::files::log_files(&t.store).expect("logs");
        let pairs = |v: Vec<LogFile>| -> Vec<(String, Stamp)> {
            v.into_iter().map(|f| (f.rel, f.stamp)).collect()
        };
        assert_eq!(pairs(now), pairs(listed));
    }
}
