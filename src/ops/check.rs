//! `check`: the whole store checked, without writing anything: the logs,
//! every memory file's format and write policy, drift, MEMORY.md and its
//! budget; with a base revision (CI on a pull request), also that the logs
//! only grew and what they gained holds no secret.

use crate::log::replay::Keep;
use crate::model::event::Op;
use crate::ops::drift::*;
use crate::render::memory_md::{self, INDEX_PATH};
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

/// The append-only and secrets checks of the logs since `base`.
fn logs_since(store: &Store, base: &str) -> Result<Vec<Problem>, StoreError> {
    let repo = crate::git::Repo::discover(&store.root)?;
    let prefix = store.workdir_prefix(repo.workdir());
    let (commit, at_base) = repo.files_at(
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
    let repo = crate::git::Repo::discover(&store.root).ok();
    if let Some(reverted) = repo.and_then(|r| r.head_reverts_a_version()) {
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
    let block = index_block(&scan, &Rewritten::new(budget), budget);
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
