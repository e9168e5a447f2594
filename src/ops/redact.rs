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
//! other: [`accepts`] holds a log to "the old log with exactly the listed
//! entries redacted, then entries appended". Memory files and MEMORY.md
//! that hold a secret are redacted in place too; the views are then
//! rebuilt from the redacted logs.

use crate::model::event::{Event, Op};
use crate::store::{Ctx, Store, StoreError};
use std::collections::HashMap;

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

/// The entries a `redact` event lists: id and the blob id of the entry as
/// it was.
pub fn listed(e: &Event) -> HashMap<String, String> {
    if e.op != Op::Redact {
        return HashMap::new();
    }
    e.body
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let id = parts.next()?;
            let _path = parts.next()?;
            let removed = parts.next()?;
            Some((id.to_string(), removed.to_string()))
        })
        .collect()
}

/// Is `now` the log `old` with exactly the entries in `listing` (id →
/// blob id of the entry as it was) redacted, and anything appended? Text
/// between entries (a quarantined entry) may have had its secrets replaced
/// as `redact` replaces them. Returns where what was appended starts.
///
/// A listed entry counts as redacted only when its new text is what
/// `redact` makes of the old one ([`proves_redaction`]): a listing alone
/// proves nothing, since anyone can append one.
pub fn accepts(old: &str, now: &str, listing: &HashMap<String, String>) -> Option<usize> {
    if listing.is_empty() {
        return None;
    }
    let (Ok(before), Ok(after)) = (
        crate::model::event::parse_log(old),
        crate::model::event::parse_log(now),
    ) else {
        return None;
    };
    let rewritten: HashMap<&str, &str> = after
        .events
        .iter()
        .zip(&after.spans)
        .filter(|(e, _)| e.redacted.is_some())
        .map(|(e, span)| (e.id.as_str(), &now[span.clone()]))
        .collect();
    let mut expected = String::with_capacity(old.len());
    let mut at = 0;
    let mut redacted = 0;
    for (e, span) in before.events.iter().zip(&before.spans) {
        expected.push_str(&stub(&old[at..span.start]));
        let text = &old[span.clone()];
        match (listing.get(&e.id), rewritten.get(e.id.as_str())) {
            (Some(removed), Some(new))
                if *removed == crate::git::blob_id(text.as_bytes())
                    && proves_redaction(e, text, new) =>
            {
                expected.push_str(new);
                redacted += 1;
            }
            _ => expected.push_str(text),
        }
        at = span.end;
    }
    expected.push_str(&stub(&old[at..]));
    (redacted > 0 && now.starts_with(&expected)).then_some(expected.len())
}

/// Is `new` (an entry's text now) what `redact` makes of the entry `old`
/// (parsed from `old_text`)? The same entry, byte for byte, but for its
/// `redacted` field and one of: every secret the rules find in its body,
/// reason and actor replaced by its stub (at least one found); the body
/// removed whole for a secret only its parsed YAML shows (the others'
/// stubbed); or the body removed whole, as `redact <id>` does for a secret
/// the rules do not know. So a forged "redaction" can remove what an entry
/// said, and say so in the audit, but never put words in it.
pub fn proves_redaction(old: &Event, old_text: &str, new: &str) -> bool {
    let Ok(parsed) = crate::model::event::parse_log(new) else {
        return false;
    };
    let [now] = parsed.events.as_slice() else {
        return false;
    };
    let Some(why) = now.redacted.clone() else {
        return false;
    };
    let like = |body: String, reason: Option<String>, actor: String| {
        let mut e = old.clone();
        e.body = body;
        e.reason = reason;
        e.actor = actor;
        e.redacted = Some(why.clone());
        e.render_exact(old_text) == new
    };
    let reason = old.reason.as_deref().map(stub);
    let actor = stub(&old.actor);
    let stubbed = stub(&old.body);
    let found = stubbed != old.body || reason != old.reason || actor != old.actor;
    let hidden = matches!(
        crate::policy::memory::check_content_secrets(&old.body, ""),
        Err(StoreError::Refused { .. })
    );
    (found && like(stubbed, reason.clone(), actor.clone()))
        || (hidden && like(String::new(), reason, actor))
        || like(String::new(), old.reason.clone(), old.actor.clone())
}

/// `text` with each secret the rules find replaced by
/// `[redacted:<rule>:<hash>]`, `<hash>` the first 12 hex digits of the git
/// blob id of the secret: whoever holds a candidate can confirm it
/// (`printf %s "$secret" | git hash-object --stdin`), and no one can read
/// a high-entropy token back from it.
pub fn stub(text: &str) -> String {
    crate::policy::secrets::redact_with(text, |rule, secret| {
        let id = crate::git::blob_id(secret.as_bytes());
        format!("[redacted:{rule}:{}]", &id[..id.len().min(12)])
    })
}

/// Where what a log gained since it was `old` starts in `now`: the end of
/// `old` (it only grew), or where the rewrite a `redact` event lists ends
/// (the one rewrite allowed); `None` if it was rewritten otherwise.
/// `listing` caches the redactions the logs list, read on first need.
pub(crate) fn grown_from(
    store: &Store,
    old: &[u8],
    now: &[u8],
    listing: &mut Option<HashMap<String, String>>,
) -> Result<Option<usize>, StoreError> {
    if now.starts_with(old) {
        return Ok(Some(old.len()));
    }
    if listing.is_none() {
        *listing = Some(redaction_listing(store)?);
    }
    Ok(accepts(
        &String::from_utf8_lossy(old),
        &String::from_utf8_lossy(now),
        listing.as_ref().unwrap_or(&HashMap::new()),
    ))
}

/// Every entry the logs' `redact` events list (id → blob id of the
/// entry as it was).
pub(crate) fn redaction_listing(store: &Store) -> Result<HashMap<String, String>, StoreError> {
    let mut all = HashMap::new();
    crate::log::read::each_event(store, |e| {
        all.extend(listed(&e));
        Ok(())
    })?;
    Ok(all)
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
        .find(|id| !report.entries.iter().any(|r| &r.id == *id))
    {
        return Err(StoreError::NoSuchMemory(format!("log entry {missing}")));
    }
    // Memory files and MEMORY.md as they are (hand edits included).
    let in_place = match opts.ids.is_empty() {
        true => redact_views(store, &mut report)?,
        false => Vec::new(),
    };
    if opts.dry_run || (report.entries.is_empty() && report.files.is_empty()) {
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
    report.event = Some(event.id);
    report.rebuilt = crate::ops::rebuild::rebuild_locked(store, false, false)?.written;
    // "Removed everywhere memoir wrote it" includes its local state.
    crate::ops::seen::forget_secrets(store, &stub)?;
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
        match redacted_entry(e, opts) {
            Some((new, rules)) => {
                out.push_str(&new.render_exact(entry));
                report.entries.push(Redacted {
                    path: rel.to_string(),
                    id: e.id.clone(),
                    rules,
                    removed: crate::git::blob_id(entry.as_bytes()),
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
    let mut paths: Vec<String> = crate::index::refresh::memory_files(store)?
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
    let mut event = crate::ops::write::event(ctx, Op::Redact, None, Vec::new(), body)?;
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
    crate::fs::replace::replace(
        &path,
        text.as_bytes(),
        crate::fs::replace::Durability::Synced,
    )
    .map_err(StoreError::io(&path))
}

impl Event {
    /// The entry as [`Event::render`] writes it, keeping the blank lines
    /// `original` (this entry's text in its log) ends with.
    fn render_exact(&self, original: &str) -> String {
        let mut text = self.render();
        let trailing = original.len() - original.trim_end_matches('\n').len();
        let ours = text.len() - text.trim_end_matches('\n').len();
        if trailing < ours {
            text.truncate(text.len() - (ours - trailing));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::Timestamp;

    fn entry(body: &str) -> (Event, String) {
        let time = Timestamp(1_764_000_000_000);
        let e = Event {
            id: crate::model::event::new_id(time).unwrap_or_default(),
            op: Op::Note,
            time,
            actor: "Bob <bob@example.com>".into(),
            key: None,
            prev: vec![],
            reason: None,
            consumed: vec![],
            redacted: None,
            body: body.into(),
        };
        let text = e.render();
        (e, text)
    }

    #[test]
    fn a_redaction_proves_it_removed_a_secret_and_nothing_else() {
        let aws = ["AKIA", "Z7QRSTUVWXYZ2345"].concat();
        let (e, text) = entry(&format!("deploy with {aws} on Tuesdays"));
        let mut redacted = e.clone();
        redacted.body = stub(&e.body);
        redacted.redacted = Some("secret removed".into());
        assert!(proves_redaction(&e, &text, &redacted.render()));
        // Words put in beside the stub: not a redaction.
        let mut forged = redacted.clone();
        forged.body = forged.body.replace("Tuesdays", "Fridays");
        assert!(!proves_redaction(&e, &text, &forged.render()));
        // Without a secret, a stub changes nothing: only removal is left.
        let (plain, plain_text) = entry("deploy on Tuesdays");
        let mut changed = plain.clone();
        changed.body = "deploy on Fridays".into();
        changed.redacted = Some("secret removed".into());
        assert!(!proves_redaction(&plain, &plain_text, &changed.render()));
        let mut removed = plain.clone();
        removed.body = String::new();
        removed.redacted = Some("a door code".into());
        assert!(proves_redaction(&plain, &plain_text, &removed.render()));
        // Another field changed with it: not a redaction.
        let mut moved = removed.clone();
        moved.actor = "Eve <eve@example.com>".into();
        assert!(!proves_redaction(&plain, &plain_text, &moved.render()));
        // No `redacted` field: not a redaction.
        let mut unmarked = removed;
        unmarked.redacted = None;
        assert!(!proves_redaction(&plain, &plain_text, &unmarked.render()));
    }
}
