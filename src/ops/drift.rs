//! Whole-store commands: `check`, `rebuild`, `record`.
//!
//! Each compares the views replay says should exist with the files on disk.
//! A difference is a drift of one kind: a view memoir left behind (a crash
//! between the log append and the view write; the journal says the file is
//! what memoir last wrote) or a change by hand. `rebuild` repairs the first
//! and never destroys the second (unless its content is in the logs, or
//! `--force`); `record` turns the second into events.

use crate::log::replay::{Keep, Replay};
use crate::model::event::{Event, Op};
use crate::model::fingerprint::fingerprint;
use crate::model::key::Key;
use crate::model::memory::{self, yaml_fields, Memory};
use crate::policy::memory::check_memory;
use crate::policy::memory::validate_file;
use crate::render::memory_md::{self, INDEX_PATH};
use crate::store::{Ctx, Store, StoreError};
use serde_yaml::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// How a memory file differs from what replaying the logs gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftKind {
    /// The file is what memoir last wrote, but the logs moved on (a crash).
    Stale,
    /// The file should exist, and memoir never finished writing it (a crash).
    Missing,
    /// The file should be gone, and is what memoir last wrote (a crash).
    Leftover,
    /// The file was changed by hand.
    Edited,
    /// The file was added by hand.
    Added,
    /// The file was deleted by hand.
    Deleted,
    /// git merged the file as text (conflict markers, or the memory's
    /// versions have forked): the logs settle it.
    Merged,
    /// git converted its line endings on checkout (`core.autocrlf` in a
    /// clone made before the store's `-text` attributes were committed):
    /// the view, with CRLF.
    Converted,
}

impl DriftKind {
    /// A short name for output.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftKind::Stale => "stale",
            DriftKind::Missing => "missing",
            DriftKind::Leftover => "leftover",
            DriftKind::Edited => "edited",
            DriftKind::Added => "added",
            DriftKind::Deleted => "deleted",
            DriftKind::Merged => "merged",
            DriftKind::Converted => "converted",
        }
    }

    /// Did memoir leave this behind (as opposed to a person)?
    pub fn is_memoirs(self) -> bool {
        matches!(
            self,
            DriftKind::Stale
                | DriftKind::Missing
                | DriftKind::Leftover
                | DriftKind::Merged
                | DriftKind::Converted
        )
    }
}

/// One memory file that is not what replay says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The memory.
    pub key: Key,
    /// Its file.
    pub path: String,
    /// What happened.
    pub kind: DriftKind,
    /// The file's current content appears as a version in the logs, so
    /// overwriting it loses nothing.
    pub in_logs: bool,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; `check` still passes.
    Warning,
    /// `check` fails.
    Error,
}

/// One finding of `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// Store-relative path.
    pub path: String,
    /// 1-based line, when there is one.
    pub line: Option<usize>,
    /// Which rule: `log`, `schema`, `policy`, `drift:<kind>`, `index`, `budget`, `conflict`, ….
    pub rule: String,
    /// What is wrong, and what to do.
    pub message: String,
}

impl Problem {
    /// The error a memory file's format or the write policy gives it.
    fn of_file(path: &str, e: &StoreError) -> Problem {
        let (line, rule, message) = match e {
            StoreError::Invalid { line, message, .. } => (*line, "format".into(), message.clone()),
            StoreError::Refused {
                rule,
                line,
                message,
                ..
            } => (*line, format!("policy:{rule}"), message.clone()),
            e => (None, "format".into(), e.to_string()),
        };
        Problem {
            severity: Severity::Error,
            path: path.to_string(),
            line,
            rule,
            message,
        }
    }
}

/// What `check` found.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Every finding, errors first.
    pub problems: Vec<Problem>,
    /// Memory files checked.
    pub memories: usize,
    /// Log events read.
    pub events: usize,
}

impl CheckReport {
    /// Does any finding fail the check?
    pub fn failed(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// What `rebuild` did (or, with `--check`, would do).
#[derive(Debug, Clone, Default)]
pub struct RebuildReport {
    /// Files written.
    pub written: Vec<String>,
    /// Files removed.
    pub removed: Vec<String>,
    /// Hand changes left alone (need `--force`).
    pub refused: Vec<Drift>,
    /// Files that could not be read (a link, bad UTF-8, a name that is not
    /// UTF-8), with why; left alone (need `--force`).
    pub unreadable: Vec<(String, String)>,
    /// MEMORY.md changed.
    pub index_changed: bool,
}

/// One change `record` turned into an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The memory.
    pub key: Key,
    /// What it saw.
    pub kind: DriftKind,
    /// The event written.
    pub op: Op,
    /// Its id.
    pub id: String,
    /// Fields `record` filled in and wrote back to the file.
    pub filled: Vec<String>,
}

/// The store as read in full: logs replayed and every memory file seen.
/// Files are kept as fingerprints and summaries, not contents, so that a
/// scan of a large store stays small; what needs a file's text reads it.
struct Scan {
    replay: Replay,
    issues: Vec<crate::log::files::LogIssue>,
    files: BTreeMap<String, Result<Seen, StoreError>>,
    journal: HashMap<String, Option<u64>>,
    /// Format and policy problems of the files (when asked for).
    problems: Vec<Problem>,
}

/// What a scan keeps of one memory file.
struct Seen {
    /// Fingerprint of its content.
    hash: u64,
    /// It holds git conflict markers.
    markers: bool,
    /// Fingerprint of what git's `core.autocrlf` converted it from, if it
    /// is such a conversion.
    lf_hash: Option<u64>,
    /// What it says, if it is a valid memory.
    summary: Option<memory::Summary>,
}

impl Scan {
    /// MEMORY.md's generated block for the memory files as this scan read
    /// them, but for those `rewritten` since. Ranked on what the summaries
    /// say (borrowed, not copied), keys made only for the most valuable, as
    /// MEMORY.md's cut is made from the index's records.
    fn index_block(&self, rewritten: &Rewritten, budget: usize) -> memory_md::Block {
        type Rank<'a> = (u8, f64, i64, (&'a str, &'a str));
        let mut unchanged: Vec<(Rank<'_>, &str, &memory::Summary)> = self
            .files
            .iter()
            .filter(|(rel, _)| !rewritten.changed.contains(rel.as_str()))
            .filter_map(|(rel, seen)| {
                let s = seen.as_ref().ok()?.summary.as_ref()?;
                let rank = memory_md::type_rank(&s.kind);
                Some((
                    (
                        rank,
                        s.confidence,
                        s.updated,
                        crate::index::snapshot::split_key(rel)?,
                    ),
                    rel.as_str(),
                    s,
                ))
            })
            .collect();
        let total = unchanged.len() + rewritten.valid;
        if unchanged.len() > budget {
            unchanged.select_nth_unstable_by(budget, |a, b| memory_md::rank_order(&a.0, &b.0));
            unchanged.truncate(budget);
        }
        let keys: Vec<(Key, &memory::Summary)> = unchanged
            .iter()
            .filter_map(|(_, rel, s)| Some((Key::from_rel_path(rel)?, *s)))
            .collect();
        let now: Vec<(&Key, &memory::Summary)> = keys
            .iter()
            .map(|(k, s)| (k, *s))
            .chain(rewritten.best.iter().map(|(k, s)| (k, s)))
            .collect();
        memory_md::render_chosen(now, total, budget)
    }
    fn drifts(&self) -> Vec<Drift> {
        let mut paths: BTreeSet<String> = self.files.keys().cloned().collect();
        paths.extend(
            self.replay
                .memories
                .iter()
                .filter(|(_, v)| v.view.is_some())
                .map(|(k, _)| k.rel_path()),
        );
        let mut out = Vec::new();
        for rel in paths {
            let Some(key) = Key::from_rel_path(&rel) else {
                continue;
            };
            let view = self.replay.view_print(&key);
            let file = match self.files.get(&rel) {
                Some(Ok(seen)) => Some(seen),
                Some(Err(_)) => continue,
                None => None,
            };
            let journal = self.journal.get(&rel);
            let memoir_wrote = |hash: u64| journal == Some(&Some(hash));
            let kind = match (view, file) {
                (Some(v), Some(f)) if v == f.hash => continue,
                (Some(_), Some(f)) if memoir_wrote(f.hash) => DriftKind::Stale,
                (Some(v), Some(f)) if f.lf_hash == Some(v) => DriftKind::Converted,
                // git's text merge (markers), or a fork whose every version
                // is in the logs: nothing of the file's content can be lost.
                (Some(_), Some(f))
                    if f.markers || self.replay.memories.get(&key).is_some_and(|v| v.conflict) =>
                {
                    DriftKind::Merged
                }
                (Some(_), Some(_)) => DriftKind::Edited,
                (Some(v), None) if memoir_wrote(v) => DriftKind::Deleted,
                (Some(_), None) => DriftKind::Missing,
                (None, Some(f)) if memoir_wrote(f.hash) => DriftKind::Leftover,
                (None, Some(_)) => DriftKind::Added,
                (None, None) => continue,
            };
            let in_logs = file.is_some_and(|f| self.replay.has_version(&key, f.hash));
            out.push(Drift {
                key,
                path: rel,
                kind,
                in_logs,
            });
        }
        out
    }
}

/// The memory files a rebuild writes or removes, as MEMORY.md weighs them:
/// every path changed, and the summaries of the most valuable written (the
/// block never shows more than its budget, so no more are kept: a rebuild
/// after every view was deleted writes tens of thousands).
struct Rewritten {
    /// Paths written or removed.
    changed: std::collections::HashSet<String>,
    best: Vec<(Key, memory::Summary)>,
    /// Written files that parse.
    valid: usize,
    budget: usize,
}

impl Rewritten {
    fn new(budget: usize) -> Rewritten {
        Rewritten {
            changed: Default::default(),
            best: Vec::new(),
            valid: 0,
            budget,
        }
    }

    fn written(&mut self, rel: &str, key: &Key, summary: Option<memory::Summary>) {
        self.changed.insert(rel.to_string());
        let Some(summary) = summary else { return };
        self.valid += 1;
        self.best.push((key.clone(), summary));
        self.prune(2 * self.budget.max(1));
    }

    /// Adds what another part of the same rebuild wrote.
    fn merge(&mut self, other: Rewritten) {
        self.changed.extend(other.changed);
        self.valid += other.valid;
        self.best.extend(other.best);
        self.prune(2 * self.budget.max(1));
    }

    /// Keeps only the `budget` most valuable once there are over `limit`.
    fn prune(&mut self, limit: usize) {
        if self.best.len() > limit {
            self.best.select_nth_unstable_by(self.budget, |a, b| {
                memory_md::value_order(&(&a.0, &a.1), &(&b.0, &b.1))
            });
            self.best.truncate(self.budget);
        }
    }
}

/// The append-only and secrets checks of the logs since `base`.
fn logs_since(store: &Store, base: &str) -> Result<Vec<Problem>, StoreError> {
    let repo = crate::git::discover(&store.root)?;
    let prefix = store.workdir_prefix(&repo.workdir);
    let (commit, at_base) = crate::git::files_at(
        &repo.workdir,
        base,
        &format!("{prefix}{INDEX_PATH}"),
        &format!("{prefix}memory/log/"),
        &|path: &str| crate::store::read_cap(path.strip_prefix(&prefix).unwrap_or(path)),
    )?;
    let short = &commit[..commit.len().min(12)];
    let mut out = Vec::new();
    let mut problem = |path: &str, line: Option<usize>, rule: &str, message: String| {
        out.push(Problem {
            severity: Severity::Error,
            path: path.to_string(),
            line,
            rule: rule.to_string(),
            message,
        });
    };
    let mut seen = BTreeSet::new();
    let mut listing: Option<HashMap<String, String>> = None;
    for (path, old) in &at_base {
        let Some(rel) = path
            .strip_prefix(&prefix)
            .filter(|r| r.starts_with("memory/log/"))
        else {
            continue;
        };
        seen.insert(rel.to_string());
        let now = match std::fs::read(store.path(rel)) {
            Ok(b) => b,
            Err(_) => {
                problem(
                    rel,
                    None,
                    "append-only",
                    format!("deleted since {short}; logs are never deleted"),
                );
                continue;
            }
        };
        let mut from = old.len();
        if !now.starts_with(old) {
            // The one rewrite allowed: exactly what a `redact` event lists.
            if listing.is_none() {
                listing = Some(crate::ops::redact::redaction_listing(store)?);
            }
            let redacted = crate::ops::redact::accepts(
                &String::from_utf8_lossy(old),
                &String::from_utf8_lossy(&now),
                listing.as_ref().unwrap_or(&HashMap::new()),
            );
            match redacted {
                Some(at) => from = at,
                None => {
                    let same = old.iter().zip(&now).take_while(|(a, b)| a == b).count();
                    let line = old[..same].iter().filter(|&&b| b == b'\n').count() + 1;
                    problem(
                        rel,
                        Some(line),
                        "append-only",
                        format!("rewritten since {short} (logs only grow); a git revert or an edit? use `memoir rollback`"),
                    );
                    continue;
                }
            }
        }
        let added = String::from_utf8_lossy(now.get(from..).unwrap_or_default());
        let offset = now[..from.min(now.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        for f in crate::policy::secrets::find_secrets(&added) {
            problem(
                rel,
                Some(offset + f.line),
                &format!("policy:secret:{}", f.rule),
                format!(
                    "looks like a secret ({}) added since {short} (value not shown)",
                    f.rule
                ),
            );
        }
        let now_text = String::from_utf8_lossy(&now);
        for (line, rule) in parsed_secrets_after(store, rel, &now_text, offset)? {
            problem(rel, Some(line), &format!("policy:{rule}"), format!("an entry added since {short} holds a secret once its YAML is read (value not shown)"));
        }
        for line in malformed_after(store, rel, &now_text, offset)? {
            problem(rel, Some(line), "log", format!("a malformed entry added since {short}: every reader skips it (`memoir check` says why)"));
        }
    }
    for f in crate::log::files::log_files(store)? {
        if seen.contains(&f.rel) {
            continue;
        }
        let text = store.read(&f.rel, None)?.unwrap_or_default();
        for (line, rule) in parsed_secrets_after(store, &f.rel, &text, 0)? {
            problem(&f.rel, Some(line), &format!("policy:{rule}"), format!("an entry added since {short} holds a secret once its YAML is read (value not shown)"));
        }
        for line in malformed_after(store, &f.rel, &text, 0)? {
            problem(&f.rel, Some(line), "log", format!("a malformed entry added since {short}: every reader skips it (`memoir check` says why)"));
        }
        for s in crate::policy::secrets::find_secrets(&text) {
            problem(
                &f.rel,
                Some(s.line),
                &format!("policy:secret:{}", s.rule),
                format!(
                    "looks like a secret ({}) added since {short} (value not shown)",
                    s.rule
                ),
            );
        }
    }
    Ok(out)
}

/// The first lines of the entries of the log `text` that start after
/// line `after` whose memory holds a secret once its YAML is read (the
/// scan of the text cannot see through every escape), with the rule.
fn parsed_secrets_after(
    store: &Store,
    rel: &str,
    text: &str,
    after: usize,
) -> Result<Vec<(usize, String)>, StoreError> {
    let parsed = crate::log::files::parse_log(store, rel, text)?;
    let mut out = Vec::new();
    for (e, span) in parsed.events.iter().zip(&parsed.spans) {
        let line = text[..span.start].matches('\n').count() + 1;
        if line <= after || !matches!(e.op, Op::Remember | Op::Propose | Op::Resolve) {
            continue;
        }
        if let Err(StoreError::Refused { rule, .. }) =
            crate::policy::memory::check_content_secrets(&e.body, rel)
        {
            out.push((line, rule));
        }
    }
    Ok(out)
}

/// The first lines of the quarantined entries of the log `text` that
/// start after line `after`: a change must not add one (a reader skips
/// it for ever).
fn malformed_after(
    store: &Store,
    rel: &str,
    text: &str,
    after: usize,
) -> Result<Vec<usize>, StoreError> {
    Ok(crate::log::files::parse_log(store, rel, text)?
        .quarantined
        .iter()
        .map(|q| q.line.max(q.error.line))
        .filter(|&line| line > after)
        .collect())
}

/// Removes the temporary files (`.<name>.memoir-<pid>`) of writes that
/// were killed before their rename. Called under the store lock, so no
/// live write owns one.
fn remove_temporary_files(store: &Store) {
    for scope in &store.config.scopes {
        let Ok(entries) = std::fs::read_dir(store.path(&format!("memory/{scope}"))) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.')
                && name.contains(".memoir-")
                && e.file_type().is_ok_and(|t| t.is_file())
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Folders under `memory/` that are neither a configured scope nor the
/// logs, each with the markdown files in it.
fn unknown_scopes(store: &Store) -> Vec<(String, Vec<String>)> {
    let names = |dir: &std::path::Path, dirs: bool| -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() == dirs))
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| !n.starts_with('.'))
            .collect();
        out.sort();
        out
    };
    names(&store.path("memory"), true)
        .into_iter()
        .filter(|n| n != "log" && !store.has_scope(n))
        .map(|n| {
            let folder = format!("memory/{n}");
            let files = names(&store.path(&folder), false)
                .into_iter()
                .filter(|f| f.ends_with(".md"))
                .map(|f| format!("{folder}/{f}"))
                .collect();
            (n, files)
        })
        .collect()
}

/// Every memory file that differs from what replaying the logs gives,
/// with the replay itself: one read of the whole store.
pub fn drifts(store: &Store) -> Result<(Replay, Vec<Drift>), StoreError> {
    let scan = scan(store, false, Keep::Views)?;
    let drifts = scan.drifts();
    Ok((scan.replay, drifts))
}

/// Replays the logs (keeping the text of `keep`) and reads every memory
/// file; with `police`, checks each file's format and write policy as it
/// is read.
fn scan(store: &Store, police: bool, keep: Keep) -> Result<Scan, StoreError> {
    // The logs and the files are read side by side, on two cores.
    let (replayed, files) = std::thread::scope(|s| {
        let files = s.spawn(|| scan_files(store, police));
        let replayed =
            crate::log::read::replay_keeping(store, Vec::new(), keep).and_then(|(mut r, w)| {
                if keep == Keep::Views {
                    let missing = r.missing_views();
                    crate::log::read::restore(store, &mut r, &missing)?;
                }
                Ok((r, w))
            });
        (replayed, files.join())
    });
    let (replay, issues) = replayed?;
    let (files, problems) = files.map_err(|_| StoreError::Io {
        path: store.path("memory"),
        source: std::io::Error::other("a thread reading memory files failed"),
    })??;
    Ok(Scan {
        replay,
        issues,
        files,
        journal: store.state.journal(),
        problems,
    })
}

/// Every memory file, as a scan keeps it (see [`scan`]).
#[allow(clippy::type_complexity)]
fn scan_files(
    store: &Store,
    police: bool,
) -> Result<(BTreeMap<String, Result<Seen, StoreError>>, Vec<Problem>), StoreError> {
    let mut files = BTreeMap::new();
    let mut problems = Vec::new();
    for (rel, _) in crate::index::refresh::memory_files(store)? {
        let content = store
            .read_memory_file(&rel)
            .and_then(|c| c.ok_or_else(|| StoreError::NoSuchMemory(rel.clone())));
        let seen = content.map(|c| {
            let parsed = validate_file(&c, &rel);
            if police {
                match &parsed {
                    Ok(m) => {
                        if let Err(e) = check_memory(store, m, &c, &rel) {
                            problems.push(Problem::of_file(&rel, &e));
                        }
                    }
                    Err(e) => problems.push(Problem::of_file(&rel, e)),
                }
            }
            Seen {
                hash: fingerprint(c.as_bytes()),
                markers: crate::integration::merge::has_conflict_markers(&c),
                lf_hash: crate::model::text::git_crlf_undone(&c).map(|t| fingerprint(t.as_bytes())),
                summary: parsed.ok().map(|m| memory::Summary::of(&m)),
            }
        });
        if let (true, Err(e)) = (police, &seen) {
            problems.push(Problem::of_file(&rel, e));
        }
        files.insert(rel, seen);
    }
    Ok((files, problems))
}

/// Checks the whole store: logs, memory files, drift, index, budget.
pub fn check(store: &Store) -> Result<CheckReport, StoreError> {
    check_against(store, None)
}

/// [`check`], and with `base` (a revision, for CI on a pull
/// request) also: every log at `base` is a prefix of the same log now
/// (append-only; none deleted or rewritten), and what the logs gained
/// since holds no secret.
pub fn check_against(store: &Store, base: Option<&str>) -> Result<CheckReport, StoreError> {
    let mut report = CheckReport::default();
    let mut push = |severity, path: &str, line, rule: &str, message: String| {
        report.problems.push(Problem {
            severity,
            path: path.to_string(),
            line,
            rule: rule.to_string(),
            message,
        })
    };
    let mut scan = match scan(store, true, Keep::Prints) {
        Ok(s) => s,
        Err(StoreError::Invalid {
            path,
            line,
            message,
        }) => {
            push(Severity::Error, &path, line, "format", message);
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    if let Ok(Some(reverted)) = crate::git::head_reverts_a_version(&store.root) {
        push(
            Severity::Error,
            "memory/log",
            None,
            "git-revert",
            format!(
                "HEAD is a `git revert` of memoir version {}, which deleted log entries (logs are append-only); \
                 undo the revert and use `memoir rollback {}^` instead",
                &reverted[..reverted.len().min(12)],
                &reverted[..reverted.len().min(12)]
            ),
        );
    }
    for issue in &scan.issues {
        let severity = if issue.error {
            Severity::Error
        } else {
            Severity::Warning
        };
        push(
            severity,
            &issue.path,
            issue.line,
            "log",
            issue.message.clone(),
        );
    }
    for (name, files) in unknown_scopes(store) {
        let message = format!(
            "unknown scope `{name}` (configured: {})",
            store.config.scopes.join(", ")
        );
        if files.is_empty() {
            push(
                Severity::Error,
                &format!("memory/{name}"),
                None,
                "scope",
                message.clone(),
            );
        }
        for f in files {
            push(Severity::Error, &f, None, "scope", message.clone());
        }
    }
    for p in std::mem::take(&mut scan.problems) {
        push(p.severity, &p.path, p.line, &p.rule, p.message);
    }
    report.memories = scan.files.len();
    report.events = scan.replay.event_count();
    for d in scan.drifts() {
        let message = match d.kind {
            DriftKind::Stale => "stale view left by an interrupted write; `memoir rebuild` repairs it".to_string(),
            DriftKind::Missing => "missing: an interrupted write never created it; `memoir rebuild` repairs it".to_string(),
            DriftKind::Leftover => "should be gone (forgotten) but an interrupted write left it; `memoir rebuild` removes it".to_string(),
            DriftKind::Edited => "edited by hand; `memoir record` keeps the edit, `memoir rebuild --force` discards it".to_string(),
            DriftKind::Added => "added by hand; `memoir record` adopts it".to_string(),
            DriftKind::Deleted => "deleted by hand; `memoir record` forgets it, `memoir rebuild` restores it".to_string(),
            DriftKind::Merged => "merged as text by git (a merge without memoir's merge driver); `memoir rebuild` settles it from the merged logs".to_string(),
            DriftKind::Converted => "line endings converted by git (core.autocrlf, and the store's .gitattributes not committed yet); `memoir rebuild` restores it".to_string(),
        };
        push(
            Severity::Error,
            &d.path,
            None,
            &format!("drift:{}", d.kind.as_str()),
            message,
        );
    }
    for (key, v) in &scan.replay.memories {
        if v.conflict {
            push(
                Severity::Warning,
                &key.rel_path(),
                None,
                "conflict",
                format!("{} versions disagree; the file shows their common ancestor until `memoir resolve {key}` decides", v.heads.len()),
            );
        }
    }
    let budget = store.config.index_budget;
    let block = scan.index_block(&Rewritten::new(budget), budget);
    let current = store.read(INDEX_PATH, None)?;
    // The team's text around the generated block is committed with the
    // store: held to the same policy.
    if let Some(text) = &current {
        for f in crate::policy::secrets::find_secrets(text) {
            push(
                Severity::Error,
                INDEX_PATH,
                Some(f.line),
                &format!("policy:secret:{}", f.rule),
                format!(
                    "looks like a secret ({}); memory must never hold one (value not shown)",
                    f.rule
                ),
            );
        }
    }
    match &current {
        None => push(
            Severity::Error,
            INDEX_PATH,
            None,
            "index",
            "missing; `memoir reindex` writes it".into(),
        ),
        Some(text) if *text != memory_md::splice(text, &block.text) => push(
            Severity::Error,
            INDEX_PATH,
            None,
            "index",
            "out of date with the memory files; `memoir reindex` regenerates it".into(),
        ),
        _ => {}
    }
    if block.omitted > 0 {
        push(
            Severity::Warning,
            INDEX_PATH,
            None,
            "budget",
            format!(
                "{} memories do not fit the index budget of {} lines; consolidate, or raise `index_budget`",
                block.omitted, store.config.index_budget
            ),
        );
    }
    if let Some(base) = base {
        for p in logs_since(store, base)? {
            report.problems.push(p);
        }
    }
    report
        .problems
        .sort_by(|a, b| b.severity.cmp(&a.severity).then(a.path.cmp(&b.path)));
    Ok(report)
}

/// Regenerates memory files and MEMORY.md from the logs. Stale and
/// missing views are repaired; hand changes whose content exists nowhere
/// in the logs are left alone unless `force`.
pub fn rebuild(store: &Store, force: bool, dry_run: bool) -> Result<RebuildReport, StoreError> {
    let _lock = store.lock()?;
    rebuild_locked(store, force, dry_run)
}

/// [`rebuild`] for a caller that holds the store lock.
pub(crate) fn rebuild_locked(
    store: &Store,
    force: bool,
    dry_run: bool,
) -> Result<RebuildReport, StoreError> {
    if !dry_run {
        remove_temporary_files(store);
    }
    let scan = scan(store, false, Keep::Prints)?;
    crate::log::files::all_logs_read(&scan.issues)?;
    let mut report = RebuildReport::default();
    let drifts: HashMap<String, Drift> = scan
        .drifts()
        .into_iter()
        .map(|d| (d.path.clone(), d))
        .collect();
    // Each view to write, by path and key.
    let mut writes: Vec<(&str, &Key)> = Vec::new();
    for (rel, d) in &drifts {
        let safe = force || d.kind.is_memoirs() || d.kind == DriftKind::Deleted || d.in_logs;
        if !safe {
            report.refused.push(d.clone());
            continue;
        }
        writes.push((rel, &d.key));
    }
    // A file that could not be read at all (a link, bad UTF-8) is replaced only with --force.
    let unreadable: Vec<(&str, Key, String)> = scan
        .files
        .iter()
        .filter_map(|(rel, content)| {
            let why = content.as_ref().err()?.to_string();
            Some((rel.as_str(), Key::from_rel_path(rel)?, why))
        })
        .collect();
    for (rel, key, why) in &unreadable {
        if force {
            writes.push((rel, key));
        } else {
            report.unreadable.push((rel.to_string(), why.clone()));
        }
    }
    writes.sort();
    let patch = if dry_run {
        None
    } else {
        unsave_index(store, writes.len())
    };
    // The views' texts are read back from the logs and written as they
    // are found, never all held at once (a rebuild after every view was
    // deleted writes tens of thousands).
    let mut by_version: HashMap<&str, Vec<(&str, &Key)>> = HashMap::new();
    // What is written, as MEMORY.md weighs it.
    let mut rewritten = Rewritten::new(store.config.index_budget);
    for &(rel, key) in &writes {
        match scan
            .replay
            .memories
            .get(key)
            .and_then(|v| v.view.as_deref())
        {
            Some(id) => by_version.entry(id).or_default().push((rel, key)),
            None => {
                report.removed.push(rel.to_string());
                rewritten.changed.insert(rel.to_string());
                if !dry_run {
                    store.remove_view(rel)?;
                }
            }
        }
    }
    // With nothing to write, the logs are not read again. Writing is
    // most of a rebuild after every view was deleted, nearly all of it
    // in the kernel: the views are parsed (for MEMORY.md) and written on
    // worker threads while this one reads the logs.
    if !by_version.is_empty() {
        let threads = crate::worker_threads();
        std::thread::scope(|scope| -> Result<(), StoreError> {
            let (senders, workers): (Vec<_>, Vec<_>) = (0..threads)
                .map(|_| {
                    let (tx, rx) = std::sync::mpsc::sync_channel(256);
                    let budget = store.config.index_budget;
                    (
                        tx,
                        scope.spawn(move || write_views(store, rx, dry_run, budget)),
                    )
                })
                .unzip();
            let mut next = 0;
            let read = crate::log::read::each_event(store, |e| {
                // The first copy of a version only.
                let Some(targets) = by_version.remove(e.id.as_str()) else {
                    return Ok(());
                };
                let Some(content) = crate::log::transition::version_content(&e) else {
                    return Ok(());
                };
                for (rel, key) in targets {
                    // A worker that failed has stopped: its error is
                    // the one reported.
                    let _ = senders[next % threads].send((rel, key, content.to_string()));
                    next += 1;
                }
                Ok(())
            });
            drop(senders);
            let mut failed = read.err();
            for worker in workers {
                let (done, part, error) = worker.join().unwrap_or_else(|_| {
                    let nothing = Rewritten::new(store.config.index_budget);
                    (
                        Vec::new(),
                        nothing,
                        Some(crate::index::refresh::thread_failed(store)),
                    )
                });
                report.written.extend(done.into_iter().map(str::to_string));
                rewritten.merge(part);
                failed = failed.or(error);
            }
            failed.map_or(Ok(()), Err)
        })?;
    }
    report.written.sort();
    report.refused.sort_by(|a, b| a.path.cmp(&b.path));
    report.unreadable.sort();
    drop(writes);
    drop(unreadable);
    let block = scan.index_block(&rewritten, store.config.index_budget);
    let (current, wanted) = store.index_with(&block.text)?;
    report.index_changed = current.as_deref() != Some(wanted.as_str());
    if dry_run {
        return Ok(report);
    }
    if report.index_changed {
        store.write_view(INDEX_PATH, &wanted)?;
    }
    // The persistent index is not rebuilt here: it is a cache that every
    // reader checks against the logs' and files' stamps, and the next
    // one brings it up to date reading only what changed. (Rebuilding
    // it here would hold it beside what the replay leaves behind.)
    // Files left alone keep no journal entry (a set: after a hand edit
    // of every file, that is tens of thousands of paths).
    let left_alone: HashSet<&str> = report
        .refused
        .iter()
        .map(|d| d.path.as_str())
        .chain(report.unreadable.iter().map(|(p, _)| p.as_str()))
        .collect();
    let views = scan
        .replay
        .memories
        .keys()
        .filter_map(|k| Some((k.rel_path(), scan.replay.view_print(k)?)))
        .filter(|(rel, _)| !left_alone.contains(rel.as_str()));
    store.journal_reset(views);
    if let Some(cache) = patch {
        let mut changed = report.written.clone();
        changed.extend(report.removed.iter().cloned());
        if patch_index(store, cache, &changed).is_err() {
            let _ = crate::index::file::remove(&store.state);
        }
    }
    Ok(report)
}

/// Before a rebuild writes `n` views: the persistent index, taken off
/// the disk. A write trusts the index's records of memory files rather
/// than stat every file, and a rebuild writes outside the logs' tail,
/// so a stale record would leave memories out of the MEMORY.md the
/// next write makes (after a crash repaired by `rebuild`, a
/// consolidation committed such a MEMORY.md). Off the disk while the
/// views are written, a kill leaves no index to trust; past a few
/// thousand views it stays off, for the next reader to build again.
fn unsave_index(store: &Store, n: usize) -> Option<crate::index::cache::Cache> {
    const MAX_PATCHED: usize = 4096;
    if n == 0 {
        return None;
    }
    let cache = (n <= MAX_PATCHED
        && crate::index::file::open_view(&store.state, crate::index::layout::Load::Query)
            .is_some())
    .then(|| crate::index::file::load(&store.state));
    let _ = crate::index::file::remove(&store.state);
    cache
}

/// Re-reads `paths` into the index taken off by [`unsave_index`]
/// and saves it again.
fn patch_index(
    store: &Store,
    mut cache: crate::index::cache::Cache,
    paths: &[String],
) -> Result<(), StoreError> {
    for rel in paths {
        match store.read_memory_file(rel)? {
            Some(content) => {
                let stamp = std::fs::symlink_metadata(store.path(rel))
                    .map(|m| crate::model::stamp::Stamp::of(&m))
                    .map_err(StoreError::io(store.path(rel)))?;
                let entry = crate::index::refresh::entry_for(&content, stamp, rel, &mut cache.dict);
                cache.files.insert(rel.clone(), entry);
            }
            None => {
                cache.files.remove(rel);
            }
        }
    }
    crate::index::file::save(&store.state, &cache).map_err(StoreError::io(store.path("memory")))
}

/// Writes each view it is sent (path, key, text; unless `dry_run`);
/// returns their paths and what MEMORY.md weighs of them. Stops at the
/// first failure, which it returns.
fn write_views<'a>(
    store: &Store,
    views: std::sync::mpsc::Receiver<(&'a str, &'a Key, String)>,
    dry_run: bool,
    budget: usize,
) -> (Vec<&'a str>, Rewritten, Option<StoreError>) {
    let mut done = Vec::new();
    let mut rewritten = Rewritten::new(budget);
    for (rel, key, content) in views {
        let summary = validate_file(&content, rel)
            .ok()
            .map(|m| memory::Summary::of(&m));
        rewritten.written(rel, key, summary);
        done.push(rel);
        if dry_run {
            continue;
        }
        // A view that is a link (replaced only with --force) goes with
        // the rename: it replaces the link, never what it points to.
        if let Err(e) = store.write_view(rel, &content) {
            return (done, rewritten, Some(e));
        }
    }
    (done, rewritten, None)
}

/// Turns hand edits, additions and deletions of memory files into log
/// events, filling in missing fields (written back to the file). All or
/// nothing: one refused file records none.
pub fn record(store: &Store, ctx: &Ctx) -> Result<Vec<Recorded>, StoreError> {
    record_paths(store, ctx, None)
}

/// [`record`] limited to the memory files at `only`
/// (store-relative paths), as the pre-commit hook records just what a
/// commit stages.
pub fn record_paths(
    store: &Store,
    ctx: &Ctx,
    only: Option<&[String]>,
) -> Result<Vec<Recorded>, StoreError> {
    let wanted = |path: &str| only.is_none_or(|o| o.iter().any(|p| p == path));
    let _lock = store.lock()?;
    // A memory written by hand where no scope is configured cannot be adopted.
    if let Some((name, files)) = unknown_scopes(store)
        .into_iter()
        .find(|(_, f)| f.iter().any(|p| wanted(p)))
    {
        return Err(StoreError::Refused {
            rule: "scope".into(),
            path: files[0].clone(),
            line: None,
            message: format!(
                "unknown scope `{name}` (configured: {}); move the file or add the scope to memory/config.yaml",
                store.config.scopes.join(", ")
            ),
        });
    }
    let mut scan = scan(store, false, Keep::Prints)?;
    crate::log::files::all_logs_read(&scan.issues)?;
    // A file memoir cannot read (a link, bad UTF-8, oversized) cannot be recorded.
    let unreadable = scan
        .files
        .iter()
        .find(|(p, c)| c.is_err() && wanted(p))
        .map(|(k, _)| k.clone());
    if let Some(Err(e)) = unreadable.and_then(|k| scan.files.remove(&k)) {
        return Err(e);
    }
    let mut events: Vec<Event> = Vec::new();
    let mut recorded = Vec::new();
    for d in scan.drifts() {
        if d.kind.is_memoirs() || !wanted(&d.path) {
            continue;
        }
        let versions = scan.replay.memories.get(&d.key);
        let prev = versions.map(|v| v.heads.clone()).unwrap_or_default();
        let conflict = versions.is_some_and(|v| v.conflict);
        let mut filled = Vec::new();
        let (op, body, reason) = match d.kind {
            DriftKind::Deleted => (
                Op::Forget,
                String::new(),
                Some(format!("deleted by hand by {}", ctx.actor)),
            ),
            _ => {
                let content = match store.read_memory_file(&d.path)? {
                    Some(c) => c,
                    None => continue,
                };
                if !store.has_scope(&d.key.scope) {
                    continue;
                }
                let m = validate_file(&content, &d.path)?;
                let mut add: Vec<(&str, Value)> = Vec::new();
                if m.source.is_none() {
                    add.push((
                        "source",
                        Value::String(format!("hand edit by {}", ctx.actor)),
                    ));
                }
                if m.confidence.is_none() {
                    add.push(("confidence", Value::Number(1.0.into())));
                }
                if m.created.is_none() {
                    add.push(("created", Value::String(ctx.now.seconds())));
                }
                if m.updated.is_none() {
                    add.push(("updated", Value::String(ctx.now.seconds())));
                }
                let content = if add.is_empty() {
                    content
                } else {
                    filled = add.iter().map(|(k, _)| k.to_string()).collect();
                    memory::append_fields(&content, &yaml_fields(&add))
                        .map_err(|e| StoreError::invalid(&d.path, &e))?
                };
                let m = Memory::parse(&content).map_err(|e| StoreError::invalid(&d.path, &e))?;
                check_memory(store, &m, &content, &d.path)?;
                (
                    if conflict { Op::Resolve } else { Op::Remember },
                    content,
                    None,
                )
            }
        };
        let mut e = crate::ops::write::event(ctx, op, Some(d.key.clone()), prev, body)?;
        e.reason = reason;
        recorded.push(Recorded {
            key: d.key.clone(),
            kind: d.kind,
            op,
            id: e.id.clone(),
            filled,
        });
        events.push(e);
    }
    if events.is_empty() {
        return Ok(recorded);
    }
    // The completed files are written back before the log append: a
    // crash after the append must leave files that are what the logs
    // say (else they look edited by hand again, rebuild refuses them
    // and the next record logs them twice); a crash before it leaves
    // hand edits that already have their fields, recorded as they are.
    for (e, r) in events.iter().zip(&recorded) {
        if !r.filled.is_empty() {
            if let Some(key) = &e.key {
                store.write_view(&key.rel_path(), &e.body)?;
            }
        }
    }
    let mut cache = crate::index::refresh::refreshed_cache(store)?;
    crate::ops::write::apply(store, &mut cache, &events)?;
    Ok(recorded)
}
