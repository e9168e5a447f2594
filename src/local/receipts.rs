//! Receipts: what each `memoir context` call injected, kept in the local
//! state as `receipts.jsonl` (format in `docs/format.md`, section 7).
//!
//! One JSON object per line, appended in one write each, oldest first.
//! The file is bounded: once an append takes it past
//! [`MAX_RECEIPTS_BYTES`], the newest half is kept (rewritten atomically).
//! It is a record for people, never an input to a decision: a line that
//! does not parse is skipped, and reading never fails.
//!
//! Writers hold the receipts' lock (`StateDir::seen_lock_path`, taken by
//! `ops::seen`): an append racing the rewrite that keeps the newest half
//! would land in the file being replaced and be lost. Readers take no
//! lock: the rewrite is a rename, and each append is one `O_APPEND` write,
//! so a reader sees whole lines and at most a last one still being
//! written, which has no newline yet and is ignored.

use crate::model::time::Timestamp;
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The receipts' format version, each line's `v`.
pub const RECEIPT_VERSION: u32 = 1;
/// Past this size (1 MiB) the file keeps only its newest half.
pub const MAX_RECEIPTS_BYTES: u64 = 1 << 20;
/// The longest query a receipt keeps, in characters (a prompt can be
/// megabytes; a receipt stays a line a person reads).
pub const MAX_QUERY_CHARS: usize = 1000;

/// How long a recorder waits for another to finish (each holds the lock
/// for a few milliseconds; a prompt must not wait longer than this).
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// What a context call injected: a query's relevant memories or the hot
/// memory of a session's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `context <query>`: `<relevant_memories>`.
    Query,
    /// `context` without a query: `<hot_memory>`.
    Hot,
}

impl Kind {
    /// The name the file and `memoir seen` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Query => "query",
            Kind::Hot => "hot",
        }
    }
}

/// A memory a context call injected, with the version ids it had then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injected {
    /// Its key, `scope/slug`.
    pub key: String,
    /// Its head version ids (event ids) at that moment: one, or several
    /// for an open conflict.
    pub versions: Vec<String>,
}

/// One context call that injected something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The format version ([`RECEIPT_VERSION`]).
    pub v: u32,
    /// When, as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    #[serde(with = "millis")]
    pub time: Timestamp,
    /// What was injected.
    pub kind: Kind,
    /// The query as asked (secrets redacted, cut at [`MAX_QUERY_CHARS`]);
    /// none for the hot memory, or when the store keeps only hashes.
    pub query: Option<String>,
    /// 16 hex digits of FNV-1a-64 of the query as asked; none for the hot
    /// memory.
    pub query_hash: Option<String>,
    /// The memories injected, in the order of the block.
    pub memories: Vec<Injected>,
    /// The event ids of the notes injected (unconfirmed observations).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The token budget as set (`--budget`).
    pub budget: usize,
    /// The part of the budget this store had, when it shared the budget
    /// with the person's own store (which speaks first, within a third);
    /// none when it had the whole budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<usize>,
    /// The tokens the block used.
    pub tokens: usize,
    /// Memories relevant (or indexed) but left out by the budget.
    pub omitted: usize,
    /// A Claude Code hook asked (`context --from-hook`).
    pub hook: bool,
}

/// Times as event metadata writes them.
mod millis {
    use crate::model::time::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&t.millis())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Appends a receipt to the file at `path` (creating it) in one write,
/// then keeps only the newest half once the file passes
/// Takes the lock that recorders of receipts and the access signal hold
/// for a few milliseconds, waiting at most `wait`. Not the store lock, so
/// its failure is an I/O error (saying the store is locked would be
/// wrong), and a holder past the wait is named by its pid.
pub fn lock(path: &Path, wait: std::time::Duration) -> io::Result<crate::local::lock::StoreLock> {
    use crate::local::lock::{LockError, StoreLock};
    StoreLock::acquire(path, wait).map_err(|e| match e {
        LockError::Io { source, .. } => source,
        LockError::Timeout { holder, secs, .. } => io::Error::other(format!(
            "held by another memoir process{} for {secs}s",
            holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
        )),
    })
}

/// [`MAX_RECEIPTS_BYTES`]. The caller holds the receipts' lock.
pub fn append(path: &Path, receipt: &Receipt) -> io::Result<()> {
    let mut line = serde_json::to_string(receipt).map_err(io::Error::other)?;
    line.push('\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)?;
    let len = file.metadata()?.len();
    // A crash mid-append leaves a line without its end: close it, or the
    // new receipt would be glued to it and lost with it.
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            line.insert(0, '\n');
        }
    }
    file.write_all(line.as_bytes())?;
    if len + line.len() as u64 > MAX_RECEIPTS_BYTES {
        keep_newest_half(path)?;
    }
    Ok(())
}

/// Rewrites the file with its newest whole lines that fit in half of
/// [`MAX_RECEIPTS_BYTES`].
fn keep_newest_half(path: &Path) -> io::Result<()> {
    let bytes = read_tail(path, 2 * MAX_RECEIPTS_BYTES)?;
    let keep = (MAX_RECEIPTS_BYTES / 2) as usize;
    let start = bytes.len().saturating_sub(keep);
    // From the first line that begins at or after `start`.
    let from = match start {
        0 => 0,
        _ => bytes[start - 1..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i),
    };
    crate::local::state::write_replace(path, &bytes[from..])
}

/// The last `cap` bytes of the file at most, from the start of a line
/// (empty if there is no file).
fn read_tail(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let from = len.saturating_sub(cap);
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::with_capacity((len - from) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    if from > 0 {
        // Started inside a line: drop what is left of it.
        let cut = bytes.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.drain(..cut);
    }
    Ok(bytes)
}

/// Rewrites the file at `path` with `edit` applied to each line, if that
/// changes any (`redact`: a query that held a secret). The caller holds
/// the receipts' lock. `true` if it was rewritten.
pub fn rewrite(path: &Path, edit: impl Fn(&str) -> String) -> io::Result<bool> {
    let bytes = read_tail(path, 2 * MAX_RECEIPTS_BYTES)?;
    let text = String::from_utf8_lossy(&bytes);
    let edited: String = text.split_inclusive('\n').map(&edit).collect();
    if edited == text {
        return Ok(false);
    }
    crate::local::state::write_replace(path, edited.as_bytes())?;
    Ok(true)
}

/// The receipts a file holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Receipts {
    /// Oldest first.
    pub receipts: Vec<Receipt>,
    /// Whole lines that did not parse as a receipt of this version.
    pub skipped: usize,
}

/// Reads the receipts at `path`: none if there is no file or it cannot be
/// read. A line that does not parse is skipped and counted; a last line
/// without its newline (being written, or torn by a crash) is ignored.
pub fn read(path: &Path) -> Receipts {
    // Twice the bound: the file passes it by one receipt at most.
    let bytes = read_tail(path, 2 * MAX_RECEIPTS_BYTES).unwrap_or_default();
    let mut out = Receipts::default();
    let whole = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&[][..], |i| &bytes[..i]);
    for line in whole.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Receipt>(line) {
            Ok(r) if r.v == RECEIPT_VERSION => out.receipts.push(r),
            _ => out.skipped += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(i: usize, query: &str) -> Receipt {
        Receipt {
            v: RECEIPT_VERSION,
            time: Timestamp(1_795_000_000_000 + i as i64),
            kind: Kind::Query,
            query: Some(query.into()),
            query_hash: Some("00000000000000aa".into()),
            memories: vec![Injected {
                key: "project/db".into(),
                versions: vec!["01HX0000000000000000000000".into()],
            }],
            notes: Vec::new(),
            budget: 1500,
            share: None,
            tokens: 40 + i,
            omitted: 0,
            hook: i % 2 == 0,
        }
    }

    #[test]
    fn receipts_read_back_oldest_first_and_a_bad_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("receipts.jsonl");
        assert_eq!(read(&path), Receipts::default(), "no file: nothing");
        append(&path, &receipt(0, "first")).expect("append");
        // A damaged line, a future version and a torn end (a crash
        // mid-append): skipped, and the next append starts a line of its own.
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{not json\n{\"v\":2}\n{\"v\":1,\"ti")
            .expect("write");
        append(&path, &receipt(1, "second")).expect("append");
        let got = read(&path);
        assert_eq!(got.receipts, [receipt(0, "first"), receipt(1, "second")]);
        assert_eq!(got.skipped, 3, "two bad lines and the torn one, closed");
        // A line still being written (no newline yet) is not counted.
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{\"v\":1").expect("write");
        assert_eq!(read(&path).skipped, 3);
        // The file format: one object per line, times in milliseconds.
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.starts_with("{\"v\":1,\"time\":\"2026-11-18T"),
            "{text}"
        );
        assert!(text.contains("\"kind\":\"query\""), "{text}");
    }

    #[test]
    fn past_its_bound_the_file_keeps_its_newest_half() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("receipts.jsonl");
        let long = "q".repeat(MAX_QUERY_CHARS);
        let mut i = 0;
        while std::fs::metadata(&path).map_or(0, |m| m.len()) <= MAX_RECEIPTS_BYTES / 2 + 4096 {
            append(&path, &receipt(i, &long)).expect("append");
            i += 1;
        }
        let mut sizes = Vec::new();
        for _ in 0..2000 {
            append(&path, &receipt(i, &long)).expect("append");
            sizes.push(std::fs::metadata(&path).expect("stat").len());
            i += 1;
        }
        assert!(sizes.iter().all(|&s| s <= MAX_RECEIPTS_BYTES), "bounded");
        assert!(
            sizes.windows(2).any(|w| w[1] < w[0]),
            "it was cut at least once"
        );
        let got = read(&path);
        assert_eq!(got.skipped, 0, "cut at a line's end");
        let last = got.receipts.last().expect("receipts");
        assert_eq!(last, &receipt(i - 1, &long), "the newest kept");
        let first = got.receipts.first().expect("receipts");
        assert!(first.tokens > 40, "the oldest dropped");
    }
}
