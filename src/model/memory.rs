//! The memory file: YAML frontmatter between `---` lines, then a markdown body.
//!
//! A memory file's bytes are what the log carries; this module only reads
//! them (to validate, index and search) and renders new ones. The splitter is
//! hand-written because pulldown-cmark's metadata blocks drop `\r`, miss a
//! leading BOM and accept a block in the middle of a document.

use crate::model::time::{Date, Timestamp};
use serde_yaml::Value;
use std::fmt;

/// The largest memory file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 256 * 1024;

/// The four kinds of memory (Claude Code's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemoryType {
    /// About the user: role, preferences, knowledge.
    User,
    /// Guidance the user gave on how to work.
    Feedback,
    /// Facts about the project.
    Project,
    /// Pointers to where information lives.
    Reference,
}

impl MemoryType {
    /// Every type, in index order.
    pub const ALL: [MemoryType; 4] = [
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Project,
        MemoryType::Reference,
    ];

    /// The type's name as written in frontmatter.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    /// Parses a type name.
    pub fn parse(s: &str) -> Option<MemoryType> {
        MemoryType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Display name; normalizes to the file's slug.
    pub name: String,
    /// One-line summary, shown in MEMORY.md.
    pub description: String,
    /// The kind of memory.
    pub kind: MemoryType,
    /// Free-form labels.
    pub tags: Vec<String>,
    /// Why it can be trusted (required when written; `record` fills it).
    pub source: Option<String>,
    /// 0..=1.
    pub confidence: Option<f64>,
    /// When first written.
    pub created: Option<Timestamp>,
    /// When last changed.
    pub updated: Option<Timestamp>,
    /// Stale after this date.
    pub review_by: Option<Date>,
    /// Forgotten by consolidation after this date.
    pub expires: Option<Date>,
    /// The markdown after the frontmatter, exactly as in the file.
    pub body: String,
}

/// What is wrong with a memory file; `line` is 1-based within the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct MemoryError {
    /// The line the problem is on, when there is one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// Set when the problem is one the write policy refuses (exit 3), not malformed input.
    pub rule: Option<&'static str>,
}

fn err(line: Option<usize>, message: impl Into<String>) -> MemoryError {
    MemoryError {
        line,
        message: message.into(),
        rule: None,
    }
}

/// A memory file split into its parts, byte-exact.
#[derive(Debug, Clone, Copy)]
pub struct Split<'a> {
    /// The YAML between the fences.
    pub yaml: &'a str,
    /// Byte offset of `yaml` in the file.
    pub yaml_start: usize,
    /// Byte offset of the closing fence line.
    pub yaml_end: usize,
    /// Everything after the closing fence line.
    pub body: &'a str,
    /// The file uses CRLF line endings in its frontmatter.
    pub crlf: bool,
}

/// Splits frontmatter from body. Accepts a UTF-8 BOM, CRLF, `...` as the
/// closing fence and a file without a final newline.
pub fn split(content: &str) -> Result<Split<'_>, MemoryError> {
    let start = if content.starts_with('\u{feff}') {
        3
    } else {
        0
    };
    let text = &content[start..];
    let first_end = text.find('\n').unwrap_or(text.len());
    let first = text[..first_end].trim_end_matches('\r');
    if first.trim_end() != "---" {
        return Err(err(
            Some(1),
            "no frontmatter: the file must start with a `---` line",
        ));
    }
    let crlf = text[..first_end].ends_with('\r');
    let yaml_start = start + (first_end + 1).min(text.len());
    let mut pos = yaml_start;
    while pos < content.len() {
        let end = content[pos..].find('\n').map_or(content.len(), |i| pos + i);
        let line = content[pos..end].trim_end_matches('\r').trim_end();
        if line == "---" || line == "..." {
            let body_start = (end + 1).min(content.len());
            return Ok(Split {
                yaml: &content[yaml_start..pos],
                yaml_start,
                yaml_end: pos,
                body: &content[body_start..],
                crlf,
            });
        }
        pos = end + 1;
    }
    Err(err(Some(1), "unclosed frontmatter: no closing `---` line"))
}

/// The 1-based file line on which top-level `key:` is written, if it is.
fn key_line(content: &str, split: &Split<'_>, key: &str) -> Option<usize> {
    let base = content[..split.yaml_start].matches('\n').count() + 1;
    split.yaml.lines().enumerate().find_map(|(i, l)| {
        let rest = l.strip_prefix(key)?;
        rest.trim_start().starts_with(':').then_some(base + i)
    })
}

impl Memory {
    /// Parses and validates a memory file's content.
    pub fn parse(content: &str) -> Result<Memory, MemoryError> {
        if content.len() > MAX_FILE_BYTES {
            return Err(MemoryError {
                rule: Some("size"),
                ..err(
                    None,
                    format!(
                        "file is {} bytes, more than the limit of {MAX_FILE_BYTES}",
                        content.len()
                    ),
                )
            });
        }
        let sp = split(content)?;
        let fm_line = content[..sp.yaml_start].matches('\n').count();
        if let Some(i) = sp.yaml.lines().position(|l| l.starts_with('\t')) {
            return Err(err(
                Some(fm_line + i + 1),
                "tab used for indentation in frontmatter (YAML allows only spaces)",
            ));
        }
        // Bounded before the parser, whose time grows with the nesting's square.
        crate::model::yaml_bounds::check(sp.yaml).map_err(|e| {
            err(
                Some(fm_line + e.line + 1),
                format!("frontmatter: {}", e.message),
            )
        })?;
        let value: Value = if sp.yaml.trim().is_empty() {
            Value::Null
        } else {
            serde_yaml::from_str(sp.yaml).map_err(|e| {
                let line = e.location().map(|l| fm_line + l.line());
                let msg = e.to_string();
                // serde_yaml appends " at line X column Y"; we report the file line ourselves.
                let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
                err(line, format!("invalid YAML in frontmatter: {msg}"))
            })?
        };
        let map = match value {
            Value::Mapping(m) => m,
            Value::Null => return Err(err(Some(1), "empty frontmatter: `name` is required")),
            _ => {
                return Err(err(
                    Some(fm_line + 1),
                    "frontmatter is not a mapping of keys to values",
                ))
            }
        };
        let line_of = |k: &str| key_line(content, &sp, k);
        let get = |k: &str| map.get(Value::String(k.to_string()));
        let string = |k: &str, required: bool| -> Result<Option<String>, MemoryError> {
            match get(k) {
                None | Some(Value::Null) if required => {
                    Err(err(Some(1), format!("`{k}` is required")))
                }
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.trim().is_empty() && required => {
                    Err(err(line_of(k), format!("`{k}` is empty")))
                }
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(err(line_of(k), format!("`{k}` must be a string"))),
            }
        };
        for (k, _) in &map {
            if !matches!(k, Value::String(_)) {
                return Err(err(Some(fm_line + 1), "a frontmatter key is not a string"));
            }
        }
        let name = string("name", true)?.unwrap_or_default();
        let description = string("description", true)?.unwrap_or_default();
        let type_text = string("type", true)?.unwrap_or_default();
        let kind = MemoryType::parse(&type_text).ok_or_else(|| MemoryError {
            rule: Some("type"),
            ..err(
                line_of("type"),
                format!(
                    "unknown type `{type_text}` (expected user, feedback, project or reference)"
                ),
            )
        })?;
        let tags = match get("tags") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Sequence(seq)) => seq
                .iter()
                .map(|v| match v {
                    Value::String(s) if !s.trim().is_empty() && !s.contains('\n') => Ok(s.clone()),
                    _ => Err(err(
                        line_of("tags"),
                        "every tag must be a non-empty one-line string",
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(err(line_of("tags"), "`tags` must be a list, like [a, b]")),
        };
        let source = string("source", false)?;
        if source.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return Err(err(line_of("source"), "`source` is empty"));
        }
        let confidence = match get("confidence") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if (0.0..=1.0).contains(&x) => Some(x),
                _ => {
                    return Err(err(
                        line_of("confidence"),
                        "`confidence` must be between 0 and 1",
                    ))
                }
            },
            Some(_) => {
                return Err(err(
                    line_of("confidence"),
                    "`confidence` must be a number between 0 and 1",
                ))
            }
        };
        let time = |k: &str| -> Result<Option<Timestamp>, MemoryError> {
            string(k, false)?
                .map(|s| Timestamp::parse(&s).map_err(|e| err(line_of(k), format!("`{k}`: {e}"))))
                .transpose()
        };
        let date = |k: &str| -> Result<Option<Date>, MemoryError> {
            string(k, false)?
                .map(|s| Date::parse(&s).map_err(|e| err(line_of(k), format!("`{k}`: {e}"))))
                .transpose()
        };
        Ok(Memory {
            name,
            description,
            kind,
            tags,
            source,
            confidence,
            created: time("created")?,
            updated: time("updated")?,
            review_by: date("review_by")?,
            expires: date("expires")?,
            // The blank line memoir writes after the frontmatter is not part of the body.
            body: sp
                .body
                .strip_prefix("\r\n")
                .or_else(|| sp.body.strip_prefix('\n'))
                .unwrap_or(sp.body)
                .to_string(),
        })
    }

    /// Renders a memory file as memoir writes it: frontmatter fields in a
    /// fixed order, a blank line, then the body.
    pub fn render(&self) -> String {
        let mut out = String::from("---\n");
        let mut field = |k: &str, v: Value| {
            let mut m = serde_yaml::Mapping::new();
            m.insert(Value::String(k.to_string()), v);
            // Serializing a one-key map of plain values cannot fail.
            out.push_str(&serde_yaml::to_string(&m).unwrap_or_default());
        };
        field("name", Value::String(self.name.clone()));
        field("description", Value::String(self.description.clone()));
        field("type", Value::String(self.kind.as_str().to_string()));
        if !self.tags.is_empty() {
            field(
                "tags",
                Value::Sequence(self.tags.iter().cloned().map(Value::String).collect()),
            );
        }
        if let Some(s) = &self.source {
            field("source", Value::String(s.clone()));
        }
        if let Some(c) = self.confidence {
            field("confidence", Value::Number(c.into()));
        }
        for (k, t) in [("created", self.created), ("updated", self.updated)] {
            if let Some(t) = t {
                field(k, Value::String(t.seconds()));
            }
        }
        for (k, d) in [("review_by", self.review_by), ("expires", self.expires)] {
            if let Some(d) = d {
                field(k, Value::String(d.to_string()));
            }
        }
        out.push_str("---\n");
        if !self.body.is_empty() {
            out.push('\n');
            out.push_str(&self.body);
            // A file memoir writes ends with a newline, like any text file.
            if !self.body.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

/// What the index, near-duplicate detection and listings need of a memory,
/// kept in the persistent index so that no command re-reads every file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Display name.
    pub name: String,
    /// One-line summary.
    pub description: String,
    /// Type name (`user`, `feedback`, `project`, `reference`).
    pub kind: String,
    /// Labels.
    pub tags: Vec<String>,
    /// Why it can be trusted.
    pub source: Option<String>,
    /// 0..=1; 1 when absent.
    pub confidence: f64,
    /// Last change, ms since the epoch; 0 when absent.
    pub updated: i64,
    /// Stale after this date (days since the epoch).
    pub review_by: Option<i64>,
    /// Forgotten after this date (days since the epoch).
    pub expires: Option<i64>,
}

impl Summary {
    /// Summarizes a parsed memory.
    pub fn of(m: &Memory) -> Summary {
        Summary {
            name: m.name.clone(),
            description: m.description.clone(),
            kind: m.kind.as_str().to_string(),
            tags: m.tags.clone(),
            source: m.source.clone(),
            confidence: m.confidence.unwrap_or(1.0),
            updated: m.updated.or(m.created).map_or(0, |t| t.0),
            review_by: m.review_by.map(|d| d.0),
            expires: m.expires.map(|d| d.0),
        }
    }
}

/// Adds `fields` (already-rendered `key: value` YAML lines) at the end of a
/// file's frontmatter, keeping every other byte, comments included.
pub fn append_fields(content: &str, fields: &str) -> Result<String, MemoryError> {
    let sp = split(content)?;
    let mut added = fields.to_string();
    if sp.crlf {
        added = added.replace('\n', "\r\n");
    }
    let mut out = String::with_capacity(content.len() + added.len() + 2);
    out.push_str(&content[..sp.yaml_end]);
    if sp.yaml_end > sp.yaml_start && !content[..sp.yaml_end].ends_with('\n') {
        out.push_str(if sp.crlf { "\r\n" } else { "\n" });
    }
    out.push_str(&added);
    out.push_str(&content[sp.yaml_end..]);
    Ok(out)
}

/// Renders `key: value` YAML lines for string fields.
pub fn yaml_fields(fields: &[(&str, Value)]) -> String {
    let mut m = serde_yaml::Mapping::new();
    for (k, v) in fields {
        m.insert(Value::String((*k).to_string()), v.clone());
    }
    serde_yaml::to_string(&m).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "---\nname: test-command\ndescription: Run `pnpm test`.\ntype: project\ntags: [a, b]\nsource: user\nconfidence: 0.9\ncreated: 2026-11-29T10:41:07Z\nreview_by: 2027-05-29\n---\n\nBody\n";

    #[test]
    fn parses_and_renders() {
        let m = Memory::parse(GOOD).unwrap();
        assert_eq!(m.kind, MemoryType::Project);
        assert_eq!(m.tags, ["a", "b"]);
        assert_eq!(m.body, "Body\n");
        let again = Memory::parse(&m.render()).unwrap();
        assert_eq!(again.name, m.name);
        assert_eq!(again.confidence, Some(0.9));
        assert_eq!(again.created, m.created);
    }

    #[test]
    fn bom_crlf_and_no_final_newline() {
        let text = "\u{feff}---\r\nname: x\r\ndescription: y\r\ntype: user\r\n---\r\nbody";
        let m = Memory::parse(text).unwrap();
        assert_eq!(m.name, "x");
        assert_eq!(m.body, "body");
        let added = append_fields(text, "source: s\n").unwrap();
        assert!(added.contains("type: user\r\nsource: s\r\n---"));
        assert_eq!(Memory::parse(&added).unwrap().source.as_deref(), Some("s"));
    }

    #[test]
    fn errors_carry_lines() {
        let e = Memory::parse("---\nname: x\ndescription: y\ntype: user\nconfidence: 7\n---\n")
            .unwrap_err();
        assert_eq!(e.line, Some(5));
        let e = Memory::parse("---\nname: x\nname: y\n---\n").unwrap_err();
        assert!(e.message.contains("duplicate"), "{e}");
        let e = Memory::parse("---\nname: x\n").unwrap_err();
        assert!(e.message.contains("unclosed"));
        let e = Memory::parse("---\nname: x\n\tdescription: y\n---\n").unwrap_err();
        assert_eq!(e.line, Some(3));
    }
}
