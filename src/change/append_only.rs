//! The append-only rule of the logs and its one exception: a log may only
//! grow, unless `memoir redact` rewrote exactly the entries a `redact`
//! event lists, each provably ([`proves_redaction`]). `check`, the version
//! gate and `redact` itself ask it.

use crate::model::event::{Event, Op};
use crate::store::{Store, StoreError};
use std::collections::HashMap;

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
/// A body removed with no secret the rules know (`redact <id>`) proves
/// nothing: it counts only when `accepted` says the team accepts the new
/// entry's blob id (`accepted_entries:`), as for an entry no reader can use.
pub fn accepts(
    old: &str,
    now: &str,
    listing: &HashMap<String, String>,
    accepted: &dyn Fn(&str) -> bool,
) -> Option<usize> {
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
                    && match proves_redaction(e, text, new) {
                        Some(Proof::Secret) => true,
                        Some(Proof::Removed) => accepted(&crate::git::blob_id(new.as_bytes())),
                        None => false,
                    } =>
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

/// What a redaction proves of itself ([`proves_redaction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// It removed what the rules find a secret, and nothing else.
    Secret,
    /// It removed a whole body that no rule shows held a secret (`redact
    /// <id>`, for a secret the rules do not know): only a person can say
    /// so, by accepting the new entry's blob id.
    Removed,
}

/// Is `new` (an entry's text now) what `redact` makes of the entry `old`
/// (parsed from `old_text`)? The same entry, byte for byte, but for its
/// `redacted` field and one of: every secret the rules find in its body,
/// reason and actor replaced by its stub (at least one found); the body
/// removed whole for a secret only its parsed YAML shows (the others'
/// stubbed); or the body removed whole, as `redact <id>` does for a secret
/// the rules do not know. So a forged "redaction" can remove what an entry
/// said, and say so in the audit, but never put words in it.
pub fn proves_redaction(old: &Event, old_text: &str, new: &str) -> Option<Proof> {
    let parsed = crate::model::event::parse_log(new).ok()?;
    let [now] = parsed.events.as_slice() else {
        return None;
    };
    let why = now.redacted.clone()?;
    // The one text a redaction adds: a reason, and no place to put a
    // secret the rest of the entry no longer holds (no gate scans it).
    if crate::policy::check_secrets(&why, "redacted").is_err() {
        return None;
    }
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
    if (found && like(stubbed, reason.clone(), actor.clone()))
        || (hidden && like(String::new(), reason, actor))
    {
        Some(Proof::Secret)
    } else if like(String::new(), old.reason.clone(), old.actor.clone()) {
        Some(Proof::Removed)
    } else {
        None
    }
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
        &|id| crate::log::read::is_accepted(store, id),
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

/// The exact text of a rewritten entry.
pub(crate) trait Redactable {
    fn render_exact(&self, original: &str) -> String;
}

impl Redactable for Event {
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
        assert_eq!(
            proves_redaction(&e, &text, &redacted.render()),
            Some(Proof::Secret)
        );
        // Words put in beside the stub: not a redaction.
        let mut forged = redacted.clone();
        forged.body = forged.body.replace("Tuesdays", "Fridays");
        assert_eq!(proves_redaction(&e, &text, &forged.render()), None);
        // Without a secret, a stub changes nothing: only removal is left.
        let (plain, plain_text) = entry("deploy on Tuesdays");
        let mut changed = plain.clone();
        changed.body = "deploy on Fridays".into();
        changed.redacted = Some("secret removed".into());
        assert_eq!(
            proves_redaction(&plain, &plain_text, &changed.render()),
            None
        );
        let mut removed = plain.clone();
        removed.body = String::new();
        removed.redacted = Some("a door code".into());
        // Removing a body no rule shows held a secret proves only removal.
        assert_eq!(
            proves_redaction(&plain, &plain_text, &removed.render()),
            Some(Proof::Removed)
        );
        // Another field changed with it: not a redaction.
        let mut moved = removed.clone();
        moved.actor = "Eve <eve@example.com>".into();
        assert_eq!(proves_redaction(&plain, &plain_text, &moved.render()), None);
        // A secret put in the `redacted` text: not a redaction.
        let mut carrying = removed.clone();
        carrying.redacted = Some(format!("see {aws}"));
        assert_eq!(
            proves_redaction(&plain, &plain_text, &carrying.render()),
            None
        );
        // No `redacted` field: not a redaction.
        let mut unmarked = removed;
        unmarked.redacted = None;
        assert_eq!(
            proves_redaction(&plain, &plain_text, &unmarked.render()),
            None
        );
    }
}
