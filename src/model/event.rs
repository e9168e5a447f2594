//! Events: the entries of the daily logs, memoir's source of truth.
//!
//! An entry is rendered as markdown that reads well in a pull request and
//! parses exactly: a heading, one metadata comment, the body in a fence whose
//! byte length is in the metadata (so any content, fences and CRLF included,
//! round-trips), and an end line. The grammar is normative in
//! `docs/format.md`.

use crate::model::key::Key;
use crate::model::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The log format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// The line a writer appends after a torn (never acknowledged) final entry.
pub const TORN_MARKER: &str = "<!-- memoir:torn -->";

const HEADING_PREFIX: &str = "## ";
const META_PREFIX: &str = "<!-- memoir ";
const END_PREFIX: &str = "<!-- memoir:end ";
const COMMENT_SUFFIX: &str = " -->";

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// A raw observation; never applied to a memory.
    Note,
    /// A candidate memory, applied only by consolidation or resolve.
    Propose,
    /// Create or replace a memory.
    Remember,
    /// Remove a memory, with a reason (a tombstone version).
    Forget,
    /// A human decision on a conflict; its `prev` joins the heads.
    Resolve,
    /// Marks a consolidation and lists what it consumed.
    Consolidate,
    /// Records a redaction: which entries `memoir redact` rewrote, the one
    /// audited exception to append-only logs (its body lists them).
    Redact,
}

impl Op {
    /// The op's name in logs and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Note => "note",
            Op::Propose => "propose",
            Op::Remember => "remember",
            Op::Forget => "forget",
            Op::Resolve => "resolve",
            Op::Consolidate => "consolidate",
            Op::Redact => "redact",
        }
    }

    /// Does this op create a version of a memory (a node of its DAG)?
    pub fn is_version(self) -> bool {
        matches!(self, Op::Remember | Op::Forget | Op::Resolve)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Collision-free id ([`new_id`]).
    pub id: String,
    /// What the event does.
    pub op: Op,
    /// When it was written (for display and ties only: never for causality).
    pub time: Timestamp,
    /// Who wrote it: `Name <email>`.
    pub actor: String,
    /// The memory it concerns (none for `note` and `consolidate`).
    pub key: Option<Key>,
    /// The version(s) this one replaces.
    pub prev: Vec<String>,
    /// Why (`forget`), or a short description of the decision.
    pub reason: Option<String>,
    /// Events this one consumed (`consolidate`, `resolve`, `remember` of a proposal).
    pub consumed: Vec<String>,
    /// Set when the body was redacted (reserved; see `docs/format.md`).
    pub redacted: Option<String>,
    /// The memory file content (`remember`, `propose`, `resolve`) or the text.
    pub body: String,
}

#[derive(Serialize, Deserialize)]
struct Meta {
    v: u32,
    id: String,
    op: Op,
    time: String,
    actor: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    prev: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    consumed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redacted: Option<String>,
    len: usize,
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A new event id: 48 bits of milliseconds then 80 random bits, in Crockford
/// base32 (a ULID). The random part alone keeps ids apart under a pinned clock.
pub fn new_id(time: Timestamp) -> Result<String, std::io::Error> {
    let mut random = [0u8; 10];
    getrandom::fill(&mut random).map_err(std::io::Error::other)?;
    Ok(id_from(time, random))
}

/// The id of an event at `time` with these 80 random bits (what [`new_id`]
/// draws; a generator that must be deterministic passes its own).
pub fn id_from(time: Timestamp, random: [u8; 10]) -> String {
    let mut value: u128 = (time.0.clamp(0, (1 << 48) - 1) as u128) << 80;
    for (i, b) in random.iter().enumerate() {
        value |= u128::from(*b) << (8 * (9 - i));
    }
    (0..26)
        .rev()
        .map(|i| CROCKFORD[((value >> (5 * i)) & 31) as usize] as char)
        .collect()
}

/// Is `id` of the form [`new_id`] makes?
pub fn is_id(id: &str) -> bool {
    id.len() == 26 && id.bytes().all(|b| CROCKFORD.contains(&b))
}

impl Event {
    /// Renders the entry as appended to a log, ending with a blank line.
    pub fn render(&self) -> String {
        let meta = Meta {
            v: FORMAT_VERSION,
            id: self.id.clone(),
            op: self.op,
            time: self.time.millis(),
            actor: self.actor.clone(),
            key: self.key.as_ref().map(Key::to_string),
            prev: self.prev.clone(),
            reason: self.reason.clone(),
            consumed: self.consumed.clone(),
            redacted: self.redacted.clone(),
            len: self.body.len(),
        };
        // `-->` can only occur inside a JSON string, where `\u003e` means the same.
        let json = serde_json::to_string(&meta)
            .unwrap_or_default()
            .replace("-->", "--\\u003e");
        let fence = "`".repeat(longest_backtick_run(&self.body).max(3) + 1);
        let key = self
            .key
            .as_ref()
            .map(|k| format!(" {k}"))
            .unwrap_or_default();
        let mut out = String::with_capacity(self.body.len() + json.len() + 200);
        out.push_str(&format!(
            "{HEADING_PREFIX}{} {}{} · {}\n{META_PREFIX}{json}{COMMENT_SUFFIX}\n{fence}markdown\n",
            self.time.clock(),
            self.op,
            key,
            self.id
        ));
        out.push_str(&self.body);
        if !self.body.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{fence}\n{}\n\n", end_line(&self.id)));
        out
    }
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Where and why a log did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LogError {
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A parsed log file.
#[derive(Debug, Default)]
pub struct ParsedLog {
    /// The entries, in file order.
    pub events: Vec<Event>,
    /// Where each entry of `events` lies in the text (byte ranges).
    pub spans: Vec<std::ops::Range<usize>>,
    /// Lines of torn entries that were skipped (1-based), repaired or not.
    pub torn: Vec<usize>,
    /// The file ends inside a torn entry that no writer has repaired yet.
    pub torn_tail: bool,
    /// Entries that do not parse, skipped: logs are append-only, so one
    /// malformed entry (a teammate's buggy tool, a bad hand edit) must not
    /// stop the store. `check` reports them.
    pub quarantined: Vec<Quarantined>,
    /// The file ends inside a quarantined entry (nothing after it parses).
    pub open_end: bool,
}

/// An entry that does not parse, skipped by every reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    /// 1-based line where the entry starts.
    pub line: usize,
    /// Its bytes in the log's text (to the next entry that parses, or the
    /// end): what `check`'s accept-list names by blob id.
    pub span: std::ops::Range<usize>,
    /// What is wrong, and on which line.
    pub error: LogError,
}

impl ParsedLog {
    /// Can an entry be appended as it is? (Else the file ends inside a torn
    /// or malformed entry, and [`TORN_MARKER`] must come first so that the
    /// new entry is read as one.)
    pub fn ends_cleanly(&self) -> bool {
        !self.torn_tail && !self.open_end
    }
}

enum EntryError {
    /// The text ended inside the entry: a torn write.
    Eof,
    Malformed(usize, String),
    /// A format version this build cannot read: never skipped, since a
    /// newer memoir's events must not be silently left out of a replay.
    Unsupported(usize, String),
}

/// A reader of a log's lines.
struct Cursor<'a> {
    text: &'a str,
    /// Byte offset of the next line.
    pos: usize,
    /// Lines read so far: the 1-based number of the last one.
    line: usize,
}

impl<'a> Cursor<'a> {
    /// The next line without its `\n`; `Eof` when no complete line is left.
    fn line(&mut self) -> Result<&'a str, EntryError> {
        let rest = &self.text[self.pos..];
        let end = rest.find('\n').ok_or(EntryError::Eof)?;
        self.pos += end + 1;
        self.line += 1;
        Ok(&rest[..end])
    }

    /// Skips the blank lines between entries; false when no text is left.
    fn skip_blank_lines(&mut self) -> bool {
        while self.text[self.pos..].starts_with('\n') {
            self.pos += 1;
            self.line += 1;
        }
        self.pos < self.text.len()
    }

    fn malformed(&self, message: impl Into<String>) -> EntryError {
        EntryError::Malformed(self.line, message.into())
    }
}

/// Reads the entry at the cursor: a heading, a metadata comment, the body
/// in a fence, an end line.
fn parse_entry(c: &mut Cursor<'_>) -> Result<Event, EntryError> {
    let heading_id = c.heading()?;
    let meta = c.metadata(heading_id)?;
    let time = Timestamp::parse(&meta.time).map_err(|e| c.malformed(e.to_string()))?;
    let key = c.key(&meta)?;
    if let Some(bad) = meta.prev.iter().chain(&meta.consumed).find(|id| !is_id(id)) {
        return Err(c.not_an_id(bad));
    }
    let body = c.fenced_body(meta.len)?;
    c.end_line(&meta.id)?;
    Ok(Event {
        id: meta.id,
        op: meta.op,
        time,
        actor: meta.actor,
        key,
        prev: meta.prev,
        reason: meta.reason,
        consumed: meta.consumed,
        redacted: meta.redacted,
        body: body.to_string(),
    })
}

/// The end line of the entry with this id.
fn end_line(id: &str) -> String {
    format!("{END_PREFIX}{id}{COMMENT_SUFFIX}")
}

impl<'a> Cursor<'a> {
    /// The entry's heading; returns the id it ends with.
    fn heading(&mut self) -> Result<&'a str, EntryError> {
        let heading = self.line()?;
        if !heading.starts_with(HEADING_PREFIX) {
            return Err(self.malformed("expected an entry heading (`## <time> <op> …`)"));
        }
        Ok(heading.rsplit(' ').next().unwrap_or(""))
    }

    /// The metadata comment, in a version this build reads, whose id is
    /// the heading's.
    fn metadata(&mut self, heading_id: &str) -> Result<Meta, EntryError> {
        let meta_line = self.line()?;
        let json = meta_line
            .strip_prefix(META_PREFIX)
            .and_then(|s| s.strip_suffix(COMMENT_SUFFIX))
            .ok_or_else(|| {
                self.malformed("expected the entry's `<!-- memoir {…} -->` metadata line")
            })?;
        let meta: Meta = serde_json::from_str(json)
            .map_err(|e| self.malformed(format!("invalid entry metadata: {e}")))?;
        if meta.v != FORMAT_VERSION {
            return Err(EntryError::Unsupported(self.line, format!(
                "log format version {} is not supported by this memoir (it reads version {FORMAT_VERSION})",
                meta.v
            )));
        }
        if !is_id(&meta.id) {
            return Err(self.not_an_id(&meta.id));
        }
        if heading_id != meta.id {
            return Err(self.malformed("the heading's id differs from the metadata's"));
        }
        Ok(meta)
    }

    /// The metadata's key, a valid one, present exactly when the op needs one.
    fn key(&self, meta: &Meta) -> Result<Option<Key>, EntryError> {
        let key = meta
            .key
            .as_deref()
            .map(|k| {
                Key::parse(k)
                    .ok()
                    .filter(|(key, name)| key.slug == *name)
                    .map(|(key, _)| key)
                    .ok_or_else(|| self.malformed(format!("`{k}` is not a valid memory key")))
            })
            .transpose()?;
        let needs_key = matches!(
            meta.op,
            Op::Propose | Op::Remember | Op::Forget | Op::Resolve
        );
        if needs_key != key.is_some() {
            return Err(self.malformed(format!(
                "a `{}` entry {}",
                meta.op,
                if needs_key {
                    "needs a key"
                } else {
                    "takes no key"
                }
            )));
        }
        Ok(key)
    }

    /// The body: an opening fence line, exactly `len` bytes (whatever
    /// they hold), a line break if they do not end with one, and the
    /// closing fence.
    fn fenced_body(&mut self, len: usize) -> Result<&'a str, EntryError> {
        let fence = self.line()?;
        let ticks = fence.len() - fence.trim_start_matches('`').len();
        if ticks < 3 {
            return Err(self.malformed("expected the opening fence of the entry's body"));
        }
        let start = self.pos;
        let end = start.checked_add(len).ok_or(EntryError::Eof)?;
        if end > self.text.len() {
            return Err(EntryError::Eof);
        }
        let body = self.text.get(start..end).ok_or_else(|| {
            self.malformed("the body length does not end on a character boundary")
        })?;
        self.line += body.matches('\n').count();
        self.pos = end;
        if !body.ends_with('\n') {
            let rest = self.line()?;
            if !rest.is_empty() {
                return Err(self.malformed("the body is longer than its recorded length"));
            }
        }
        let close = self.line()?;
        if close != &fence[..ticks] {
            return Err(self.malformed("expected the closing fence of the entry's body"));
        }
        Ok(body)
    }

    /// The entry's end line, naming its id.
    fn end_line(&mut self, id: &str) -> Result<(), EntryError> {
        if self.line()? != end_line(id) {
            return Err(self.malformed("expected the entry's end line `<!-- memoir:end <id> -->`"));
        }
        Ok(())
    }

    /// `id`, on the current line, is not an event id.
    fn not_an_id(&self, id: &str) -> EntryError {
        self.malformed(format!("`{id}` is not an event id"))
    }
}

/// Log text as a secret scan reads it: the value of the `"key"` field of
/// memoir's metadata lines blanked (a memory key, checked as one when
/// written, read by the scan's named-value rule as `key: <value>`:
/// `"key":"project/flag-385"` is not a secret), everything else as it is,
/// every line in its place.
pub fn scannable_text(text: &str) -> std::borrow::Cow<'_, str> {
    const KEY_FIELD: &str = "\"key\":\"";
    if !text.contains(KEY_FIELD) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let blanked = line
            .trim_start()
            .starts_with(META_PREFIX)
            .then(|| line.split_once(KEY_FIELD))
            .flatten()
            .and_then(|(before, rest)| {
                let (_, after) = rest.split_once('"')?;
                Some(format!("{before}{KEY_FIELD}\"{after}"))
            });
        match blanked {
            Some(l) => out.push_str(&l),
            None => out.push_str(line),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Parses a whole log file. A final entry cut short by a crash is skipped
/// (`torn_tail`); an entry a later writer closed with [`TORN_MARKER`] is
/// skipped too; an entry that is malformed in any other way is quarantined
/// (skipped, and listed) and reading goes on at the next entry. Only an
/// entry of a format version this build cannot read is an error.
pub fn parse_log(text: &str) -> Result<ParsedLog, LogError> {
    let mut out = ParsedLog::default();
    let mut c = Cursor {
        text,
        pos: 0,
        line: 0,
    };
    loop {
        if !c.skip_blank_lines() {
            return Ok(out);
        }
        let (entry_pos, entry_line) = (c.pos, c.line + 1);
        let (line, message) = match parse_entry(&mut c) {
            Ok(e) => {
                out.events.push(e);
                out.spans.push(entry_pos..c.pos);
                continue;
            }
            Err(EntryError::Unsupported(line, message)) => return Err(LogError { line, message }),
            Err(EntryError::Eof) => (0, String::new()),
            Err(EntryError::Malformed(line, message)) => (line, message),
        };
        // A malformed entry is skipped up to the next entry that parses; a
        // torn one (cut short by a crash) up to the marker that a later
        // writer put after it. Whichever comes first decides which it was,
        // so the marker is looked for only up to the next entry (searching
        // to the end for each of many malformed entries was quadratic).
        let next = if line == 0 {
            None
        } else {
            next_entry(text, entry_pos, entry_line)
        };
        let until = next.map_or(text.len(), |(n, _)| n);
        let marker = find_torn_marker(&text[entry_pos..until])
            .map(|(after, lines)| (entry_pos + after, entry_line - 1 + lines));
        // A torn entry is what a killed write leaves: the start of one
        // entry. Anything else before a marker (junk, or more than its
        // metadata's length) is quarantined, so `check` sees it.
        let sealed = marker.filter(|&(at, _)| {
            next.is_none_or(|(n, _)| at <= n)
                && could_be_torn(&text[entry_pos..at - TORN_MARKER.len() - 1])
        });
        match (sealed, next) {
            (Some((at, lines)), _) => {
                out.torn.push(entry_line);
                (c.pos, c.line) = (at, lines);
            }
            (_, None) if line == 0 && could_be_torn(&text[entry_pos..]) => {
                out.torn.push(entry_line);
                out.torn_tail = true;
                return Ok(out);
            }
            (_, next) => {
                // Its own bytes: up to the next entry, or a torn marker a
                // later writer put after it, without the blank lines before
                // either (so its id is the same before and after sealing).
                let mut end = next.map_or(text.len(), |(at, _)| at);
                if let Some((after, _)) = marker.filter(|&(after, _)| after <= end) {
                    end = after - TORN_MARKER.len() - 1;
                }
                let end = entry_pos + text[entry_pos..end].trim_end_matches(['\n', '\r']).len();
                out.quarantined.push(Quarantined {
                    line: entry_line,
                    span: entry_pos..end,
                    error: LogError { line, message },
                });
                let Some((at, lines)) = next else {
                    // Nothing after it parses: the file ends in this entry, and
                    // the next writer must close it before appending.
                    out.open_end = true;
                    return Ok(out);
                };
                (c.pos, c.line) = (at, lines);
            }
        }
    }
}

/// The longest metadata line (and body) a torn entry may have: a
/// `consumed` list of thousands of note ids is still far below this.
const MAX_TORN_HEAD: usize = 1 << 20;
/// The longest heading line a torn entry may have (`## <time> <op> <key> ·
/// <id>`, a key at most a few hundred bytes).
const MAX_TORN_HEADING: usize = 1024;
/// What an entry holds past its body: the fence lines and the end line.
const ENTRY_FRAME: usize = 1024;

/// Could `part` (what lies between an entry's start and a torn marker, or
/// the end of the file) be an entry a killed write cut short? It starts
/// with a heading, its metadata line parses once it is whole, and it is no
/// longer than that metadata says the entry is.
fn could_be_torn(part: &str) -> bool {
    if !(part.starts_with(HEADING_PREFIX) || HEADING_PREFIX.starts_with(part)) {
        return false;
    }
    let mut lines = part.splitn(3, '\n');
    let heading = lines.next().unwrap_or("");
    if heading.len() > MAX_TORN_HEADING {
        return false;
    }
    let Some(meta) = lines.next() else {
        return true;
    };
    // What memoir writes second is its metadata comment, whole or cut.
    if !(meta.starts_with(META_PREFIX) || META_PREFIX.starts_with(meta)) {
        return false;
    }
    let Some(rest) = lines.next().filter(|r| !r.is_empty()) else {
        // The metadata line itself was cut (the newline after it, if any,
        // is the repair's).
        return meta.len() <= MAX_TORN_HEAD;
    };
    let declared = meta
        .strip_prefix(META_PREFIX)
        .and_then(|m| m.strip_suffix(COMMENT_SUFFIX))
        .and_then(|json| serde_json::from_str::<serde_json::Value>(json).ok());
    let (Some(len), Some(id)) = (
        declared.as_ref().and_then(|v| v.get("len")?.as_u64()),
        declared.as_ref().and_then(|v| v.get("id")?.as_str()),
    ) else {
        return false;
    };
    // No entry's body is longer than this; a whole entry (its end line
    // there) is not torn but malformed.
    len <= MAX_TORN_HEAD as u64
        && rest.len() as u64 <= len + ENTRY_FRAME as u64
        && !rest.contains(&end_line(id))
}

/// Where reading resumes after a malformed entry that starts at `from`
/// (on line `line`): the first later line that begins an entry which
/// parses (a heading, then a metadata line), as a byte offset and the
/// number of lines before it.
fn next_entry(text: &str, from: usize, line: usize) -> Option<(usize, usize)> {
    let mut pos = from;
    let mut lines = line - 1;
    // Skip the malformed entry's own first line.
    let first = text[pos..].find('\n')?;
    pos += first + 1;
    lines += 1;
    while pos < text.len() {
        let rest = &text[pos..];
        let end = rest.find('\n').map_or(rest.len(), |e| e + 1);
        if rest.starts_with(HEADING_PREFIX) && rest[end..].starts_with(META_PREFIX) {
            let mut c = Cursor {
                text,
                pos,
                line: lines,
            };
            if parse_entry(&mut c).is_ok() {
                return Some((pos, lines));
            }
        }
        pos += end;
        lines += 1;
    }
    None
}

/// Byte offset just past the first torn-marker line in `text`, and how many
/// lines that is.
fn find_torn_marker(text: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    let mut lines = 0;
    for line in text.split_inclusive('\n') {
        pos += line.len();
        lines += 1;
        if line.trim_end_matches('\n') == TORN_MARKER && line.ends_with('\n') {
            return Some((pos, lines));
        }
    }
    None
}

/// Does the log `text` end cleanly, so that an entry may be appended as
/// it is? Else its last entry is torn, malformed or runs past the end of
/// the file, and [`TORN_MARKER`] must come first so that the new entry is
/// read as one. The whole log is parsed: only a reader's view of the file
/// tells whether an entry that looks complete is swallowed by one before it
/// whose length runs past it.
pub fn log_ends_cleanly(text: &str) -> bool {
    // A log this build cannot read is left as it ends.
    parse_log(text).map_or(true, |p| p.ends_cleanly())
}

#[cfg(test)]
mod scan_tests {
    use super::scannable_text;

    /// A memory key in memoir's metadata is not a secret; a secret
    /// anywhere else in the line, or in the entry, is still scanned.
    #[test]
    fn only_the_metadata_key_is_blanked() {
        let token = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
        let text = format!(
            "## 03:13:00Z remember project/flag-385 · 01K\n\
             <!-- memoir {{\"v\":1,\"key\":\"project/flag-385\",\"reason\":\"{token}\"}} -->\n\
             key: project/flag-385\n"
        );
        let scanned = scannable_text(&text);
        assert!(scanned.contains("\"key\":\"\""), "{scanned}");
        assert!(scanned.contains(&token));
        assert!(scanned.contains("key: project/flag-385"));
        assert_eq!(scanned.lines().count(), text.lines().count());
        assert!(crate::policy::secrets::find_secrets(&scanned).len() == 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(body: &str) -> Event {
        let time = Timestamp::parse("2026-11-29T10:41:07Z").unwrap();
        Event {
            id: new_id(time).unwrap(),
            op: Op::Remember,
            time,
            actor: "Ada <ada@example.com>".into(),
            key: Some(Key::parse("project/x").unwrap().0),
            prev: vec![new_id(time).unwrap()],
            reason: Some("a --> b".into()),
            consumed: vec![],
            redacted: None,
            body: body.into(),
        }
    }

    #[test]
    fn round_trips_hostile_bodies() {
        for body in [
            "",
            "no newline",
            "````\n```\n## heading\n---\r\n<!-- memoir:end X -->\n",
            "trailing  \n\n\n",
            "中文\r\n",
        ] {
            let e = event(body);
            let text = e.render() + &event("second").render();
            let parsed = parse_log(&text).unwrap();
            assert_eq!(parsed.events.len(), 2);
            assert_eq!(parsed.events[0], e);
        }
    }

    #[test]
    fn only_the_start_of_an_entry_passes_as_torn() {
        let a = event("a\n").render();
        let c = event("c").render();
        let sealed = |junk: &str| format!("{a}{junk}\n{TORN_MARKER}\n\n{c}");
        // Junk, sealed by the next writer: quarantined, not torn.
        let junk = "x".repeat(10_000);
        let parsed = parse_log(&sealed(&junk)).unwrap();
        assert_eq!(parsed.events.len(), 2);
        assert!(parsed.torn.is_empty(), "{:?}", parsed.torn);
        assert_eq!(parsed.quarantined.len(), 1);
        // An entry's start with more body than its metadata says.
        let b = event("b\n").render();
        let cut = b.find("````markdown\n").unwrap() + 13;
        let swollen = format!("{}{}", &b[..cut], "y".repeat(5_000));
        let parsed = parse_log(&sealed(&swollen)).unwrap();
        assert!(parsed.torn.is_empty());
        assert_eq!(parsed.quarantined.len(), 1);
        // What a killed write leaves is torn, as before.
        let parsed = parse_log(&sealed(&b[..cut + 1])).unwrap();
        assert_eq!(parsed.torn.len(), 1);
        assert!(parsed.quarantined.is_empty());
        // Unsealed junk at the end: quarantined, and the file must be closed.
        let unsealed = format!("{a}{junk}\n");
        let parsed = parse_log(&unsealed).unwrap();
        assert!(!parsed.torn_tail && !parsed.ends_cleanly());
        // Its bytes are the same before and after the next writer seals it.
        let before = &unsealed[parsed.quarantined[0].span.clone()];
        let sealed_text = sealed(&junk);
        let after = parse_log(&sealed_text).unwrap();
        assert_eq!(&sealed_text[after.quarantined[0].span.clone()], before);
        // A heading, then anything but memoir's metadata: junk too.
        let fake = format!("## 10:00:00Z note · X\n{}", "z".repeat(5_000));
        let parsed = parse_log(&sealed(&fake)).unwrap();
        assert!(parsed.torn.is_empty());
        assert_eq!(parsed.quarantined.len(), 1);
    }

    #[test]
    fn torn_tail_is_skipped_and_marker_repairs() {
        let a = event("a\n").render();
        let b = event("b\n").render();
        for cut in 1..b.len() - 1 {
            let Some(part) = b.get(..cut) else { continue };
            let text = format!("{a}{part}");
            let torn = text.as_str();
            let parsed = parse_log(torn).unwrap();
            assert_eq!(parsed.events.len(), 1, "cut at {cut}");
            assert!(parsed.torn_tail || cut >= b.len() - 2);
            if !log_ends_cleanly(torn) {
                let repaired = format!("{torn}\n{TORN_MARKER}\n\n{}", event("c").render());
                let parsed = parse_log(&repaired).unwrap();
                // Only the final newline missing: the newline that starts
                // the repair completes the entry, which is then kept.
                let complete = parse_log(&format!("{torn}\n")).is_ok_and(|p| p.events.len() == 2);
                let expected = if complete { 3 } else { 2 };
                assert_eq!(parsed.events.len(), expected, "cut at {cut}");
                assert!(!parsed.torn_tail);
            }
        }
    }

    #[test]
    fn ids_are_distinct_under_a_pinned_clock() {
        let t = Timestamp(0);
        let ids: std::collections::HashSet<_> = (0..1000).map(|_| new_id(t).unwrap()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|i| is_id(i)));
    }

    #[test]
    fn renders_the_documented_grammar() {
        let time = Timestamp::parse("2026-11-29T10:41:07Z").unwrap();
        let e = Event {
            id: id_from(time, [0; 10]),
            prev: vec![id_from(time, [1; 10])],
            body: "x".into(),
            ..event("")
        };
        let expected = concat!(
            "## 10:41:07Z remember project/x · 01M8KE9VDR0000000000000000\n",
            "<!-- memoir {\"v\":1,\"id\":\"01M8KE9VDR0000000000000000\",\"op\":\"remember\",",
            "\"time\":\"2026-11-29T10:41:07.000Z\",\"actor\":\"Ada <ada@example.com>\",",
            "\"key\":\"project/x\",\"prev\":[\"01M8KE9VDR040G2081040G2081\"],",
            "\"reason\":\"a --\\u003e b\",\"len\":1} -->\n",
            "````markdown\nx\n````\n<!-- memoir:end 01M8KE9VDR0000000000000000 -->\n\n",
        );
        assert_eq!(e.render(), expected);
    }

    /// Reads one entry from `text` as `parse_log` does: the event, or the
    /// line and message of the error (line 0 for a torn entry).
    fn entry(text: &str) -> (Result<Event, (usize, String)>, Cursor<'_>) {
        let mut c = Cursor {
            text,
            pos: 0,
            line: 0,
        };
        let result = parse_entry(&mut c).map_err(|e| match e {
            EntryError::Eof => (0, String::new()),
            EntryError::Malformed(line, m) | EntryError::Unsupported(line, m) => (line, m),
        });
        (result, c)
    }

    #[test]
    fn a_body_with_fences_and_crlf_is_read_by_its_length() {
        for body in [
            "```\r\n````\r\n```markdown\r\n<!-- memoir:end X -->\r\n",
            "a\r\n```\r",
            "````",
        ] {
            let e = event(body);
            let text = e.render();
            let (result, c) = entry(&text);
            assert_eq!(result.ok(), Some(e), "{body:?}");
            // Everything but the blank line after the end line, all counted.
            assert_eq!(c.pos, text.len() - 1, "{body:?}");
            assert_eq!(c.line, text.matches('\n').count() - 1, "{body:?}");
        }
    }

    /// An entry to break, and its text: line 1 the heading, 2 the
    /// metadata, 3 the opening fence, 4 and 5 the body (`one\ntwo\n`, 8
    /// bytes), 6 the closing fence, 7 the end line.
    fn entry_to_break() -> (Event, String) {
        let e = event("one\ntwo\n");
        let good = e.render();
        assert!(good.lines().nth(1).unwrap().contains("\"len\":8"), "{good}");
        (e, good)
    }

    /// Reads `text`, `good` with one part broken: the entry's error is on
    /// `line` with `message`.
    fn check(good: &str, text: String, line: usize, message: &str) {
        assert_ne!(text, good, "{message}");
        let (result, _) = entry(&text);
        assert_eq!(result.err(), Some((line, message.to_string())), "{text}");
    }

    #[test]
    fn heading_and_metadata_errors_are_on_their_lines() {
        let (e, good) = entry_to_break();
        let id = &e.id;
        let r = |from: &str, to: &str| good.replacen(from, to, 1);
        let check = |text, line, message| check(&good, text, line, message);
        check(
            r("## ", "# "),
            1,
            "expected an entry heading (`## <time> <op> …`)",
        );
        check(
            r("<!-- memoir {", "<!-- memoir: {"),
            2,
            "expected the entry's `<!-- memoir {…} -->` metadata line",
        );
        check(
            r("\"v\":1", "\"v\":\"1\""),
            2,
            "invalid entry metadata: invalid type: string \"1\", expected u32 at line 1 column 8",
        );
        check(
            r("\"v\":1", "\"v\":2"),
            2,
            "log format version 2 is not supported by this memoir (it reads version 1)",
        );
        check(good.replace(id.as_str(), "x"), 2, "`x` is not an event id");
        check(
            r(id.as_str(), &e.prev[0]),
            2,
            "the heading's id differs from the metadata's",
        );
        check(
            r("\"time\":\"2026", "\"time\":\"1"),
            2,
            "`1-11-29T10:41:07.000Z` is not a UTC time of the form YYYY-MM-DDTHH:MM:SSZ",
        );
        check(
            good.replacen("project/x", "project/X", 2),
            2,
            "`project/X` is not a valid memory key",
        );
        check(
            r("\"op\":\"remember\"", "\"op\":\"note\""),
            2,
            "a `note` entry takes no key",
        );
        check(
            r(
                &format!("\"prev\":[\"{}\"]", e.prev[0]),
                "\"consumed\":[\"y\"]",
            ),
            2,
            "`y` is not an event id",
        );
    }

    #[test]
    fn body_and_end_line_errors_are_on_their_lines() {
        let (_, good) = entry_to_break();
        let r = |from: &str, to: &str| good.replacen(from, to, 1);
        let check = |text, line, message| check(&good, text, line, message);
        check(
            r("````markdown", "``markdown"),
            3,
            "expected the opening fence of the entry's body",
        );
        check(
            r("\"len\":8", "\"len\":6"),
            5,
            "the body is longer than its recorded length",
        );
        check(
            r("\"len\":8", "\"len\":4"),
            5,
            "expected the closing fence of the entry's body",
        );
        check(
            r("two\n````", "two\n```"),
            6,
            "expected the closing fence of the entry's body",
        );
        check(
            r("memoir:end ", "memoir:end  "),
            7,
            "expected the entry's end line `<!-- memoir:end <id> -->`",
        );
        check(r("\"len\":8", "\"len\":80"), 0, "");
        check(
            r("one", "é").replacen("\"len\":8", "\"len\":1", 1),
            3,
            "the body length does not end on a character boundary",
        );
    }
}
