//! The memory file: YAML frontmatter between `---` lines, then a markdown body.
//!
//! A memory file's bytes are what the log carries; this module only reads
//! them (to validate, index and search) and renders new ones. The splitter is
//! hand-written because pulldown-cmark's metadata blocks drop `\r`, miss a
//! leading BOM and accept a block in the middle of a document.

use crate::model::time::{Date, Timestamp};
use crate::model::yaml_bounds;
use serde_yaml::{Mapping, Value};
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
    // Trailing whitespace, `\r` included, is not part of a fence.
    if text[..first_end].trim_end() != "---" {
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
        let line = content[pos..end].trim_end();
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

impl Memory {
    /// Parses and validates a memory file's content.
    pub fn parse(content: &str) -> Result<Memory, MemoryError> {
        check_size(content)?;
        let sp = split(content)?;
        let fm = Frontmatter::read(content, &sp)?;
        let name = fm.required("name")?;
        let description = fm.required("description")?;
        let kind = fm.kind()?;
        let tags = fm.tags()?;
        let source = fm.non_blank("source")?;
        let confidence = fm.confidence()?;
        Ok(Memory {
            name,
            description,
            kind,
            tags,
            source,
            confidence,
            created: fm.parsed("created", Timestamp::parse)?,
            updated: fm.parsed("updated", Timestamp::parse)?,
            review_by: fm.parsed("review_by", Date::parse)?,
            expires: fm.parsed("expires", Date::parse)?,
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
        let string = |s: &str| Value::String(s.to_string());
        let mut fields = vec![
            ("name", string(&self.name)),
            ("description", string(&self.description)),
            ("type", string(self.kind.as_str())),
        ];
        if !self.tags.is_empty() {
            let tags = self.tags.iter().map(|t| string(t)).collect();
            fields.push(("tags", Value::Sequence(tags)));
        }
        if let Some(s) = &self.source {
            fields.push(("source", string(s)));
        }
        if let Some(c) = self.confidence {
            fields.push(("confidence", Value::Number(c.into())));
        }
        for (k, t) in [("created", self.created), ("updated", self.updated)] {
            if let Some(t) = t {
                fields.push((k, Value::String(t.seconds())));
            }
        }
        for (k, d) in [("review_by", self.review_by), ("expires", self.expires)] {
            if let Some(d) = d {
                fields.push((k, Value::String(d.to_string())));
            }
        }
        let mut out = String::from("---\n");
        out.push_str(&yaml_fields(&fields));
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

/// Refuses a file over [`MAX_FILE_BYTES`] (a rule of the write policy).
fn check_size(content: &str) -> Result<(), MemoryError> {
    if content.len() <= MAX_FILE_BYTES {
        return Ok(());
    }
    Err(MemoryError {
        rule: Some("size"),
        ..err(
            None,
            format!(
                "file is {} bytes, more than the limit of {MAX_FILE_BYTES}",
                content.len()
            ),
        )
    })
}

/// A file's frontmatter, read as a mapping with string keys, and where its
/// YAML lies in the file (for the lines of errors).
struct Frontmatter<'a> {
    /// The YAML between the fences.
    yaml: &'a str,
    /// How many lines of the file come before the YAML.
    before: usize,
    /// The YAML's top-level mapping.
    map: Mapping,
}

impl<'a> Frontmatter<'a> {
    /// Checks and parses the YAML of `sp`, a split of `content`.
    fn read(content: &str, sp: &Split<'a>) -> Result<Frontmatter<'a>, MemoryError> {
        let mut fm = Frontmatter {
            yaml: sp.yaml,
            before: content[..sp.yaml_start].matches('\n').count(),
            map: Mapping::new(),
        };
        fm.check_indentation()?;
        fm.check_bounds()?;
        let value = fm.value()?;
        fm.map = fm.mapping(value)?;
        Ok(fm)
    }

    /// The 1-based file line of the YAML's 0-based line `i`.
    fn file_line(&self, i: usize) -> usize {
        self.before + i + 1
    }

    /// Refuses a tab that indents a line.
    fn check_indentation(&self) -> Result<(), MemoryError> {
        match self.yaml.lines().position(|l| l.starts_with('\t')) {
            Some(i) => Err(err(
                Some(self.file_line(i)),
                "tab used for indentation in frontmatter (YAML allows only spaces)",
            )),
            None => Ok(()),
        }
    }

    /// Bounded before the parser, whose time grows with the nesting's square.
    fn check_bounds(&self) -> Result<(), MemoryError> {
        yaml_bounds::check(self.yaml).map_err(|e| {
            err(
                Some(self.file_line(e.line)),
                format!("frontmatter: {}", e.message),
            )
        })
    }

    /// The parsed YAML; `Null` when there is none.
    fn value(&self) -> Result<Value, MemoryError> {
        if self.yaml.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_yaml::from_str(self.yaml).map_err(|e| {
            let line = e.location().map(|l| self.before + l.line());
            let msg = e.to_string();
            // serde_yaml appends " at line X column Y"; we report the file line ourselves.
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            err(line, format!("invalid YAML in frontmatter: {msg}"))
        })
    }

    /// The YAML as a mapping whose keys are all strings.
    fn mapping(&self, value: Value) -> Result<Mapping, MemoryError> {
        let map = match value {
            Value::Mapping(m) => m,
            Value::Null => return Err(err(Some(1), "empty frontmatter: `name` is required")),
            _ => {
                return Err(err(
                    Some(self.file_line(0)),
                    "frontmatter is not a mapping of keys to values",
                ))
            }
        };
        if map.keys().any(|k| !matches!(k, Value::String(_))) {
            return Err(err(
                Some(self.file_line(0)),
                "a frontmatter key is not a string",
            ));
        }
        Ok(map)
    }

    /// The 1-based file line on which top-level `key:` is written, if it is.
    fn line_of(&self, key: &str) -> Option<usize> {
        self.yaml.lines().enumerate().find_map(|(i, l)| {
            let rest = l.strip_prefix(key)?;
            rest.trim_start()
                .starts_with(':')
                .then(|| self.file_line(i))
        })
    }

    /// The value of `key`; `None` when absent or null.
    fn get(&self, key: &str) -> Option<&Value> {
        match self.map.get(Value::String(key.to_string())) {
            None | Some(Value::Null) => None,
            value => value,
        }
    }

    /// An optional string field.
    fn string(&self, key: &str) -> Result<Option<&str>, MemoryError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(err(self.line_of(key), format!("`{key}` must be a string"))),
        }
    }

    /// An optional string field that is not blank when present.
    fn non_blank(&self, key: &str) -> Result<Option<String>, MemoryError> {
        match self.string(key)? {
            Some(s) if s.trim().is_empty() => {
                Err(err(self.line_of(key), format!("`{key}` is empty")))
            }
            s => Ok(s.map(str::to_string)),
        }
    }

    /// A string field that must be present and not blank.
    fn required(&self, key: &str) -> Result<String, MemoryError> {
        match self.get(key) {
            // A missing field has no line of its own: the file's first.
            None => Err(err(Some(1), format!("`{key}` is required"))),
            Some(_) => Ok(self.non_blank(key)?.unwrap_or_default()),
        }
    }

    /// `type`: one of the four [`MemoryType`]s (a rule of the write policy).
    fn kind(&self) -> Result<MemoryType, MemoryError> {
        let text = self.required("type")?;
        MemoryType::parse(&text).ok_or_else(|| MemoryError {
            rule: Some("type"),
            ..err(
                self.line_of("type"),
                format!("unknown type `{text}` (expected user, feedback, project or reference)"),
            )
        })
    }

    /// `tags`: a list of non-empty one-line strings; empty when absent.
    fn tags(&self) -> Result<Vec<String>, MemoryError> {
        let line = || self.line_of("tags");
        match self.get("tags") {
            None => Ok(Vec::new()),
            Some(Value::Sequence(seq)) => seq
                .iter()
                .map(|v| match v {
                    Value::String(s) if !s.trim().is_empty() && !s.contains('\n') => Ok(s.clone()),
                    _ => Err(err(line(), "every tag must be a non-empty one-line string")),
                })
                .collect(),
            Some(_) => Err(err(line(), "`tags` must be a list, like [a, b]")),
        }
    }

    /// `confidence`: a number from 0 to 1.
    fn confidence(&self) -> Result<Option<f64>, MemoryError> {
        let line = || self.line_of("confidence");
        match self.get("confidence") {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if (0.0..=1.0).contains(&x) => Ok(Some(x)),
                _ => Err(err(line(), "`confidence` must be between 0 and 1")),
            },
            Some(_) => Err(err(line(), "`confidence` must be a number between 0 and 1")),
        }
    }

    /// An optional string field, read with `parse` (a time's or a date's).
    fn parsed<T, E: fmt::Display>(
        &self,
        key: &str,
        parse: fn(&str) -> Result<T, E>,
    ) -> Result<Option<T>, MemoryError> {
        self.string(key)?
            .map(|s| parse(s).map_err(|e| err(self.line_of(key), format!("`{key}`: {e}"))))
            .transpose()
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

/// Renders `key: value` YAML lines, one a field, in the order given.
pub fn yaml_fields(fields: &[(&str, Value)]) -> String {
    let mut m = serde_yaml::Mapping::new();
    for (k, v) in fields {
        m.insert(Value::String((*k).to_string()), v.clone());
    }
    // Serializing a map of plain values cannot fail.
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

    /// A valid frontmatter with `extra` YAML lines from line 5 on.
    fn with(extra: &str) -> String {
        format!("---\nname: x\ndescription: y\ntype: user\n{extra}---\n")
    }

    #[test]
    fn each_field_reader_reports_its_message_and_line() {
        let check = |text: &str, expected: &str| {
            let e = Memory::parse(text).unwrap_err();
            assert_eq!(e.to_string(), expected, "{text:?}");
            let rule = expected.contains("unknown type").then_some("type");
            assert_eq!(e.rule, rule, "{text:?}");
        };
        check("---\ndescription: y\n---\n", "line 1: `name` is required");
        check("---\nname: ~\n---\n", "line 1: `name` is required");
        check(
            "---\nname: x\ndescription: ' '\n---\n",
            "line 3: `description` is empty",
        );
        check("---\nname: [x]\n---\n", "line 2: `name` must be a string");
        check(
            "---\nname: x\ndescription: y\n---\n",
            "line 1: `type` is required",
        );
        check(
            &with("").replace("user", "bogus"),
            "line 4: unknown type `bogus` (expected user, feedback, project or reference)",
        );
        check(
            &with("tags: a\n"),
            "line 5: `tags` must be a list, like [a, b]",
        );
        check(
            &with("tags:\n- a\n- ''\n"),
            "line 5: every tag must be a non-empty one-line string",
        );
        check(
            &with("tags: [\"a\\nb\"]\n"),
            "line 5: every tag must be a non-empty one-line string",
        );
        check(&with("source: ' '\n"), "line 5: `source` is empty");
        check(&with("source: 3\n"), "line 5: `source` must be a string");
        check(
            &with("confidence: 1.5\n"),
            "line 5: `confidence` must be between 0 and 1",
        );
        check(
            &with("confidence: high\n"),
            "line 5: `confidence` must be a number between 0 and 1",
        );
        check(&with("created: 5\n"), "line 5: `created` must be a string");
        check(
            &with("source: s\nupdated: 2026-11-29\n"),
            "line 6: `updated`: `2026-11-29` is not a UTC time of the form YYYY-MM-DDTHH:MM:SSZ",
        );
        check(
            &with("review_by: soon\n"),
            "line 5: `review_by`: `soon` is not a date of the form YYYY-MM-DD",
        );
        check(
            &with("expires: 2027-02-30\n"),
            "line 5: `expires`: `2027-02-30` is not a date of the form YYYY-MM-DD",
        );
    }

    #[test]
    fn the_field_read_first_decides_the_error() {
        // Two problems: the one `parse` reads first is reported.
        let e = Memory::parse(&with("expires: x\ntags: 1\n")).unwrap_err();
        assert_eq!(e.to_string(), "line 6: `tags` must be a list, like [a, b]");
        let e = Memory::parse(&with("confidence: 2\n").replace("user", "x")).unwrap_err();
        assert_eq!(e.rule, Some("type"));
    }

    #[test]
    fn frontmatter_errors_carry_file_lines() {
        let deep = format!("{}\n", "[".repeat(40));
        let cases = [
            (
                "---\n---\n".to_string(),
                "line 1: empty frontmatter: `name` is required",
            ),
            (
                "---\n# only a comment\n---\n".to_string(),
                "line 1: empty frontmatter: `name` is required",
            ),
            (
                "\u{feff}---\r\n- a\r\n---\r\n".to_string(),
                "line 2: frontmatter is not a mapping of keys to values",
            ),
            (
                "---\nname: x\n[a]: b\n---\n".to_string(),
                "line 2: a frontmatter key is not a string",
            ),
            (
                "---\nname: x\ndescription: y\n\ttype: user\n---\n".to_string(),
                "line 4: tab used for indentation in frontmatter (YAML allows only spaces)",
            ),
            (
                with(&format!("a: b\nnested: {deep}")),
                "line 6: frontmatter: YAML nested deeper than 32 levels",
            ),
            (
                with("a: [b\n"),
                "line 6: invalid YAML in frontmatter: did not find expected ',' or ']'",
            ),
        ];
        for (text, expected) in &cases {
            let e = Memory::parse(text).unwrap_err();
            assert_eq!(e.to_string(), *expected, "{text:?}");
            assert_eq!(e.rule, None);
        }
    }

    #[test]
    fn size_is_a_rule_past_the_limit() {
        let text = with("");
        let at_limit = format!("{text}{}", "x".repeat(MAX_FILE_BYTES - text.len()));
        assert!(Memory::parse(&at_limit).is_ok());
        let e = Memory::parse(&format!("{at_limit}x")).unwrap_err();
        assert_eq!((e.line, e.rule), (None, Some("size")));
        assert_eq!(
            e.message,
            format!(
                "file is {} bytes, more than the limit of {MAX_FILE_BYTES}",
                MAX_FILE_BYTES + 1
            )
        );
    }

    #[test]
    fn renders_fields_in_a_fixed_order() {
        let m = Memory::parse(GOOD).unwrap();
        let expected = concat!(
            "---\nname: test-command\ndescription: Run `pnpm test`.\ntype: project\n",
            "tags:\n- a\n- b\nsource: user\nconfidence: 0.9\ncreated: 2026-11-29T10:41:07Z\n",
            "review_by: 2027-05-29\n---\n\nBody\n",
        );
        assert_eq!(m.render(), expected);
        let bare = Memory {
            body: String::new(),
            tags: vec![],
            source: None,
            confidence: None,
            created: None,
            review_by: None,
            ..m
        };
        assert_eq!(
            bare.render(),
            "---\nname: test-command\ndescription: Run `pnpm test`.\ntype: project\n---\n"
        );
    }
}
