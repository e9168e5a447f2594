//! `memoir redact`: removing a secret that slipped into the store, the one
//! audited exception to append-only logs.
//!
//! Each log entry that holds a secret is rewritten in place, keeping its
//! heading, id and place: its metadata gains `redacted` (why) and the
//! length of its new body, and every secret in it is replaced by a stub,
//! `[redacted:<rule>:<hash>]` (see [`stub`]; for an entry named by id, its
//! whole body is removed). A `redact` event appended to this writer's log lists, for
//! every entry rewritten, its file and the git blob id of the entry as it
//! was (`git hash-object` of those bytes), so that a reviewer, and
//! `check --base` and `consolidate`, can tell that exact rewrite from any
//! other: [`accepts`](crate::change::append_only::accepts) holds a log to "the old log with exactly the listed
//! entries redacted, then entries appended". Memory files and MEMORY.md
//! that hold a secret are redacted in place too; the views are then
//! rebuilt from the redacted logs.

use crate::change::append_only::{stub, Redactable};
use crate::model::event::{Event, Op};
use crate::store::{Ctx, Failpoint, Store, StoreError};
use std::io::Write;

/// One entry rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The log file.
    pub path: String,
    /// The entry's id.
    pub id: String,
    /// The rules whose secrets were removed (empty for an entry named by id).
    pub rules: Vec<String>,
    /// The git blob id of the entry's text as it was.
    pub removed: String,
    /// For a body removed by id (no rule shows it held a secret), the
    /// blob id of the rewritten entry, which the team lists under
    /// `accepted_entries:` before a version commits the rewrite.
    pub review: Option<String>,
}

/// What `redact` did (or, dry, would do).
#[derive(Debug, Clone, Default)]
pub struct RedactReport {
    /// Log entries rewritten.
    pub entries: Vec<Redacted>,
    /// Other store files (memory files, MEMORY.md, quarantined log text)
    /// whose secrets were replaced in place.
    pub files: Vec<String>,
    /// The `redact` event appended.
    pub event: Option<String>,
    /// The views the rebuild wrote afterwards.
    pub rebuilt: Vec<String>,
    /// Entries named by id that an earlier run redacted already: nothing
    /// more is done to them (a second rewrite of the rewrite would match
    /// no `redact` entry's listing, and the log could not be committed).
    pub already: Vec<String>,
}

/// What redaction asks for.
#[derive(Debug, Clone, Default)]
pub struct RedactOptions {
    /// Entries to redact whole, by id (a secret the rules do not know);
    /// empty: every entry and file in which the rules find a secret.
    pub ids: Vec<String>,
    /// Why (default: the rules that matched).
    pub reason: Option<String>,
    /// Change nothing, report what would change.
    pub dry_run: bool,
}

/// Redacts secrets from the logs, the memory files and MEMORY.md (see
/// the module doc), under the store lock.
pub fn redact(store: &Store, ctx: &Ctx, opts: &RedactOptions) -> Result<RedactReport, StoreError> {
    let _lock = store.lock()?;
    let mut report = RedactReport::default();
    let mut rewrites: Vec<(String, String, usize)> = Vec::new();
    for f in crate::log::files::log_files(store)? {
        if let Some(rewrite) = redact_log(store, &f.rel, opts, &mut report)? {
            rewrites.push(rewrite);
        }
    }
    if let Some(missing) = opts
        .ids
        .iter()
        .find(|id| !report.entries.iter().any(|r| &r.id == *id) && !report.already.contains(id))
    {
        return Err(StoreError::NoSuchMemory(format!("log entry {missing}")));
    }
    // Memory files and MEMORY.md as they are (hand edits included).
    let in_place = match opts.ids.is_empty() {
        true => redact_views(store, &mut report)?,
        false => Vec::new(),
    };
    if opts.dry_run {
        return Ok(report);
    }
    if report.entries.is_empty() && report.files.is_empty() {
        // Nothing left in the store; a run killed after its rewrites may
        // have left the secret in the local state, which goes all the same.
        crate::ops::seen::forget_secrets(store, &stub)?;
        return Ok(report);
    }
    // The audit entry first: killed after it, every rewrite made is
    // listed (a listed entry not rewritten yet is still its old store,
    // which `accepts` allows), and the next run finishes the rest.
    let event = audit_event(ctx, opts, &report)?;
    crate::log::files::append(store, std::slice::from_ref(&event))?;
    for (rel, text, read) in &rewrites {
        rewrite_log(store, rel, text, *read)?;
    }
    for (rel, text) in &in_place {
        store.write_view(rel, text)?;
    }
    // "Removed everywhere memoir wrote it" includes its local state: before
    // the rebuild, which may fail.
    crate::ops::seen::forget_secrets(store, &stub)?;
    report.event = Some(event.id);
    report.rebuilt = crate::change::rebuild::rebuild_locked(store, false, false)?.written;
    Ok(report)
}

/// A log redacted as `opts` asks (noted in `report`): its new text, with
/// its path and the length read, if it changes.
fn redact_log(
    store: &Store,
    rel: &str,
    opts: &RedactOptions,
    report: &mut RedactReport,
) -> Result<Option<(String, String, usize)>, StoreError> {
    let text = crate::log::files::read_log(store, rel)?;
    let parsed = crate::log::files::parse_log(store, rel, &text)?;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut changed = false;
    // Text between entries (a quarantined or torn one) is redacted
    // as a whole file is; with ids, only those entries change.
    let mut between = |gap: &str, out: &mut String| {
        let redacted = if opts.ids.is_empty() {
            stub(gap)
        } else {
            gap.to_string()
        };
        changed |= redacted != gap;
        out.push_str(&redacted);
    };
    for (e, span) in parsed.events.iter().zip(&parsed.spans) {
        between(&text[at..span.start], &mut out);
        at = span.end;
        let entry = &text[span.clone()];
        if opts.ids.contains(&e.id) && e.redacted.is_some() && e.body.is_empty() {
            report.already.push(e.id.clone());
            out.push_str(entry);
            continue;
        }
        match redacted_entry(e, opts) {
            Some((new, rules)) => {
                let rewritten = new.render_exact(entry);
                // A body removed with no rule to show it held a secret
                // proves nothing: the team accepts the new entry by id.
                let review = (rules.is_empty() && !opts.ids.is_empty())
                    .then(|| crate::git::blob_id(rewritten.as_bytes()));
                out.push_str(&rewritten);
                report.entries.push(Redacted {
                    path: rel.to_string(),
                    id: e.id.clone(),
                    rules,
                    removed: crate::git::blob_id(entry.as_bytes()),
                    review,
                });
            }
            None => out.push_str(entry),
        }
    }
    between(&text[at..], &mut out);
    let has_entries = report.entries.iter().any(|r| r.path == rel);
    if !(changed || has_entries) {
        return Ok(None);
    }
    if !has_entries {
        report.files.push(rel.to_string());
    }
    Ok(Some((rel.to_string(), out, text.len())))
}

/// The memory files and MEMORY.md with every secret stubbed, those that
/// change (noted in `report`).
fn redact_views(
    store: &Store,
    report: &mut RedactReport,
) -> Result<Vec<(String, String)>, StoreError> {
    let mut paths: Vec<String> = crate::store::listing::memory_files(store)?
        .into_iter()
        .map(|(rel, _)| rel)
        .collect();
    paths.push(crate::render::memory_md::MEMORY_MD.to_string());
    let mut in_place = Vec::new();
    for rel in paths {
        let Ok(Some(text)) = store.read(&rel, None) else {
            continue;
        };
        let redacted = stub(&text);
        if redacted != text {
            report.files.push(rel.clone());
            in_place.push((rel, redacted));
        }
    }
    Ok(in_place)
}

/// The `redact` event: one line per entry rewritten (id, log, the git blob
/// id of the entry as it was, the rules), and why.
fn audit_event(
    ctx: &Ctx,
    opts: &RedactOptions,
    report: &RedactReport,
) -> Result<Event, StoreError> {
    let body: String = report
        .entries
        .iter()
        .map(|r| format!("{} {} {} {}\n", r.id, r.path, r.removed, r.rules.join(",")))
        .collect();
    let mut event = crate::change::event::event(ctx, Op::Redact, None, Vec::new(), body)?;
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    event.reason = Some(opts.reason.clone().unwrap_or_else(|| {
        format!(
            "redacted {} and {}",
            count(report.entries.len(), "log entry", "log entries"),
            count(report.files.len(), "other file", "other files")
        )
    }));
    Ok(event)
}

/// The entry `e` redacted as `opts` asks, with the rules that matched;
/// `None` if it stays as it is.
fn redacted_entry(e: &Event, opts: &RedactOptions) -> Option<(Event, Vec<String>)> {
    let mut new = e.clone();
    let rules: Vec<String>;
    if !opts.ids.is_empty() {
        if !opts.ids.contains(&e.id) {
            return None;
        }
        new.body = String::new();
        rules = Vec::new();
    } else {
        let texts = [
            Some(e.body.as_str()),
            e.reason.as_deref(),
            Some(e.actor.as_str()),
        ];
        let mut found: Vec<String> = texts
            .iter()
            .flatten()
            .flat_map(|t| crate::policy::secrets::find_secrets(t))
            .map(|f| f.rule.to_string())
            .collect();
        // A secret only the parsed YAML shows (a value continued by an
        // escaped line break, a !!binary block) cannot be cut out of
        // the text: the whole body goes.
        let hidden = match e.op {
            Op::Remember | Op::Propose | Op::Resolve if found.is_empty() => {
                match crate::policy::memory::check_content_secrets(&e.body, "") {
                    Err(StoreError::Refused { rule, .. }) => {
                        Some(rule.trim_start_matches("secret:").to_string())
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if found.is_empty() && hidden.is_none() {
            return None;
        }
        found.extend(hidden.clone());
        found.sort();
        found.dedup();
        new.body = if hidden.is_some() {
            String::new()
        } else {
            stub(&e.body)
        };
        new.reason = e.reason.as_deref().map(stub);
        new.actor = stub(&e.actor);
        rules = found;
    }
    new.redacted = Some(opts.reason.clone().unwrap_or_else(|| {
        if rules.is_empty() {
            "redacted by memoir redact".into()
        } else {
            format!("secret removed by memoir redact ({})", rules.join(", "))
        }
    }));
    Some((new, rules))
}

/// Replaces a log's text (temporary file, fsync, rename, folder fsync):
/// only `redact` ever does. `text` replaces the first `read` bytes (the
/// log as it was read); anything appended since is kept after it.
fn rewrite_log(store: &Store, rel: &str, text: &str, read: usize) -> Result<(), StoreError> {
    let path = store.path(rel);
    // What was appended since the log was read (the redact entry, and a
    // torn marker before it) is kept as it is.
    let now = crate::log::files::read_log(store, rel)?;
    let text = format!("{text}{}", now.get(read..).unwrap_or_default());
    crate::fs::replace::replace_with(&path, crate::fs::replace::Durability::Synced, |w| {
        w.write_all(text.as_bytes())?;
        // A test's kill before the rename finds the whole text in the
        // temporary file, as a real one would after the write.
        w.flush()?;
        store.killed_at(Failpoint::KilledBeforeRename);
        Ok(())
    })
    .map_err(StoreError::io(&path))
}
