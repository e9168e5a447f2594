//! The log files: listing them (only regular files, never through a link),
//! reading and parsing them as every reader must (torn and malformed
//! entries quarantined), and appending to this writer's (one write and an
//! fsync per file, a torn end closed first).

use crate::fs::safe_file::MAX_LOG_BYTES;
use crate::model::event::{self, Event, LogError, ParsedLog, TORN_MARKER};
use crate::model::stamp::Stamp;
use crate::store::{refuse_special, refuse_symlink, Store, StoreError};
use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};

/// The store-relative path of a writer's log for a day.
pub fn log_path(writer: &str, day: crate::model::time::Date) -> String {
    format!("memory/log/{day}/{writer}.md")
}

/// A log file found on disk.
#[derive(Debug, Clone)]
pub struct LogFile {
    /// Store-relative path.
    pub rel: String,
    /// Its size and modification time when listed.
    pub stamp: Stamp,
}

/// Refuses to write views from the logs when one of them could not be
/// read: its events are unknown, so a view could be removed or a hand edit
/// recorded against versions that are only missing from this read.
pub(crate) fn all_logs_read(issues: &[LogIssue]) -> Result<(), StoreError> {
    match issues.iter().find(|i| i.error) {
        Some(i) => Err(StoreError::Invalid {
            path: i.path.clone(),
            line: None,
            message: format!(
                "{}; memoir writes nothing from the logs until every log can be read",
                i.message.trim_end_matches(" (skipped)")
            ),
        }),
        None => Ok(()),
    }
}

/// Something a reader of the logs skipped, and where: a torn or
/// quarantined entry, a file that is no log, a replay's warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogIssue {
    /// Store-relative path (`memory/log` when no one file).
    pub path: String,
    /// 1-based line, when there is one.
    pub line: Option<usize>,
    /// What was skipped and why.
    pub message: String,
    /// A log could not be read: `check` fails on it, and nothing is
    /// written from the logs until it can be.
    pub error: bool,
    /// An entry no reader can use and no one has accepted: `check` fails
    /// on it (so a hook or CI stops it), while writes go on around it.
    pub review: bool,
}

impl std::fmt::Display for LogIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// A quarantined entry's problem, naming where the entry starts when that
/// is not the line at fault.
pub(crate) fn quarantine_message(q: &event::Quarantined) -> String {
    if q.error.line != q.line {
        format!(
            "malformed entry (from line {}): {}",
            q.line, q.error.message
        )
    } else {
        format!("malformed entry: {}", q.error.message)
    }
}

/// An error's message without the path it names (the issue names it).
pub(crate) fn error_message(e: &StoreError) -> String {
    e.detail()
}

/// All events of the store's logs, with what a reader should be told.
#[derive(Debug, Default)]
pub struct Logs {
    /// Every event, in file order, file by file.
    pub events: Vec<Event>,
    /// Warnings: torn entries skipped.
    pub warnings: Vec<String>,
    /// Each log file and the range of `events` it holds.
    pub files: Vec<(String, std::ops::Range<usize>)>,
}

/// The logs that grew since `recorded` (their stamps when last read), each
/// with the offset it grew from (0 for a new log); `None` when a recorded
/// log was removed or rewritten (anything but grown), which needs a full
/// replay.
pub(crate) fn log_growth<'a>(
    files: &'a [LogFile],
    recorded: &BTreeMap<String, Stamp>,
) -> Option<Vec<(&'a LogFile, u64)>> {
    let mut grown = Vec::new();
    let mut seen = 0;
    for f in files {
        match recorded.get(&f.rel) {
            Some(old) if *old == f.stamp => seen += 1,
            Some(old) if f.stamp.size > old.size => {
                seen += 1;
                grown.push((f, old.size));
            }
            None => grown.push((f, 0)),
            Some(_) => return None,
        }
    }
    (seen == recorded.len()).then_some(grown)
}

/// Appends events to this writer's logs (one file per UTC day) with one
/// write and an fsync per file; repairs a torn final entry first.
/// Returns the files appended to with their new stamps.
pub(crate) fn append(store: &Store, events: &[Event]) -> Result<Vec<LogFile>, StoreError> {
    let mut by_file: BTreeMap<String, String> = BTreeMap::new();
    for e in events {
        let rel = log_path(&store.writer, e.time.date());
        by_file.entry(rel).or_default().push_str(&e.render());
    }
    let mut out = Vec::new();
    let clean = store.state.appended_logs();
    for (rel, text) in by_file {
        let stamp = append_to(store, &rel, &text, clean.get(&rel))?;
        out.push(LogFile { rel, stamp });
    }
    let stamps: Vec<(String, Stamp)> = out.iter().map(|f| (f.rel.clone(), f.stamp)).collect();
    let _ = store.state.set_appended_logs(&stamps);
    Ok(out)
}

/// Appends `text` to the log `rel` with one write and an fsync (its
/// folder's too when the file is new), closing a torn end first unless
/// the log is still as memoir's last append left it (`clean`: its stamp
/// then). Returns the log's new stamp.
fn append_to(
    store: &Store,
    rel: &str,
    text: &str,
    clean: Option<&Stamp>,
) -> Result<Stamp, StoreError> {
    store.check_dirs(rel)?;
    let path = store.path(rel);
    let dir = path.parent().unwrap_or(&store.root).to_path_buf();
    let new_dir = !dir.exists();
    fs::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
    let mut f = open_log(store, rel)?;
    let meta = f.metadata().map_err(StoreError::io(&path))?;
    refuse_special(&meta, rel)?;
    let len = meta.len();
    let full = || {
        StoreError::Refused {
        rule: "size".into(),
        path: rel.to_string(),
        line: None,
        message: format!(
            "this writer's log for the day would pass {MAX_LOG_BYTES} bytes, more than memoir reads; nothing written"
        ),
    }
    };
    if len + text.len() as u64 > MAX_LOG_BYTES {
        return Err(full());
    }
    let mut payload = String::new();
    // A log as memoir left it after its last append ends cleanly; any
    // other (a crash in the middle of an append, a teammate's tool, a
    // checkout) is read as a reader reads it.
    if len > 0 && clean != Some(&Stamp::of(&meta)) {
        // Read as every reader reads it: a torn or malformed end (or
        // a final entry whose length runs past the file) is closed.
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(StoreError::io(&path))?;
        if !event::log_ends_cleanly(&String::from_utf8_lossy(&bytes)) {
            payload.push_str(&format!("\n{TORN_MARKER}\n\n"));
        }
    }
    payload.push_str(text);
    if len + payload.len() as u64 > MAX_LOG_BYTES {
        return Err(full());
    }
    f.write_all(payload.as_bytes())
        .and_then(|_| f.sync_data())
        .map_err(StoreError::io(&path))?;
    if len == 0 {
        // A new file's directory entry must be durable too.
        let _ = fs::File::open(&dir).and_then(|d| d.sync_all());
        if new_dir {
            if let Some(parent) = dir.parent() {
                let _ = fs::File::open(parent).and_then(|d| d.sync_all());
            }
        }
    }
    Ok(Stamp::of(&f.metadata().map_err(StoreError::io(&path))?))
}

/// Opens (creating) a log to append to, never through a link and never
/// blocked on a FIFO.
fn open_log(store: &Store, rel: &str) -> Result<fs::File, StoreError> {
    let path = store.path(rel);
    refuse_symlink(&path, rel)?;
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    options.open(&path).map_err(|e| {
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            StoreError::link(rel)
        } else {
            StoreError::Io { path, source: e }
        }
    })
}

/// Every log file, sorted by path (only regular files: see
/// [`log_listing`]).
pub fn log_files(store: &Store) -> Result<Vec<LogFile>, StoreError> {
    Ok(log_listing(store)?.0)
}

/// The log file at `rel` as [`log_listing`] would list it (`None`: gone,
/// or skipped there: a link, not a regular file, too large, in a linked
/// day folder). What the watcher says changed is read this way.
pub(crate) fn log_file_at(store: &Store, rel: &str) -> Result<Option<LogFile>, StoreError> {
    refuse_symlink(&store.path("memory/log"), "memory/log")?;
    let Some((day, name)) = rel
        .strip_prefix("memory/log/")
        .and_then(|r| r.split_once('/'))
    else {
        return Ok(None);
    };
    if crate::model::time::Date::parse(day).is_err()
        || name.contains('/')
        || !name.ends_with(".md")
        || name.starts_with('.')
    {
        return Ok(None);
    }
    let day_dir = store.path(&format!("memory/log/{day}"));
    match fs::symlink_metadata(&day_dir) {
        Ok(m) if m.is_dir() => {}
        _ => return Ok(None),
    }
    match fs::symlink_metadata(store.path(rel)) {
        Ok(m) if m.is_file() && m.len() <= MAX_LOG_BYTES => Ok(Some(LogFile {
            rel: rel.to_string(),
            stamp: Stamp::of(&m),
        })),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(store.path(rel))(e)),
    }
}

/// Every log file, sorted by path, and what is in the log folder that
/// memoir will not read as a log (a link, a FIFO, a device: never
/// opened, so never followed and never waited on).
pub fn log_listing(store: &Store) -> Result<(Vec<LogFile>, Vec<LogIssue>), StoreError> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let log_dir = store.path("memory/log");
    refuse_symlink(&log_dir, "memory/log")?;
    let Ok(days) = fs::read_dir(&log_dir) else {
        return Ok((out, skipped));
    };
    let not_a_log = |rel: String, what: &str| LogIssue {
        path: rel,
        line: None,
        message: format!("{what}; memoir reads only regular files as logs (skipped)"),
        error: true,
        review: false,
    };
    for day in days.flatten() {
        let name = day.file_name().to_string_lossy().to_string();
        let ft = day.file_type().map_err(StoreError::io(day.path()))?;
        if ft.is_symlink() && crate::model::time::Date::parse(&name).is_ok() {
            skipped.push(not_a_log(
                format!("memory/log/{name}"),
                "is a symbolic link",
            ));
            continue;
        }
        if !ft.is_dir() || crate::model::time::Date::parse(&name).is_err() {
            continue;
        }
        let files = fs::read_dir(day.path()).map_err(StoreError::io(day.path()))?;
        for f in files.flatten() {
            let fname = f.file_name().to_string_lossy().to_string();
            if !fname.ends_with(".md") || fname.starts_with('.') {
                continue;
            }
            let rel = format!("memory/log/{name}/{fname}");
            let meta = match fs::symlink_metadata(f.path()) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io(f.path())(e)),
            };
            if meta.file_type().is_symlink() {
                skipped.push(not_a_log(rel, "is a symbolic link"));
            } else if !meta.is_file() {
                skipped.push(not_a_log(rel, "is not a regular file"));
            } else if meta.len() > MAX_LOG_BYTES {
                skipped.push(LogIssue {
                    path: rel,
                    line: None,
                    message: format!(
                        "is {} bytes, more than the {MAX_LOG_BYTES} memoir reads (skipped; memoir will not rebuild or record without it)",
                        meta.len()
                    ),
                    error: true,
                    review: false,
                });
            } else {
                out.push(LogFile {
                    rel,
                    stamp: Stamp::of(&meta),
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((out, skipped))
}

/// Parses a log's text as every reader must: malformed entries, and
/// entries for a scope the store does not have (a forged entry must not
/// make a folder), are quarantined.
pub(crate) fn parse_log(store: &Store, rel: &str, text: &str) -> Result<ParsedLog, StoreError> {
    let mut parsed = event::parse_log(text).map_err(|e| StoreError::log(rel, e))?;
    if parsed
        .events
        .iter()
        .any(|e| e.key.as_ref().is_some_and(|k| !store.has_scope(&k.scope)))
    {
        let events = std::mem::take(&mut parsed.events);
        let spans = std::mem::take(&mut parsed.spans);
        for (e, span) in events.into_iter().zip(spans) {
            match e.key.as_ref().filter(|k| !store.has_scope(&k.scope)) {
                None => {
                    parsed.events.push(e);
                    parsed.spans.push(span);
                }
                Some(k) => {
                    let line = text[..span.start].matches('\n').count() + 1;
                    parsed.quarantined.push(event::Quarantined {
                        line,
                        span,
                        error: LogError {
                            line,
                            message: format!(
                                "entry {} is for the unknown scope `{}` (configured: {})",
                                e.id,
                                k.scope,
                                store.config.scopes.join(", ")
                            ),
                        },
                    });
                }
            }
        }
    }
    Ok(parsed)
}

/// A log's text. Bytes that are not UTF-8 are replaced (U+FFFD), so that
/// only the entries holding them fail their length check and are
/// quarantined, rather than the whole log.
pub(crate) fn read_log(store: &Store, rel: &str) -> Result<String, StoreError> {
    let cap = MAX_LOG_BYTES;
    match crate::fs::safe_file::read(&store.path(rel), cap) {
        Ok(Some(bytes)) => {
            let text = match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
            // Checked out by a clone with core.autocrlf before the
            // store's `-text` attributes were committed: read as written.
            Ok(crate::model::text::git_crlf_undone(&text).unwrap_or(text))
        }
        Ok(None) => Ok(String::new()),
        Err(e) => Err(StoreError::unreadable(rel, e, cap)),
    }
}
