//! The one place that writes output: text lines, JSON and coloured diffs
//! on stdout, diagnostics on stderr.
//!
//! Whatever memoir prints may come from a file anyone could write: control
//! characters (an ESC sequence in a description) are shown escaped, never
//! sent to a terminal raw; and a diagnostic never holds a secret, whoever
//! built its message (clap echoes a bad argument, a path may carry a
//! token).

use memoir::change::drift::{Problem, Severity};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt::Display;
use std::io::{self, IsTerminal, Write};

/// Where command output goes, and how.
pub struct Output {
    out: Sink,
    /// `--json`: print data as JSON.
    pub json: bool,
    /// `-q`: print nothing on success.
    pub quiet: bool,
    color: bool,
    /// stdout is a terminal.
    terminal: bool,
    /// What is printed is vetted ([`Output::vetted`]): not scanned again.
    vetted: bool,
}

/// Where the output is written.
enum Sink {
    /// stdout, locked for the command's life.
    Stdout(io::StdoutLock<'static>),
    /// A buffer.
    Memory(Vec<u8>),
}

/// Writes to stdout or the buffer.
impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(o) => o.write(buf),
            Sink::Memory(m) => m.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(o) => o.flush(),
            Sink::Memory(_) => Ok(()),
        }
    }
}

/// Everything a command prints on stdout.
impl Output {
    /// Output to stdout; colour only on a terminal and never with NO_COLOR.
    pub fn new(json: bool, quiet: bool, no_color: bool) -> Output {
        let terminal = io::stdout().is_terminal();
        Output {
            out: Sink::Stdout(io::stdout().lock()),
            json,
            quiet,
            color: !no_color && terminal,
            terminal,
            vetted: false,
        }
    }

    /// JSON output kept in memory, for `memoir mcp` (whose stdout is the
    /// protocol's): [`Output::captured`] gives it back.
    pub fn capture() -> Output {
        Output {
            out: Sink::Memory(Vec::new()),
            json: true,
            quiet: false,
            color: false,
            terminal: false,
            vetted: false,
        }
    }

    /// What a [`Output::capture`] output holds.
    pub fn captured(self) -> Vec<u8> {
        match self.out {
            Sink::Memory(bytes) => bytes,
            Sink::Stdout(_) => Vec::new(),
        }
    }

    /// Says that what the command prints from now on is the data asked
    /// for, or the reason it exits non-zero: `-q` drops chatter only, so it
    /// no longer hides it (warnings stay quiet).
    pub fn show_data(&mut self) {
        self.quiet = false;
    }

    /// Says whether what the command prints from now on holds only text
    /// the persistent index vouches for (the secret scanner found nothing
    /// in it when it was indexed, under today's rules) and the command's
    /// own words: then it is printed without a second scan, which would
    /// start the scanner (milliseconds, most of a warm recall's time).
    /// Diagnostics are scanned whatever this says.
    pub fn vetted(&mut self, vetted: bool) {
        self.vetted = vetted;
    }

    /// `text`, with its secrets redacted unless it is vetted.
    fn redacted<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.vetted {
            true => Cow::Borrowed(text),
            false => memoir::policy::secrets::redacted(text),
        }
    }

    /// A line of text (not in JSON mode, not when quiet).
    pub fn line(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        if self.json || self.quiet {
            return Ok(());
        }
        let text = self.redacted(text.as_ref());
        writeln!(self.out, "{}", printable(&text, true))
    }

    /// Raw text (for `show`): exact into a pipe or a file, control
    /// characters escaped on a terminal; not when quiet.
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        // A file written around the policy: its secret is not shown.
        let text = self.redacted(text);
        if self.terminal {
            return self.out.write_all(printable(&text, true).as_bytes());
        }
        self.out.write_all(text.as_bytes())
    }

    /// One line per item, each `prefix` then the item: a list of keys or
    /// paths (`{verb}write <path>`, `  <key>`).
    pub fn items<T: Display>(&mut self, prefix: &str, items: &[T]) -> io::Result<()> {
        for item in items {
            self.line(format!("{prefix}{item}"))?;
        }
        Ok(())
    }

    /// A JSON document (only in JSON mode): an object, given the
    /// [`JSON_FORMAT`] version of its shape as its first field.
    pub fn json(&mut self, value: &Value) -> io::Result<()> {
        if !self.json {
            return Ok(());
        }
        self.json_document(value)
    }

    /// A JSON document whatever the mode (`diff --format json`), as
    /// [`Output::json`] prints it.
    pub fn json_document(&mut self, value: &Value) -> io::Result<()> {
        let value = &versioned(value);
        let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        if let Cow::Borrowed(_) = self.redacted(&text) {
            return writeln!(self.out, "{text}");
        }
        // Redacted string by string: the document stays valid JSON.
        let mut value = value.clone();
        memoir::policy::secrets::redact_json(&mut value);
        serde_json::to_writer_pretty(&mut self.out, &value)?;
        writeln!(self.out)
    }

    /// A JSON document of one list, `{"format": 1, "<key>": [...]}`.
    pub fn json_list(&mut self, key: &str, items: Vec<Value>) -> io::Result<()> {
        let mut m = Map::new();
        m.insert(key.to_string(), Value::Array(items));
        self.json(&Value::Object(m))
    }

    /// A unified diff, coloured on a terminal.
    pub fn diff(&mut self, diff: &str) -> io::Result<()> {
        if self.json || self.quiet {
            return Ok(());
        }
        let diff = memoir::policy::secrets::redacted(diff);
        for line in diff.lines() {
            let line = printable(line, false);
            let color = match line.as_bytes().first() {
                _ if !self.color => None,
                Some(b'+') if !line.starts_with("+++") => Some("32"),
                Some(b'-') if !line.starts_with("---") => Some("31"),
                Some(b'@') => Some("36"),
                _ => None,
            };
            match color {
                Some(c) => writeln!(self.out, "\x1b[{c}m{line}\x1b[0m")?,
                None => writeln!(self.out, "{line}")?,
            }
        }
        Ok(())
    }

    /// Flushes stdout.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The version of the JSON documents' shapes (docs/cli.md): every
/// document carries it as `"format"`, and it changes when a documented
/// field changes its meaning or goes away.
pub const JSON_FORMAT: u32 = 1;

/// `value` with `"format"` first (an object; anything else is wrapped as
/// `{"format", "value"}`, which no command prints).
fn versioned(value: &Value) -> Value {
    let mut m = Map::new();
    m.insert("format".into(), JSON_FORMAT.into());
    match value {
        Value::Object(fields) => m.extend(
            fields
                .iter()
                .filter(|(k, _)| *k != "format")
                .map(|(k, v)| (k.clone(), v.clone())),
        ),
        other => {
            m.insert("value".into(), other.clone());
        }
    }
    Value::Object(m)
}

/// A time from ms since the epoch as every JSON document gives one,
/// `YYYY-MM-DDTHH:MM:SSZ`; null when unknown (0).
pub fn timestamp(ms: i64) -> Value {
    if ms == 0 {
        Value::Null
    } else {
        memoir::model::time::Timestamp(ms).seconds().into()
    }
}

/// A date from ms since the epoch, empty when unknown (0).
pub fn day(ms: i64) -> String {
    if ms == 0 {
        String::new()
    } else {
        memoir::model::time::Timestamp(ms).date().to_string()
    }
}

/// How many terminal cells `text` takes (a CJK character two).
pub fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` padded with spaces to `width` cells.
pub fn pad(text: &str, width: usize) -> String {
    let w = display_width(text);
    format!("{text}{}", " ".repeat(width.saturating_sub(w)))
}

/// Fields in a line, two spaces apart: `<key>  <description>`, and every
/// other table a command prints (`list`, `recall`, `status`, `versions`,
/// `history`).
pub fn columns(fields: &[&dyn Display]) -> String {
    // One line each: a newline in a hand-edited description must not
    // print a row of its own (a forged key under `list`).
    fields
        .iter()
        .map(|f| printable(&f.to_string(), false).into_owned())
        .collect::<Vec<_>>()
        .join("  ")
}

/// A memory's flags after its line: ` [conflict]`, ` [review overdue]`.
pub fn flags(conflict: bool, stale: bool) -> String {
    let mut flags = String::new();
    if conflict {
        flags.push_str(" [conflict]");
    }
    if stale {
        flags.push_str(" [review overdue]");
    }
    flags
}

/// A commit id as commands print it: its first 12 characters.
pub fn short_id(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// `would ` on a dry run, else nothing: `would write memory/…`.
pub fn would(dry_run: bool) -> &'static str {
    if dry_run {
        "would "
    } else {
        ""
    }
}

/// A problem `check` found, as compilers print them:
/// `<path>[:<line>]: <error|warning>[<rule>]: <message>`.
pub fn problem(p: &Problem) -> String {
    let line = p.line.map(|l| format!(":{l}")).unwrap_or_default();
    format!(
        "{}{line}: {}[{}]: {}",
        p.path,
        severity(p.severity),
        p.rule,
        p.message
    )
}

/// A problem's severity as text and JSON name it.
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Keys (or any values) as the strings of a JSON list.
pub fn strings<T: Display>(items: &[T]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

/// A memory as `list` and `recall` print it in JSON.
pub fn memory_json(
    key: &memoir::model::key::Key,
    path: &str,
    s: &memoir::model::memory::Summary,
    conflict: bool,
) -> Map<String, Value> {
    let v = serde_json::json!({
        "key": key.to_string(), "scope": key.scope, "name": s.name, "type": s.kind,
        "description": s.description, "tags": s.tags, "source": s.source,
        "confidence": s.confidence, "updated": timestamp(s.updated), "path": path, "conflict": conflict,
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A warning on stderr (shown even with `--json`; suppressed by `-q`).
pub fn warn(quiet: bool, text: &str) {
    if !quiet {
        diagnostic(&format!("memoir: warning: {text}"));
    }
}

/// A line on stderr, as every diagnostic is printed: secrets redacted,
/// control characters escaped, newlines too (input quoted in a message
/// must not forge a line of its own).
pub fn diagnostic(text: &str) {
    eprintln!("{}", printable(&redacted(text), false));
}

/// A diagnostic of several lines that memoir composed itself (clap's
/// usage errors): as [`diagnostic`], its lines kept.
pub fn diagnostic_lines(text: &str) {
    eprintln!("{}", printable(&redacted(text), true));
}

pub use memoir::model::text::printable;

/// `text` with no secret in it, by the one masking rule
/// (`memoir::policy::mask`) over the arguments memoir was given.
pub fn redacted(text: &str) -> String {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    memoir::policy::mask::masked(text, &args)
}

pub use memoir::model::text::count;

/// Long work's progress on a terminal: one line on stderr, redrawn at
/// most ten times a second and cleared at the end. (Hand-written: a
/// counter on one line is all it draws, which a progress-bar crate and its
/// five dependencies would not improve.) Only set when stderr is a
/// terminal and neither `--json` nor `-q` was given.
#[derive(Debug, Default)]
pub struct TerminalProgress {
    /// When the line was last drawn; none: never.
    drawn: std::sync::Mutex<Option<std::time::Instant>>,
}

impl TerminalProgress {
    /// Whether progress is shown at all: stderr a terminal, not `--json`,
    /// not `-q`.
    pub fn wanted(json: bool, quiet: bool) -> bool {
        !json && !quiet && io::stderr().is_terminal()
    }
}

/// A command that fails part-way never calls `finish`: the line is erased
/// when the store lets go of it, before the error is printed, so the error
/// starts a line of its own.
impl Drop for TerminalProgress {
    fn drop(&mut self) {
        memoir::store::Progress::finish(self);
    }
}

impl memoir::store::Progress for TerminalProgress {
    fn advance(&self, task: &str, done: usize, total: usize) {
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        let now = std::time::Instant::now();
        if drawn.is_some_and(|t| now.duration_since(t).as_millis() < 100) && done < total {
            return;
        }
        *drawn = Some(now);
        // `\r` and erase-line: the next draw, or the end, replaces it.
        let _ = write!(io::stderr().lock(), "\r\x1b[2K{task}: {done}/{total}");
    }

    fn finish(&self) {
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        if drawn.take().is_some() {
            let _ = write!(io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
