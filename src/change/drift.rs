//! Drift: how the memory files differ from what replaying the logs gives,
//! found by one read of the whole store (a `Scan`). `check` reports it
//! (`ops::check`), `rebuild` repairs it (`change::rebuild`), `record` turns
//! hand changes into events (`ops::record`).
//!
//! Each compares the views replay says should exist with the files on disk.
//! A difference is a drift of one kind: a view memoir left behind (a crash
//! between the log append and the view write; the journal says the file is
//! what memoir last wrote) or a change by hand. `rebuild` repairs the first
//! and never destroys the second (unless its content is in the logs, or
//! `--force`); `record` turns the second into events.

use crate::log::replay::{Keep, Replay};
use crate::model::fingerprint::fingerprint;
use crate::model::key::Key;
use crate::model::memory;
use crate::policy::memory::validate_file;
use crate::policy::memory::{check_memory, check_memory_but_secrets};
use crate::render::memory_md;
use crate::store::{Store, StoreError};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    /// A finding of `severity` at `path` (and `line`) under `rule`.
    pub(crate) fn new(
        severity: Severity,
        path: &str,
        line: Option<usize>,
        rule: &str,
        message: String,
    ) -> Problem {
        Problem {
            severity,
            path: path.to_string(),
            line,
            rule: rule.to_string(),
            message,
        }
    }

    /// The error a memory file's format or the write policy gives it.
    fn of_file(path: &str, e: &StoreError) -> Problem {
        let (line, rule, message) = match e {
            e if e.is_malformed() => (
                e.location().and_then(|(_, line)| line),
                "format".into(),
                e.detail(),
            ),
            StoreError::Refused {
                rule,
                line,
                message,
                ..
            } => (*line, format!("policy:{rule}"), message.clone()),
            e => (None, "format".into(), e.to_string()),
        };
        Problem::new(Severity::Error, path, line, &rule, message)
    }
}

/// The store as read in full: logs replayed and every memory file seen.
/// Files are kept as fingerprints and summaries, not contents, so that a
/// scan of a large store stays small; what needs a file's text reads it.
pub(crate) struct Scan {
    /// The logs replayed.
    pub(crate) replay: Replay,
    /// What reading the logs skipped.
    pub(crate) issues: Vec<crate::log::files::LogIssue>,
    /// Every memory file by path, or why it could not be read.
    pub(crate) files: BTreeMap<String, Result<Seen, StoreError>>,
    /// What memoir last wrote to each path (see `local::state`).
    pub(crate) journal: HashMap<String, Option<u64>>,
    /// The memory files the logs say exist, absent from the work tree,
    /// that HEAD has: a crash never removes a committed file.
    pub(crate) committed_absent: BTreeSet<String>,
    /// Format and policy problems of the files (when asked for).
    pub(crate) problems: Vec<Problem>,
}

/// What a scan keeps of one memory file.
pub(crate) struct Seen {
    /// Fingerprint of its content.
    pub(crate) hash: u64,
    /// It holds git conflict markers.
    pub(crate) markers: bool,
    /// Fingerprint of what git's `core.autocrlf` converted it from, if it
    /// is such a conversion.
    pub(crate) lf_hash: Option<u64>,
    /// What it says, if it is a valid memory.
    pub(crate) summary: Option<memory::Summary>,
}

impl Scan {
    /// Every memory file that is not what replay says, in path order.
    pub(crate) fn drifts(&self) -> Vec<Drift> {
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
            // What the journal says memoir wrote counts only as a version
            // these logs know: an entry made on another branch (a checkout
            // since), or in history reset away, is no leftover of a crash
            // here, and a file holding that content is someone's edit.
            let memoir_wrote =
                |hash: u64| journal == Some(&Some(hash)) && self.replay.has_version(&key, hash);
            let kind = match (view, file) {
                (Some(v), Some(f)) if v == f.hash => continue,
                // git's text merge (markers), or a fork whose every version
                // is in the logs (also a modify/delete conflict git left
                // with memoir's own write of one side): nothing of the
                // file's content can be lost, and no crash explains it.
                (Some(_), Some(f))
                    if f.markers || self.replay.memories.get(&key).is_some_and(|v| v.conflict) =>
                {
                    DriftKind::Merged
                }
                (Some(_), Some(f)) if memoir_wrote(f.hash) => DriftKind::Stale,
                (Some(v), Some(f)) if f.lf_hash == Some(v) => DriftKind::Converted,
                (Some(_), Some(_)) => DriftKind::Edited,
                (Some(v), None) if memoir_wrote(v) => DriftKind::Deleted,
                // Memoir removed it last (a forget): a crash since left the
                // memory made again unwritten.
                (Some(_), None) if journal == Some(&None) => DriftKind::Missing,
                (Some(_), None) if self.committed_absent.contains(&rel) => DriftKind::Deleted,
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

/// Folders under `memory/` that are neither a configured scope nor the
/// logs, each with the markdown files in it.
pub(crate) fn unknown_scopes(store: &Store) -> Vec<(String, Vec<String>)> {
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

/// What `check` and `record` say of a folder under `memory/` that is no
/// configured scope (see [`unknown_scopes`]).
pub(crate) fn unknown_scope_message(store: &Store, name: &str) -> String {
    format!(
        "unknown scope `{name}` (configured: {})",
        store.config.scopes.join(", ")
    )
}

/// Something in the store's `memory/` folder that is not memoir's: another
/// tool's files where memoir keeps its own (OpenClaw's daily notes, a
/// `memory/notes/` folder), which memoir neither reads nor writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    /// Store-relative path: `memory/<name>/` for a folder that is no
    /// configured scope, `memory/<file>` for a file directly in `memory/`.
    pub path: String,
    /// The markdown files in the folder (1 for a file).
    pub files: usize,
    /// An OpenClaw daily note (`memory/YYYY-MM-DD.md` or
    /// `memory/YYYY-MM-DD-<slug>.md`), which `memoir import openclaw`
    /// imports as notes.
    pub openclaw: bool,
}

/// Is `name` an OpenClaw daily note's file name (`YYYY-MM-DD.md`,
/// `YYYY-MM-DD-<slug>.md`)?
fn daily_note(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".md") else {
        return false;
    };
    let b = stem.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
        && (b.len() == 10 || b[10] == b'-')
}

/// What the store's `memory/` folder holds that is not memoir's: folders
/// that are no configured scope (and not the logs), and files directly in
/// it but memoir's `config.yaml`; sorted by path. Dot files (`.gitkeep`)
/// are left out.
pub fn foreign(store: &Store) -> Vec<Foreign> {
    let mut out: Vec<Foreign> = unknown_scopes(store)
        .into_iter()
        .map(|(name, files)| Foreign {
            path: format!("memory/{name}/"),
            files: files.len(),
            openclaw: false,
        })
        .collect();
    let mut loose: Vec<String> = std::fs::read_dir(store.path("memory"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.') && n != "config.yaml")
        .collect();
    loose.sort();
    out.extend(loose.into_iter().map(|n| Foreign {
        openclaw: daily_note(&n),
        path: format!("memory/{n}"),
        files: 1,
    }));
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// What one [`foreign`] item is, for a list of them.
pub fn foreign_label(f: &Foreign) -> String {
    match (f.openclaw, f.path.ends_with('/')) {
        (true, _) => format!("{} (an OpenClaw daily note)", f.path),
        (false, true) => format!(
            "{} (no configured scope: {}, each an error for `check`)",
            f.path,
            crate::model::text::count(f.files, "markdown file", "markdown files")
        ),
        (false, false) => f.path.clone(),
    }
}

/// What to do about [`foreign`] files, the same wherever memoir says it
/// (`init`, `status`, `check`): memoir does not read them.
pub fn foreign_advice(found: &[Foreign]) -> String {
    let mut steps = Vec::new();
    if found.iter().any(|f| f.openclaw) {
        // Not `import openclaw .`: that would also read memoir's own
        // MEMORY.md as OpenClaw's and propose its headings as memories.
        steps.push("move OpenClaw's daily notes into a workspace of their own (`mkdir -p openclaw/memory && mv memory/????-??-??*.md openclaw/memory/`) and import them as notes with `memoir import openclaw openclaw`");
    }
    if found.iter().any(|f| !f.openclaw) {
        steps.push("move other tools' files out of memory/ (memoir reads only its scope folders and memory/log/)");
    }
    steps.push("or keep memoir's store in a folder of its own (`memoir init <dir>`, then `--store <dir>` or MEMOIR_STORE)");
    format!("memoir does not read them: {}", steps.join("; "))
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
pub(crate) fn scan(store: &Store, police: bool, keep: Keep) -> Result<Scan, StoreError> {
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
    let absent: Vec<String> = replay
        .memories
        .iter()
        .filter(|(_, v)| v.view.is_some())
        .map(|(k, _)| k.rel_path())
        .filter(|rel| !files.contains_key(rel))
        .collect();
    Ok(Scan {
        committed_absent: committed(store, &absent),
        replay,
        issues,
        files,
        journal: store.state.journal(),
        problems,
    })
}

/// Which of `rels` (store-relative) HEAD has. Best effort: a repository
/// git cannot read here answers none, and a file gone is then taken for
/// one a crash never wrote, as before HEAD was asked.
fn committed(store: &Store, rels: &[String]) -> BTreeSet<String> {
    if rels.is_empty() {
        return BTreeSet::new();
    }
    let prefix = store.prefix();
    let paths: Vec<String> = rels.iter().map(|r| format!("{prefix}{r}")).collect();
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    store
        .repo()
        .head_blobs(&paths)
        .map(|found| {
            found
                .into_keys()
                .filter_map(|p| p.strip_prefix(prefix).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A [`scan`] for a command that writes from the logs (`rebuild`,
/// `record`): refused unless every log was read in full (see
/// `log::files::all_logs_read`).
pub(crate) fn scan_to_write(store: &Store) -> Result<Scan, StoreError> {
    let scan = scan(store, false, Keep::Prints)?;
    crate::log::files::all_logs_read(&scan.issues)?;
    Ok(scan)
}

/// Every memory file, as a scan keeps it (see [`scan`]).
#[allow(clippy::type_complexity)]
pub(crate) fn scan_files(
    store: &Store,
    police: bool,
) -> Result<(BTreeMap<String, Result<Seen, StoreError>>, Vec<Problem>), StoreError> {
    let mut files = BTreeMap::new();
    let mut problems = Vec::new();
    let listed = crate::store::listing::memory_files(store)?;
    // check, record and rebuild read every file: seconds on a large store.
    let total = listed.len();
    let meter = store.meter("reading memory files", total, total >= 1000);
    // The secret scan is most of what policing a file costs: it is left
    // out for a file whose content the persistent index vouches for (the
    // fingerprint it indexed, found clean under these rules).
    let index = police
        .then(|| crate::index::Index::as_saved(store))
        .flatten();
    let vouched = |rel: &str, hash: u64| index.as_ref().is_some_and(|i| i.vouches_clean(rel, hash));
    for (done, (rel, _)) in listed.into_iter().enumerate() {
        if done % 256 == 0 {
            meter.advance(done);
        }
        let content = store
            .read_memory_file(&rel)
            .and_then(|c| c.ok_or_else(|| StoreError::NoSuchMemory(rel.clone())));
        let seen = content.map(|c| {
            let hash = fingerprint(c.as_bytes());
            let parsed = validate_file(&c, &rel);
            if police {
                match &parsed {
                    Ok(m) => {
                        let checked = if vouched(&rel, hash) {
                            check_memory_but_secrets(&store.config, m, &c, &rel)
                        } else {
                            check_memory(&store.config, m, &c, &rel)
                        };
                        if let Err(e) = checked {
                            problems.push(Problem::of_file(&rel, &e));
                        }
                    }
                    Err(e) => problems.push(Problem::of_file(&rel, e)),
                }
            }
            Seen {
                hash,
                markers: crate::model::text::has_conflict_markers(&c),
                lf_hash: crate::model::text::git_crlf_undone(&c).map(|t| fingerprint(t.as_bytes())),
                summary: parsed.ok().map(|m| memory::Summary::of(&m)),
            }
        });
        if let (true, Err(e)) = (police, &seen) {
            problems.push(Problem::of_file(&rel, e));
        }
        files.insert(rel, seen);
    }
    meter.finish();
    Ok((files, problems))
}

/// The memory files a rebuild writes or removes, as MEMORY.md weighs them:
/// every path changed, and the summaries of the most valuable written (the
/// block never shows more than its budget, so no more are kept: a rebuild
/// after every view was deleted writes tens of thousands).
pub(crate) struct Rewritten {
    /// Paths written or removed.
    pub(crate) changed: std::collections::HashSet<String>,
    /// The most valuable written, with what they say.
    pub(crate) best: Vec<(Key, memory::Summary)>,
    /// Written files that parse.
    pub(crate) valid: usize,
    /// MEMORY.md's budget: how many of `best` it can show.
    pub(crate) budget: usize,
}

impl Rewritten {
    /// Nothing rewritten yet, for a MEMORY.md of `budget` lines.
    pub(crate) fn new(budget: usize) -> Rewritten {
        Rewritten {
            changed: Default::default(),
            best: Vec::new(),
            valid: 0,
            budget,
        }
    }

    /// Adds the file `rel` written for `key` (with its summary, if it parses).
    pub(crate) fn written(&mut self, rel: &str, key: &Key, summary: Option<memory::Summary>) {
        self.changed.insert(rel.to_string());
        let Some(summary) = summary else { return };
        self.valid += 1;
        self.best.push((key.clone(), summary));
        self.prune(2 * self.budget.max(1));
    }

    /// Adds what another part of the same rebuild wrote.
    pub(crate) fn merge(&mut self, other: Rewritten) {
        self.changed.extend(other.changed);
        self.valid += other.valid;
        self.best.extend(other.best);
        self.prune(2 * self.budget.max(1));
    }

    /// Keeps only the `budget` most valuable once there are over `limit`.
    pub(crate) fn prune(&mut self, limit: usize) {
        if self.best.len() > limit {
            memory_md::pick(&mut self.best, self.budget, |a, b| {
                memory_md::value_order(&(&a.0, &a.1), &(&b.0, &b.1))
            });
        }
    }
}

/// MEMORY.md's generated block for the memory files as this scan read
/// them, but for those `rewritten` since. Both ranked together and cut
/// once ([`memory_md::pick`]) on what the summaries say (borrowed, not
/// copied), keys made only for the most valuable, as MEMORY.md's cut is
/// made from the index's records.
pub(crate) fn memory_md_block(
    scan: &Scan,
    rewritten: &Rewritten,
    budget: usize,
) -> memory_md::Block {
    type Rank<'a> = memory_md::Rank<(&'a str, &'a str)>;
    let rank = |key, s: &memory::Summary| Rank {
        kind: memory_md::type_rank(&s.kind),
        confidence: s.confidence,
        updated: s.updated,
        key,
    };
    // Each scanned file by its path (its key is made only if chosen), each
    // rewritten one by its key.
    let scanned = scan
        .files
        .iter()
        .filter(|(rel, _)| !rewritten.changed.contains(rel.as_str()))
        .filter_map(|(rel, seen)| {
            let s = seen.as_ref().ok()?.summary.as_ref()?;
            let key = crate::model::key::split_rel_path(rel)?;
            Some((rank(key, s), Err(rel.as_str()), s))
        });
    let mut ranked: Vec<(Rank<'_>, Result<&Key, &str>, &memory::Summary)> = scanned.collect();
    let total = ranked.len() + rewritten.valid;
    ranked.extend(
        (rewritten.best.iter())
            .map(|(k, s)| (rank((k.scope.as_str(), k.slug.as_str()), s), Ok(k), s)),
    );
    memory_md::pick(&mut ranked, budget, |a, b| a.0.value_order(&b.0));
    let keys: Vec<(std::borrow::Cow<'_, Key>, &memory::Summary)> = ranked
        .into_iter()
        .filter_map(|(_, key, s)| match key {
            Ok(k) => Some((std::borrow::Cow::Borrowed(k), s)),
            Err(rel) => Some((std::borrow::Cow::Owned(Key::from_rel_path(rel)?), s)),
        })
        .collect();
    let chosen = keys.iter().map(|(k, s)| (k.as_ref(), *s)).collect();
    memory_md::Summaries::chosen(chosen, total).render(budget)
}

#[cfg(test)]
mod tests {
    use super::DriftKind;
    use crate::testing::TempStore;

    #[test]
    fn a_memory_memoir_wrote_is_no_drift_and_a_hand_edit_is_edited() {
        let t = TempStore::new();
        let rel = t.remember("deploy", "Deploys run from CI.").rel_path();
        assert_eq!(t.drifts(), []);
        t.edit(&rel, "from CI", "by hand");
        assert_eq!(t.drifts(), [(rel, DriftKind::Edited)]);
    }

    #[test]
    fn a_file_deleted_after_memoir_wrote_it_is_deleted() {
        let t = TempStore::new();
        let rel = t.remember("deploy", "Deploys run from CI.").rel_path();
        t.remove(&rel);
        assert_eq!(t.drifts(), [(rel, DriftKind::Deleted)]);
    }

    #[test]
    fn a_view_the_logs_moved_past_is_stale() {
        let t = TempStore::new();
        let key = t.remember("deploy", "Deploys run from CI.");
        let rel = key.rel_path();
        let old = t.read(&rel).expect("the view");
        t.append_only(&key, &old.replace("from CI", "from the release branch"));
        assert_eq!(t.read(&rel).as_deref(), Some(old.as_str()));
        assert_eq!(t.drifts(), [(rel, DriftKind::Stale)]);
    }
}
