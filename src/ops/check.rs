//! `check`: the whole store checked, without writing anything: the logs,
//! every memory file's format and write policy, drift, MEMORY.md and its
//! budget; with a base revision (CI on a pull request), also that the logs
//! only grew and what they gained holds no secret.

use crate::change::drift::{
    memory_md_block, scan, unknown_scope_message, unknown_scopes, DriftKind, Problem, Rewritten,
    Scan, Severity,
};
use crate::log::replay::Keep;
use crate::model::event::scannable_text;
use crate::policy::secrets::Finding;
use crate::render::memory_md::{self, MEMORY_MD};
use crate::store::{Store, StoreError};
use std::collections::{BTreeSet, HashMap};

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
    let mut scan = match scan(store, true, Keep::Prints) {
        Ok(s) => s,
        Err(e) if e.is_malformed() => {
            let (path, line) = e.location().unwrap_or(("memory", None));
            let p = Problem::new(Severity::Error, path, line, "format", e.detail());
            report.problems.push(p);
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    let problems = &mut report.problems;
    problems.extend(reverted_version(store));
    problems.extend(log_issues(&scan));
    problems.extend(scope_problems(store));
    problems.append(&mut scan.problems);
    let drifts = drift_problems(&scan);
    let merged = drifts.iter().any(|p| p.rule == "drift:merged");
    problems.extend(drifts);
    problems.extend(conflicts(&scan));
    problems.extend(index_problems(store, &scan, merged)?);
    problems.extend(temporary_files(store));
    match base {
        Some(base) => problems.extend(logs_since(store, base)?),
        None => problems.extend(logs_rewritten_since_head(store, Added::Secrets)?),
    }
    // A log git left unmerged holds git's conflict markers, read as
    // malformed entries: the merge's next step (`rebuild` joins its
    // sides) says what to do, not an advice to accept them.
    let unmerged = unmerged_logs(store)?;
    problems.retain(|p| !(p.rule == "log" && unmerged.contains(&p.path)));
    problems.extend(unmerged.iter().map(|rel| {
        Problem::new(
            Severity::Error,
            rel,
            None,
            "log",
            "both sides of the merge appended to it (git left conflict markers): \
             `memoir rebuild` keeps both sides' entries"
                .to_string(),
        )
    }));
    report.memories = scan.files.len();
    report.events = scan.replay.event_count();
    report
        .problems
        .sort_by(|a, b| b.severity.cmp(&a.severity).then(a.path.cmp(&b.path)));
    Ok(report)
}

/// The short form of a commit id, as output shows one.
fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// How many lines end in `bytes`.
fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// The error of a secret the policy scan found in `path`, at `line`:
/// the finding's rule and what it says, never the value.
fn secret_found(path: &str, line: usize, f: &Finding, what: &str) -> Problem {
    Problem::new(
        Severity::Error,
        path,
        Some(line),
        &format!("policy:secret:{}", f.rule),
        format!("looks like a secret ({}){what} (value not shown)", f.rule),
    )
}

/// A warning for each temporary file a write killed before its rename
/// left in the work tree (`git add -A` would commit it); `rebuild`
/// removes them.
fn temporary_files(store: &Store) -> impl Iterator<Item = Problem> {
    crate::change::rebuild::temporary_files(store)
        .into_iter()
        .map(|path| {
            Problem::new(
                Severity::Warning,
                &path,
                None,
                "temporary",
                "the temporary file of a write killed before it finished; `memoir rebuild` removes it"
                    .to_string(),
            )
        })
}

/// The error of a HEAD that is a `git revert` of a memoir version.
fn reverted_version(store: &Store) -> Option<Problem> {
    let repo = store.repo();
    let reverted = repo.head_reverts_a_version()?;
    let short = short_id(&reverted);
    Some(Problem::new(
        Severity::Error,
        "memory/log",
        None,
        "git-revert",
        format!(
            "HEAD is a `git revert` of memoir version {short}, which deleted log entries (logs are append-only); \
             undo the revert and use `memoir rollback {short}^` instead"
        ),
    ))
}

/// What reading the logs skipped: an error or a warning, as the reader says.
fn log_issues(scan: &Scan) -> impl Iterator<Item = Problem> + '_ {
    scan.issues.iter().map(|issue| {
        let severity = if issue.error || issue.review {
            Severity::Error
        } else {
            Severity::Warning
        };
        Problem::new(
            severity,
            &issue.path,
            issue.line,
            "log",
            issue.message.clone(),
        )
    })
}

/// An error for each file in a folder that is no configured scope; for
/// the folder itself when it holds none (so that it is still said). A
/// warning for each file directly in `memory/` that is not memoir's
/// (another tool's, such as OpenClaw's daily notes): memoir never reads
/// it, and `status` lists it too.
fn scope_problems(store: &Store) -> Vec<Problem> {
    let mut out = Vec::new();
    let foreign = crate::change::drift::foreign(store);
    let loose: Vec<_> = foreign.iter().filter(|f| !f.path.ends_with('/')).collect();
    for f in &loose {
        let what = if f.openclaw {
            "an OpenClaw daily note, not memoir's; "
        } else {
            "not memoir's; "
        };
        out.push(Problem::new(
            Severity::Warning,
            &f.path,
            None,
            "foreign",
            format!(
                "{what}{}",
                crate::change::drift::foreign_advice(std::slice::from_ref(*f))
            ),
        ));
    }
    let folder_advice = foreign
        .iter()
        .find(|f| f.path.ends_with('/'))
        .map(|f| crate::change::drift::foreign_advice(std::slice::from_ref(f)))
        .unwrap_or_default();
    for (name, files) in unknown_scopes(store) {
        let message = format!("{}; {folder_advice}", unknown_scope_message(store, &name));
        if files.is_empty() {
            let folder = format!("memory/{name}");
            out.push(Problem::new(
                Severity::Error,
                &folder,
                None,
                "scope",
                message.clone(),
            ));
        }
        for f in files {
            out.push(Problem::new(
                Severity::Error,
                &f,
                None,
                "scope",
                message.clone(),
            ));
        }
    }
    out
}

/// An error for each memory file that is not what replay says.
fn drift_problems(scan: &Scan) -> Vec<Problem> {
    scan.drifts()
        .into_iter()
        .map(|d| {
            Problem::new(
                Severity::Error,
                &d.path,
                None,
                &format!("drift:{}", d.kind.as_str()),
                drift_advice(d.kind).to_string(),
            )
        })
        .collect()
}

/// What a drift of this kind is, and which command settles it.
fn drift_advice(kind: DriftKind) -> &'static str {
    match kind {
        DriftKind::Stale => "stale view left by an interrupted write; `memoir rebuild` repairs it",
        DriftKind::Missing => "missing: an interrupted write never created it; `memoir rebuild` repairs it",
        DriftKind::Leftover => "should be gone (forgotten) but an interrupted write left it; `memoir rebuild` removes it",
        DriftKind::Edited => "edited by hand; `memoir record` keeps the edit, `memoir rebuild --force` discards it",
        DriftKind::Added => "added by hand; `memoir record` adopts it",
        DriftKind::Deleted => "deleted by hand; `memoir record` forgets it, `memoir rebuild` restores it",
        DriftKind::Merged => "merged by git, not by memoir's merge driver (a text merge, or a modify/delete conflict, which the driver never sees); `memoir rebuild` writes what the merged logs say",
        DriftKind::Converted => "line endings converted by git (core.autocrlf, and the store's .gitattributes not committed yet); `memoir rebuild` restores it",
    }
}

/// A warning for each memory whose versions disagree.
fn conflicts(scan: &Scan) -> impl Iterator<Item = Problem> + '_ {
    scan.replay
        .memories
        .iter()
        .filter(|(_, v)| v.conflict)
        .map(|(key, v)| {
            Problem::new(
                Severity::Warning,
                &key.rel_path(),
                None,
                "conflict",
                format!("{} versions disagree; the file shows their common ancestor until `memoir resolve {key}` decides", v.heads.len()),
            )
        })
}

/// MEMORY.md's problems: a secret in it, missing or out of date with the
/// memory files as scanned, memories beyond its budget. After git merged
/// memory files as text (`merged`), the one step that settles both is
/// `memoir rebuild`: reindexing alone would index git's text merge.
fn index_problems(store: &Store, scan: &Scan, merged: bool) -> Result<Vec<Problem>, StoreError> {
    let budget = store.config.index_budget;
    let block = memory_md_block(scan, &Rewritten::new(budget), budget);
    let current = store.read(MEMORY_MD, None)?;
    let mut out = Vec::new();
    // The team's text around the generated block is committed with the
    // store: held to the same policy.
    if let Some(text) = &current {
        for f in crate::policy::secrets::find_secrets(text) {
            out.push(secret_found(
                MEMORY_MD,
                f.line,
                &f,
                "; memory must never hold one",
            ));
        }
    }
    // Two teammates' sentences git could not merge: a person's call.
    for line in current
        .as_deref()
        .map(memory_md::team_conflicts)
        .unwrap_or_default()
    {
        out.push(Problem::new(
            Severity::Error,
            MEMORY_MD,
            Some(line),
            "conflict",
            "both branches changed the team's own text here (git's conflict markers): keep what \
             is true and remove the markers, then `git add MEMORY.md`; memoir does not choose"
                .into(),
        ));
    }
    let error =
        |message: &str| Problem::new(Severity::Error, MEMORY_MD, None, "index", message.into());
    let command = if merged {
        "`memoir rebuild`"
    } else {
        "`memoir reindex`"
    };
    match &current {
        None => out.push(error(&format!("missing; {command} writes it"))),
        Some(text) if *text != memory_md::expected(text, &block.text) => out.push(error(&format!(
            "out of date with the memory files; {command} regenerates it"
        ))),
        _ => {}
    }
    if block.omitted > 0 {
        out.push(Problem::new(
            Severity::Warning,
            MEMORY_MD,
            None,
            "budget",
            format!(
                "{} the index budget of {budget} lines; consolidate, or raise `index_budget`",
                crate::model::text::count(
                    block.omitted,
                    "memory does not fit",
                    "memories do not fit"
                )
            ),
        ));
    }
    Ok(out)
}

/// The append-only and secrets checks of the logs since `base`.
fn logs_since(store: &Store, base: &str) -> Result<Vec<Problem>, StoreError> {
    let (commit, at_base) = store.files_at(base, "memory/log/")?;
    let short = short_id(&commit);
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    // The redactions the logs list, read once, and only if a log was
    // rewritten.
    let mut listing = None;
    for (rel, old) in &at_base {
        if !rel.starts_with("memory/log/") {
            continue;
        }
        seen.insert(rel.to_string());
        out.extend(log_grown(
            store,
            rel,
            old,
            short,
            &mut listing,
            Added::SecretsAndEntries,
        )?);
    }
    for f in crate::log::files::log_files(store)? {
        if !seen.contains(&f.rel) {
            out.extend(log_added(store, &f.rel, short, Added::SecretsAndEntries)?);
        }
    }
    Ok(out)
}

/// The logs the work tree rewrote or deleted since HEAD (logs only grow),
/// one `append-only` error each, naming the first line that differs and
/// how to restore it: what `rebuild` would lose with them, and `status`
/// names. Only the logs git sees changed are read.
pub fn rewritten_logs(store: &Store) -> Result<Vec<Problem>, StoreError> {
    // Only whether they grew: what they gained is `check`'s to police.
    logs_rewritten_since_head(store, Added::Nothing)
}

/// The logs (store-relative) git's index holds unmerged in a merge in
/// progress; none outside one.
fn unmerged_logs(store: &Store) -> Result<Vec<String>, StoreError> {
    let files = crate::change::version::unmerged_store_files(store)?;
    Ok(crate::change::version::logs_among(&files)
        .into_iter()
        .cloned()
        .collect())
}

/// The logs the work tree changed since HEAD (`check` without a base, and
/// so the pre-commit hook): each grown from HEAD's (not rewritten or
/// deleted), and what it gained free of secrets. Only the logs git sees
/// changed are read.
fn logs_rewritten_since_head(store: &Store, what: Added) -> Result<Vec<Problem>, StoreError> {
    let repo = store.repo();
    let prefix = store.prefix();
    // Only the logs: asking git's status of every memory file too cost a
    // second walk and a stat per file at 60,000 memories.
    let keep = |name: &str| !name.starts_with('.');
    let changed = repo.changed_paths(
        &format!("{prefix}{}", crate::render::memory_md::MEMORY_MD),
        &format!("{prefix}memory/log/"),
        &keep,
    )?;
    let logs: Vec<&str> = changed
        .iter()
        .map(String::as_str)
        .filter(|p| {
            p.strip_prefix(prefix)
                .is_some_and(|r| r.starts_with("memory/log/"))
        })
        .collect();
    if logs.is_empty() {
        return Ok(Vec::new());
    }
    let mut listing = None;
    let mut out = Vec::new();
    let committed = repo.head_blobs(&logs)?;
    // A log git left unmerged (one writer appended on both histories) is
    // the merge's to settle: `rebuild` joins its sides, which restoring
    // HEAD's would lose.
    let unmerged = unmerged_logs(store)?;
    for path in logs {
        if unmerged
            .iter()
            .any(|u| Some(u.as_str()) == path.strip_prefix(prefix))
        {
            continue;
        }
        let rel = path.strip_prefix(prefix).unwrap_or(path);
        let Some(old) = committed.get(path) else {
            // New since HEAD: what it holds must be what a change may add.
            if what != Added::Nothing && store.path(rel).is_file() {
                out.extend(log_added(store, rel, "HEAD", what)?);
            }
            continue;
        };
        // A clone with `core.autocrlf` checked it out with CRLF line ends:
        // converted, not rewritten (the log checks warn of that).
        let converted = crate::fs::safe_file::read(&store.path(rel), crate::store::MAX_LOG_BYTES)
            .ok()
            .flatten()
            .and_then(|now| String::from_utf8(now).ok())
            .and_then(|now| crate::model::text::git_crlf_undone(&now))
            .is_some_and(|now| now.as_bytes().starts_with(old));
        if !converted {
            out.extend(log_grown(store, rel, old, "HEAD", &mut listing, what)?);
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A log that was `old` at commit `short`, as it is now: where what it
/// gained starts, or the problem that it was deleted or rewritten.
fn grown_from(
    store: &Store,
    rel: &str,
    old: &[u8],
    short: &str,
    listing: &mut Option<HashMap<String, String>>,
) -> Result<Result<(usize, Vec<u8>), Problem>, StoreError> {
    let append_only =
        |line, message| Problem::new(Severity::Error, rel, line, "append-only", message);
    // Never blocking on a FIFO planted at a log's path, never past the cap.
    let Ok(Some(now)) = crate::fs::safe_file::read(&store.path(rel), crate::store::MAX_LOG_BYTES)
    else {
        return Ok(Err(append_only(
            None,
            format!("deleted since {short}; logs are never deleted (`git checkout {short} -- {rel}` restores it)"),
        )));
    };
    let Some(from) = crate::change::append_only::grown_from(store, old, &now, listing)? else {
        let same = old.iter().zip(&now).take_while(|(a, b)| a == b).count();
        return Ok(Err(append_only(
            Some(newlines(&old[..same]) + 1),
            format!(
                "rewritten since {short} (logs only grow): `git checkout {short} -- {rel}` restores it; \
                 a change goes through `memoir remember` or `memoir rollback`, a secret through `memoir redact`"
            ),
        )));
    };
    Ok(Ok((from, now)))
}

/// The problems of a log that was `old` at base (commit `short`): gone,
/// rewritten, or grown by what a change must not add.
fn log_grown(
    store: &Store,
    rel: &str,
    old: &[u8],
    short: &str,
    listing: &mut Option<HashMap<String, String>>,
    what: Added,
) -> Result<Vec<Problem>, StoreError> {
    let (from, now) = match grown_from(store, rel, old, short, listing)? {
        Ok(grown) => grown,
        Err(problem) => return Ok(vec![problem]),
    };
    if what == Added::Nothing {
        return Ok(Vec::new());
    }
    let added = String::from_utf8_lossy(now.get(from..).unwrap_or_default());
    let offset = newlines(&now[..from.min(now.len())]);
    let mut out: Vec<Problem> = crate::policy::secrets::find_secrets(&scannable_text(&added))
        .iter()
        .map(|f| secret_found(rel, offset + f.line, f, &format!(" added since {short}")))
        .collect();
    let now_text = String::from_utf8_lossy(&now);
    out.extend(entries_added(store, rel, &now_text, offset, short, what)?);
    Ok(out)
}

/// What text a log gained is held to, besides having only grown.
#[derive(Clone, Copy, PartialEq)]
enum Added {
    /// Nothing but having only grown (`status`, and `rebuild` before it
    /// rebuilds from the logs).
    Nothing,
    /// No secret, and no memory the write policy would refuse (`check`
    /// against HEAD: the work tree, where a teammate's tool may have
    /// appended an entry memoir must skip, a warning).
    Secrets,
    /// That, and no entry a reader would skip (`check --base`: a change
    /// must not add one).
    SecretsAndEntries,
}

/// The problems of a log created since base (commit `short`): what it
/// holds that a change must not add.
fn log_added(
    store: &Store,
    rel: &str,
    short: &str,
    what: Added,
) -> Result<Vec<Problem>, StoreError> {
    let text = store.read(rel, None)?.unwrap_or_default();
    let mut out = entries_added(store, rel, &text, 0, short, what)?;
    out.extend(
        crate::policy::secrets::find_secrets(&scannable_text(&text))
            .iter()
            .map(|f| secret_found(rel, f.line, f, &format!(" added since {short}"))),
    );
    Ok(out)
}

/// The entries of the log `text` that start after line `after` and that
/// a change (since commit `short`) must not add: one whose memory the
/// write policy refuses (a secret once its YAML is read, which the scan of
/// the text cannot see through every escape; a control character; no
/// memory file at all), and, for `check --base`, a quarantined one (a
/// reader skips it for ever).
fn entries_added(
    store: &Store,
    rel: &str,
    text: &str,
    after: usize,
    short: &str,
    what: Added,
) -> Result<Vec<Problem>, StoreError> {
    let parsed = crate::log::files::parse_log(store, rel, text)?;
    let mut out = Vec::new();
    for (e, span) in parsed.events.iter().zip(&parsed.spans) {
        let line = newlines(&text.as_bytes()[..span.start]) + 1;
        if line <= after {
            continue;
        }
        let (rule, message) = match crate::policy::memory::check_logged(&store.config, e) {
            Ok(()) => continue,
            Err(StoreError::Refused { rule, .. }) if rule.starts_with("secret") => (
                rule,
                format!("an entry added since {short} holds a secret once its YAML is read (value not shown)"),
            ),
            Err(StoreError::Refused { rule, message, .. }) => (
                rule,
                format!("an entry added since {short} holds what no `remember` or `note` could log: {message}"),
            ),
            Err(other) => (
                "format".to_string(),
                format!("an entry added since {short} holds no memory file: {other}"),
            ),
        };
        out.push(Problem::new(
            Severity::Error,
            rel,
            Some(line),
            &format!("policy:{rule}"),
            message,
        ));
    }
    if what == Added::Secrets {
        return Ok(out);
    }
    for q in &parsed.quarantined {
        let line = q.line.max(q.error.line);
        if line > after {
            out.push(Problem::new(
                Severity::Error,
                rel,
                Some(line),
                "log",
                format!("a malformed entry added since {short}: every reader skips it (`memoir check` says why)"),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{check, check_against, Severity};
    use crate::testing::TempStore;

    /// The (severity, path, rule) of each finding.
    fn findings(report: &super::CheckReport) -> Vec<(Severity, String, String)> {
        let p = &report.problems;
        p.iter()
            .map(|p| (p.severity, p.path.clone(), p.rule.clone()))
            .collect()
    }

    #[test]
    fn a_store_memoir_wrote_passes_and_a_hand_edit_fails() {
        let t = TempStore::new();
        let rel = t.remember("deploy", "Deploys run from CI.").rel_path();
        let report = check(&t.store).expect("check");
        assert!(!report.failed(), "{:?}", report.problems);
        assert_eq!((report.memories, report.events), (1, 1));
        t.edit(&rel, "from CI", "by hand");
        let report = check(&t.store).expect("check");
        assert!(report.failed());
        let edited = (Severity::Error, rel, "drift:edited".to_string());
        assert_eq!(findings(&report), [edited]);
    }

    #[test]
    fn a_log_rewritten_since_base_fails_and_one_grown_passes() {
        let t = TempStore::new();
        t.remember("deploy", "Deploys run from CI.");
        t.commit_all("base");
        t.remember("review", "Two reviewers approve each change.");
        let report = check_against(&t.store, Some("HEAD")).expect("check");
        assert!(!report.failed(), "{:?}", report.problems);
        let log = t.log();
        t.edit(&log, "from CI", "by hand");
        let report = check_against(&t.store, Some("HEAD")).expect("check");
        let rewritten = |report: &super::CheckReport| {
            report.problems.iter().any(|p| {
                (p.severity, &p.path, p.rule.as_str()) == (Severity::Error, &log, "append-only")
                    && p.message.starts_with("rewritten since")
                    && p.line.is_some()
            })
        };
        assert!(rewritten(&report), "{:?}", report.problems);
        // Without a base, against HEAD: the work tree's rewrite is named ...
        let report = check(&t.store).expect("check");
        assert!(rewritten(&report), "{:?}", report.problems);
        // ... until it is committed; then only the base sees it.
        t.commit_all("the rewrite");
        assert!(!rewritten(&check(&t.store).expect("check")));
        let report = check_against(&t.store, Some("HEAD~1")).expect("check");
        assert!(rewritten(&report), "{:?}", report.problems);
    }
}
