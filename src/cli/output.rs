//! The one place that writes to stdout: text lines, JSON, coloured diffs.

use serde_json::{Map, Value};
use std::io::{self, IsTerminal, Write};

/// Where command output goes, and how.
pub struct Output {
    out: io::StdoutLock<'static>,
    /// `--json`: print data as JSON.
    pub json: bool,
    /// `-q`: print nothing on success.
    pub quiet: bool,
    color: bool,
}

impl Output {
    /// Output to stdout; colour only on a terminal and never with NO_COLOR.
    pub fn new(json: bool, quiet: bool, no_color: bool) -> Output {
        let color = !no_color && io::stdout().is_terminal();
        Output {
            out: io::stdout().lock(),
            json,
            quiet,
            color,
        }
    }

    /// A line of text (not in JSON mode, not when quiet).
    pub fn line(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        if self.json || self.quiet {
            return Ok(());
        }
        writeln!(self.out, "{}", text.as_ref())
    }

    /// Raw text, written as is (for `show`): not when quiet.
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        self.out.write_all(text.as_bytes())
    }

    /// A JSON document (only in JSON mode).
    pub fn json(&mut self, value: &Value) -> io::Result<()> {
        if !self.json {
            return Ok(());
        }
        serde_json::to_writer_pretty(&mut self.out, value)?;
        writeln!(self.out)
    }

    /// A unified diff, coloured on a terminal.
    pub fn diff(&mut self, diff: &str) -> io::Result<()> {
        if self.json || self.quiet {
            return Ok(());
        }
        for line in diff.lines() {
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

/// A date from ms since the epoch, empty when unknown (0).
pub fn day(ms: i64) -> String {
    if ms == 0 {
        String::new()
    } else {
        memoir::time::Timestamp(ms).date().to_string()
    }
}

/// A memory as `list` and `recall` print it in JSON.
pub fn memory_json(
    key: &memoir::key::Key,
    path: &str,
    s: &memoir::memory::Summary,
    conflict: bool,
) -> Map<String, Value> {
    let v = serde_json::json!({
        "key": key.to_string(), "scope": key.scope, "name": s.name, "type": s.kind,
        "description": s.description, "tags": s.tags, "source": s.source,
        "confidence": s.confidence, "updated": day(s.updated), "path": path, "conflict": conflict,
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A warning on stderr (shown even with `--json`; suppressed by `-q`).
pub fn warn(quiet: bool, text: &str) {
    if !quiet {
        eprintln!("memoir: warning: {text}");
    }
}
