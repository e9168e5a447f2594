//! What a version commits and what it must pass, for every command that
//! commits one (`consolidate`, `rollback`) and for `check`, which asks
//! the same of the work tree: the store paths that differ from HEAD, the
//! gate on them (logs only grown, no secret memoir did not police, nothing
//! under `memory/` that is not a store file), and the repair of the views
//! a killed write left behind, which must not be committed as they are.

use crate::git::{self, CommitError};
use crate::index::Snapshot;
use crate::model::key::Key;
use crate::store::{Store, StoreError};

/// Brings the views a killed write left behind ([`unfinished_writes`]) up
/// to the logs, adding the paths repaired to `paths` (work-tree-relative,
/// sorted): a rebuild, which leaves hand edits alone. Nothing when there
/// are none (the common case costs a pass over the journal).
pub(crate) fn repair_unfinished_writes(
    store: &Store,
    snap: &Snapshot,
    paths: &mut Vec<String>,
) -> Result<(), StoreError> {
    if !unfinished_writes(store, snap) {
        return Ok(());
    }
    let prefix = store.prefix();
    let repaired = crate::change::rebuild::rebuild_locked(store, false, false)?;
    paths.extend(
        repaired
            .written
            .iter()
            .chain(&repaired.removed)
            .map(|rel| format!("{prefix}{rel}")),
    );
    if repaired.index_changed {
        paths.push(format!("{prefix}{}", crate::render::memory_md::MEMORY_MD));
    }
    paths.sort_unstable();
    paths.dedup();
    Ok(())
}

/// Did a write killed between its log entry and its view leave a view
/// behind? For each path memoir last wrote (the journal) whose memory the
/// logs have moved past, the file is still what memoir wrote then, or
/// gone. Only those few files are read: a path git changed since (a pull)
/// holds what the logs say, or someone's edit, not memoir's leftover.
fn unfinished_writes(store: &Store, snap: &Snapshot) -> bool {
    store.state.journal().into_iter().any(|(rel, wrote)| {
        let Some(key) = Key::from_rel_path(&rel) else {
            return false;
        };
        let logged = snap.key(&key).and_then(|s| s.view_hash);
        if logged == wrote {
            return false;
        }
        let now = store
            .read_memory_file(&rel)
            .ok()
            .map(|c| c.map(|c| crate::model::fingerprint::fingerprint(c.as_bytes())));
        match now {
            // Still memoir's old write (a stale view or a leftover).
            Some(found) if found == wrote => true,
            // Gone, though the logs hold a version memoir never wrote.
            Some(None) => logged.is_some(),
            _ => false,
        }
    })
}

/// Commits `paths` (see [`git::Session::commit`]); a version of
/// thousands of files (a consolidation, a rollback) says on a terminal
/// how many of their blobs are written.
pub(crate) fn commit(
    store: &Store,
    session: git::Session,
    paths: &[String],
    message: &str,
    sig: &git::Signature,
) -> Result<Option<String>, CommitError> {
    let large = paths.len() >= PROGRESS_FILES;
    let meter = store.meter("committing files", paths.len(), large);
    let made = session.commit(paths, message, sig, &|done, _| meter.advance(done));
    meter.finish();
    made
}

/// Files a version commits from which it says how far it is.
const PROGRESS_FILES: usize = 500;

/// What a version must not commit, checked before it writes anything:
/// a log that is not HEAD's log with entries appended (logs only grow:
/// an edit, a truncation or a deletion in the work tree), and a secret
/// in any text memoir did not police as it wrote it: a hand edit not
/// yet recorded, MEMORY.md's team text, log text appended by hand. A
/// memory file that is the view the logs give (`snap`) was policed
/// when its event was logged.
pub(crate) fn gate_commit(
    store: &Store,
    paths: &[String],
    snap: Option<&Snapshot>,
) -> Result<(), StoreError> {
    let prefix = store.prefix();
    let in_store: Vec<(&str, &str)> = paths
        .iter()
        .filter_map(|p| Some((p.as_str(), p.strip_prefix(prefix)?)))
        .collect();
    let logs: Vec<&str> = in_store
        .iter()
        .filter(|(_, rel)| rel.starts_with("memory/log/"))
        .map(|(p, _)| *p)
        .collect();
    let committed = store.repo().head_blobs(&logs)?;
    for (path, rel) in in_store {
        let log = rel.starts_with("memory/log/");
        if log && is_log_path(rel) {
            gate_log(store, rel, committed.get(path).map(Vec::as_slice))?;
        } else if log {
            gate_layout(store, rel)?;
        } else {
            gate_layout(store, rel)?;
            gate_view(store, rel, snap)?;
        }
    }
    Ok(())
}

/// A log's place: `memory/log/<YYYY-MM-DD>/<writer>.md`. Anything else
/// under `memory/log/` is no log, and [`gate_layout`] judges it.
fn is_log_path(rel: &str) -> bool {
    let Some(rest) = rel.strip_prefix("memory/log/") else {
        return false;
    };
    let Some((day, file)) = rest.split_once('/') else {
        return false;
    };
    crate::model::time::Date::parse(day).is_ok()
        && file.ends_with(".md")
        && !file.contains('/')
        && !file.starts_with('.')
}

/// A path about to be committed outside the logs is a store file: a
/// memory file (a regular file at `memory/<scope>/<name>.md`, or one
/// being deleted), MEMORY.md, the config, `.gitattributes` or a scope's
/// `.gitkeep`. Anything else under `memory/` (a folder named like a
/// memory file, a file in a folder of its own) would enter the store
/// around the policy, which no reader then checks.
fn gate_layout(store: &Store, rel: &str) -> Result<(), StoreError> {
    let fixed = [
        crate::render::memory_md::MEMORY_MD,
        crate::model::config::CONFIG_PATH,
        ".gitattributes",
    ];
    let keep = rel
        .strip_suffix("/.gitkeep")
        .and_then(|dir| dir.strip_prefix("memory/"))
        .is_some_and(|scope| store.has_scope(scope));
    // Gone: its deletion is committed (what the advice below asks for).
    let gone = store.path(rel).symlink_metadata().is_err();
    if fixed.contains(&rel) || keep || gone || rel == "memory/log/.gitkeep" {
        return Ok(());
    }
    let memory =
        Key::from_rel_path(rel).is_some_and(|k| k.rel_path() == rel && store.has_scope(&k.scope));
    let meta = store.path(rel).symlink_metadata();
    let file = meta.as_ref().map_or(true, |m| m.is_file());
    if memory && file {
        return Ok(());
    }
    Err(crate::policy::refused(
        "layout",
        rel,
        None,
        "is not a store file (a memory is a regular file memory/<scope>/<name>.md in a \
         configured scope); memoir does not commit it: move it out of memory/",
    ))
}

/// A view about to be committed holds no secret, unless memoir wrote it
/// itself (its content is what the logs give its memory: policed then).
fn gate_view(store: &Store, rel: &str, snap: Option<&Snapshot>) -> Result<(), StoreError> {
    let content = store.read(rel, None)?;
    let key = Key::from_rel_path(rel).filter(|k| k.rel_path() == rel);
    if let (Some(snap), Some(key)) = (snap, &key) {
        // A memory file is committed as the logs give it: a hand edit (or
        // deletion) not recorded would put in a version no log holds,
        // which every clone's rebuild then reports and undoes.
        let logged = snap.key(key).and_then(|s| s.view_hash);
        let now = content
            .as_deref()
            .map(|c| crate::model::fingerprint::fingerprint(c.as_bytes()));
        if now != logged {
            // A secret first: of everything wrong with it, the one to say.
            if let Some(content) = &content {
                crate::policy::memory::check_content_secrets(content, rel)?;
            }
            let what = if now.is_none() { "deleted" } else { "edited" };
            return Err(StoreError::Invalid {
                path: rel.to_string(),
                line: None,
                message: format!(
                    "{what} by hand and not recorded: `memoir record` logs it, `memoir rebuild \
                     --force` restores what the logs say; nothing was committed"
                ),
            });
        }
        return Ok(());
    }
    match content {
        Some(content) => crate::policy::memory::check_content_secrets(&content, rel),
        None => Ok(()),
    }
}

/// A log about to be committed is its committed bytes (`committed`, none
/// for a new log) plus appended entries (or exactly the rewrite a `redact`
/// event lists), and what it gained holds no secret.
fn gate_log(store: &Store, rel: &str, committed: Option<&[u8]>) -> Result<(), StoreError> {
    let now = match crate::fs::safe_file::read(&store.path(rel), crate::store::MAX_LOG_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) if committed.is_some() => {
            return Err(StoreError::Invalid {
                path: rel.to_string(),
                line: None,
                message: "deleted since the last commit, and logs are never deleted: \
                          `git checkout -- <path>` restores it"
                    .into(),
            })
        }
        Ok(None) => return Ok(()),
        Err(e) => return Err(StoreError::unreadable(rel, e, crate::store::MAX_LOG_BYTES)),
    };
    let old = committed.unwrap_or_default();
    let from =
        crate::change::append_only::grown_from(store, old, &now, &mut None)?.ok_or_else(|| {
            let same = old.iter().zip(&now).take_while(|(a, b)| a == b).count();
            StoreError::Invalid {
                path: rel.to_string(),
                line: Some(old[..same].iter().filter(|&&b| b == b'\n').count() + 1),
                message: "rewritten since the last commit, and logs only grow (a \
                      `memoir redact` rewrite passes when its redact entry lists \
                      it): `git checkout -- <path>` restores it"
                    .into(),
            }
        })?;
    let added = String::from_utf8_lossy(now.get(from..).unwrap_or_default());
    if let Err(StoreError::Refused {
        rule,
        line,
        message,
        ..
    }) = crate::policy::check_secrets(&crate::model::event::scannable_text(&added), rel)
    {
        let before = now[..from.min(now.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        return Err(StoreError::Refused {
            rule,
            path: rel.to_string(),
            line: line.map(|l| l + before),
            message,
        });
    }
    gate_entries_added(store, rel, &now, from)
}

/// What a log gained (from byte `from`) holds as `check --base` asks of
/// it: no entry no reader can use that the team has not accepted, and no
/// memory whose YAML, once read, holds a secret.
fn gate_entries_added(store: &Store, rel: &str, now: &[u8], from: usize) -> Result<(), StoreError> {
    let text = String::from_utf8_lossy(now);
    let parsed = crate::log::files::parse_log(store, rel, &text)?;
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    for q in parsed.quarantined.iter().filter(|q| q.span.start >= from) {
        let id = crate::log::read::quarantine_id(&text, q);
        if !crate::log::read::is_accepted(store, &id) {
            return Err(StoreError::Refused {
                rule: "log".into(),
                path: rel.to_string(),
                line: Some(q.line),
                message: format!(
                    "a malformed entry no reader can use (`memoir check` says why); memoir commits \
                     it only once listed: {id} under `accepted_entries:` in memory/config.yaml"
                ),
            });
        }
    }
    for (e, span) in parsed.events.iter().zip(&parsed.spans) {
        if span.start >= from {
            let (rule, message) = match crate::policy::memory::check_logged(&store.config, e) {
                Ok(()) => continue,
                Err(StoreError::Refused { rule, message, .. }) => (rule, message),
                Err(other) => ("format".to_string(), format!("its memory: {other}")),
            };
            return Err(StoreError::Refused {
                rule,
                path: rel.to_string(),
                line: Some(line_of(span.start)),
                message,
            });
        }
    }
    Ok(())
}

/// The store files (store-relative: MEMORY.md, memory/**) git's index
/// holds unmerged in a merge in progress; none outside one.
pub(crate) fn unmerged_store_files(store: &Store) -> Result<Vec<String>, StoreError> {
    let repo = store.repo();
    if !repo.merging() {
        return Ok(Vec::new());
    }
    let prefix = store.prefix();
    Ok(repo
        .unmerged_paths(
            &format!("{prefix}{}", crate::render::memory_md::MEMORY_MD),
            &format!("{prefix}memory/"),
        )?
        .into_iter()
        .filter_map(|p| p.strip_prefix(prefix).map(str::to_string))
        .collect())
}

/// The logs among `files` (store-relative paths).
pub(crate) fn logs_among(files: &[String]) -> Vec<&String> {
    files
        .iter()
        .filter(|p| p.starts_with("memory/log/") && p.ends_with(".md"))
        .collect()
}

/// Work-tree-relative paths of store files (MEMORY.md, memory/**) that
/// differ from HEAD, or that HEAD has and the work tree lost; sorted.
pub(crate) fn changed_store_paths(store: &Store) -> Result<Vec<String>, StoreError> {
    let prefix = store.prefix();
    // Temporary files of an interrupted write are not the store's.
    let keep = |name: &str| !name.starts_with('.') || name == ".gitkeep";
    let repo = store.repo();
    let mut paths = repo.changed_paths(
        &format!("{prefix}{}", crate::render::memory_md::MEMORY_MD),
        &format!("{prefix}memory/"),
        &keep,
    )?;
    let attributes = format!("{prefix}.gitattributes");
    if attributes_to_commit(store, &repo, &attributes)? {
        paths.push(attributes);
        paths.sort_unstable();
    }
    Ok(paths)
}

/// Should a version commit the store's `.gitattributes`? When what it
/// has beyond HEAD's is memoir's lines only (`init` wrote them; a clone
/// with `core.autocrlf` needs them committed, or it converts the logs'
/// line endings). Anyone else's uncommitted edit of it is theirs to
/// commit.
fn attributes_to_commit(store: &Store, repo: &git::Repo, path: &str) -> Result<bool, StoreError> {
    let cap = 1 << 20;
    let now = match crate::fs::safe_file::read(&store.path(".gitattributes"), cap) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => return Ok(false),
    };
    let committed = repo.head_blobs(&[path])?;
    let old = committed
        .get(path)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    if old == now {
        return Ok(false);
    }
    let memoirs = |line: &str| {
        let line = line.trim();
        line.is_empty()
            || line.starts_with("# memoir")
            || line.starts_with("# view files merge")
            || crate::store::GITATTRIBUTES.contains(&line)
    };
    let kept = old.lines().all(|l| now.lines().any(|n| n == l));
    let added = now.lines().filter(|l| !old.lines().any(|o| o == *l));
    Ok(kept && added.clone().all(memoirs) && added.count() > 0)
}

/// Why a change that ends in a version commit (`consolidate`, `rollback`)
/// stopped before writing anything.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    /// A git precondition failed.
    #[error(transparent)]
    Git(#[from] CommitError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Starts a change that ends in a commit: the store lock first, so that
/// a second one waits for the first (or gives up with exit 5); then,
/// unless only planning, git's preconditions and its index lock, before
/// anything is appended.
pub(crate) fn begin_version(
    store: &Store,
    dry_run: bool,
    author: Option<(String, String)>,
    allow_detached: bool,
) -> Result<
    (
        crate::local::lock::StoreLock,
        Option<(git::Session, git::Signature)>,
    ),
    VersionError,
> {
    let lock = store.lock()?;
    let session = if dry_run {
        None
    } else {
        Some(store.repo().begin(
            author,
            allow_detached,
            &store.state.path.join("git-index-lock-owner"),
        )?)
    };
    Ok((lock, session))
}

impl From<crate::git::GitError> for VersionError {
    fn from(e: crate::git::GitError) -> Self {
        VersionError::Store(StoreError::Git(e))
    }
}
