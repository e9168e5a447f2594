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
            "## {} {}{} · {}\n{META_PREFIX}{json}{COMMENT_SUFFIX}\n{fence}markdown\n",
            self.time.clock(),
            self.op,
            key,
            self.id
        ));
        out.push_str(&self.body);
        if !self.body.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "{fence}\n{END_PREFIX}{}{COMMENT_SUFFIX}\n\n",
            self.id
        ));
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

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
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

    fn malformed(&self, message: impl Into<String>) -> EntryError {
        EntryError::Malformed(self.line, message.into())
    }
}

fn parse_entry(c: &mut Cursor<'_>) -> Result<Event, EntryError> {
    let heading = c.line()?;
    if !heading.starts_with("## ") {
        return Err(c.malformed("expected an entry heading (`## <time> <op> …`)"));
    }
    let heading_id = heading.rsplit(' ').next().unwrap_or("");
    let meta_line = c.line()?;
    let json = meta_line
        .strip_prefix(META_PREFIX)
        .and_then(|s| s.strip_suffix(COMMENT_SUFFIX))
        .ok_or_else(|| c.malformed("expected the entry's `<!-- memoir {…} -->` metadata line"))?;
    let meta: Meta = serde_json::from_str(json)
        .map_err(|e| c.malformed(format!("invalid entry metadata: {e}")))?;
    if meta.v != FORMAT_VERSION {
        return Err(EntryError::Unsupported(c.line, format!(
            "log format version {} is not supported by this memoir (it reads version {FORMAT_VERSION})",
            meta.v
        )));
    }
    if !is_id(&meta.id) {
        return Err(c.malformed(format!("`{}` is not an event id", meta.id)));
    }
    if heading_id != meta.id {
        return Err(c.malformed("the heading's id differs from the metadata's"));
    }
    let time = Timestamp::parse(&meta.time).map_err(|e| c.malformed(e.to_string()))?;
    let key = meta
        .key
        .as_deref()
        .map(|k| {
            Key::parse(k)
                .ok()
                .filter(|(key, name)| key.slug == *name)
                .map(|(key, _)| key)
                .ok_or_else(|| c.malformed(format!("`{k}` is not a valid memory key")))
        })
        .transpose()?;
    let needs_key = matches!(
        meta.op,
        Op::Propose | Op::Remember | Op::Forget | Op::Resolve
    );
    if needs_key != key.is_some() {
        return Err(c.malformed(format!(
            "a `{}` entry {} a key",
            meta.op,
            if needs_key { "needs" } else { "has no" }
        )));
    }
    if let Some(bad) = meta.prev.iter().chain(&meta.consumed).find(|id| !is_id(id)) {
        return Err(c.malformed(format!("`{bad}` is not an event id")));
    }
    let fence = c.line()?;
    let ticks = fence.len() - fence.trim_start_matches('`').len();
    if ticks < 3 {
        return Err(c.malformed("expected the opening fence of the entry's body"));
    }
    let start = c.pos;
    let end = start.checked_add(meta.len).ok_or(EntryError::Eof)?;
    if end > c.text.len() {
        return Err(EntryError::Eof);
    }
    let body = c
        .text
        .get(start..end)
        .ok_or_else(|| c.malformed("the body length does not end on a character boundary"))?;
    c.line += body.matches('\n').count();
    c.pos = end;
    if !body.ends_with('\n') {
        let rest = c.line()?;
        if !rest.is_empty() {
            return Err(c.malformed("the body is longer than its recorded length"));
        }
    }
    let close = c.line()?;
    if close != &fence[..ticks] {
        return Err(c.malformed("expected the closing fence of the entry's body"));
    }
    let end_line = c.line()?;
    if end_line != format!("{END_PREFIX}{}{COMMENT_SUFFIX}", meta.id) {
        return Err(c.malformed("expected the entry's end line `<!-- memoir:end <id> -->`"));
    }
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
        while text[c.pos..].starts_with('\n') {
            c.pos += 1;
            c.line += 1;
        }
        if c.pos >= text.len() {
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
        let marker = find_torn_marker(&text[entry_pos..])
            .map(|(after, lines)| (entry_pos + after, entry_line - 1 + lines));
        // A malformed entry is skipped up to the next entry that parses; a
        // torn one (cut short by a crash) up to the marker that a later
        // writer put after it. Whichever comes first decides which it was.
        let next = if line == 0 {
            None
        } else {
            next_entry(text, entry_pos, entry_line)
        };
        match (marker, next) {
            (Some((at, lines)), next) if next.is_none_or(|(n, _)| at <= n) => {
                out.torn.push(entry_line);
                (c.pos, c.line) = (at, lines);
            }
            (_, Some((at, lines))) => {
                out.quarantined.push(Quarantined {
                    line: entry_line,
                    error: LogError { line, message },
                });
                (c.pos, c.line) = (at, lines);
            }
            (_, None) if line == 0 => {
                out.torn.push(entry_line);
                out.torn_tail = true;
                return Ok(out);
            }
            (_, None) => {
                // Nothing after it parses: the file ends in this entry, and
                // the next writer must close it before appending.
                out.quarantined.push(Quarantined {
                    line: entry_line,
                    error: LogError { line, message },
                });
                out.open_end = true;
                return Ok(out);
            }
        }
    }
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
        if rest.starts_with("## ") && rest[end..].starts_with(META_PREFIX) {
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
}
