//! Claude Code's auto memory, as its documentation and its own files
//! give it: a folder of topic files (one fact each, YAML frontmatter
//! `name`, `description`, and `metadata: {type, modified,
//! originSessionId}`, older files a top-level `type:`) and a `MEMORY.md`
//! index of lines `- [Title](file.md) — hook`, of which Claude Code loads
//! the first 200 lines or 25,000 bytes.
//!
//! memoir's export adds two metadata keys Claude Code keeps as they are
//! (`memoirKey`, `source`), so that importing what was exported gives
//! back the same memories.

use crate::model::memory::{self, MemoryType};
use serde_yaml::Value;

/// The index file's name.
pub const INDEX: &str = "MEMORY.md";
/// Claude Code loads at most this many lines of the index…
pub const INDEX_LINES: usize = 200;
/// …and at most this many bytes.
pub const INDEX_BYTES: usize = 25_000;
/// The longest index line Claude Code's own guidance asks for.
const INDEX_LINE_CHARS: usize = 150;

/// One topic file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    /// The file's name in the folder (`feedback_commits.md`).
    pub file: String,
    /// Its title (`name:`), free text.
    pub title: String,
    /// The one-line description.
    pub description: String,
    /// Its type (user, feedback, project, reference).
    pub kind: MemoryType,
    /// `metadata.modified` (or a top-level `modified`), as written.
    pub modified: Option<String>,
    /// `metadata.originSessionId`.
    pub origin_session: Option<String>,
    /// `metadata.memoirKey`: the memory memoir exported it from.
    pub memoir_key: Option<String>,
    /// `metadata.source`: that memory's source.
    pub source: Option<String>,
    /// The fact itself, markdown (`[[links]]` and all).
    pub body: String,
}

/// Why a topic file cannot be read: its 1-based line where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicError {
    /// 1-based line in the file.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Reads a topic file.
pub fn parse_topic(file: &str, text: &str) -> Result<Topic, TopicError> {
    let bad = |line: Option<usize>, message: String| TopicError { line, message };
    let split = memory::split(text).map_err(|e| bad(e.line, e.message))?;
    // The frontmatter is the user's, possibly hostile: the same bounds as a memory's.
    let yaml_line = text[..split.yaml_start].lines().count() + 1;
    crate::model::yaml_bounds::check(split.yaml)
        .map_err(|e| bad(Some(yaml_line + e.line), e.message))?;
    let fm: Value = serde_yaml::from_str(split.yaml).map_err(|e| {
        let line = e.location().map(|l| yaml_line + l.line().saturating_sub(1));
        bad(line, format!("frontmatter is not YAML ({e})"))
    })?;
    let Value::Mapping(_) = fm else {
        return Err(bad(
            Some(yaml_line),
            "frontmatter must be a mapping of fields".into(),
        ));
    };
    let meta = fm.get("metadata");
    // Newer files nest under `metadata`; older ones have the field at the top.
    let field = |name: &str| -> Option<String> {
        meta.and_then(|m| m.get(name))
            .or_else(|| fm.get(name))
            .and_then(scalar)
    };
    let title = fm.get("name").and_then(scalar).unwrap_or_default();
    let description = fm.get("description").and_then(scalar).unwrap_or_default();
    if description.trim().is_empty() {
        return Err(bad(Some(yaml_line), "no `description`".into()));
    }
    let kind_text = field("type").unwrap_or_else(|| "project".into());
    let kind = MemoryType::parse(kind_text.trim()).ok_or_else(|| {
        bad(
            Some(yaml_line),
            format!(
                "unknown type `{}` (expected user, feedback, project or reference)",
                kind_text.trim()
            ),
        )
    })?;
    Ok(Topic {
        file: file.to_string(),
        title: title.trim().to_string(),
        description: description.trim().to_string(),
        kind,
        modified: field("modified"),
        origin_session: field("originSessionId"),
        memoir_key: field("memoirKey"),
        source: field("source"),
        body: split.body.trim_start_matches(['\n', '\r']).to_string(),
    })
}

/// A YAML scalar as text.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A topic file as memoir's export writes it (Claude Code's current shape).
pub fn render_topic(t: &Topic) -> String {
    let mut meta = serde_yaml::Mapping::new();
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            meta.insert(k.into(), v.clone().into());
        }
    };
    put("type", &Some(t.kind.as_str().to_string()));
    put("modified", &t.modified);
    put("originSessionId", &t.origin_session);
    put("memoirKey", &t.memoir_key);
    put("source", &t.source);
    let mut fm = serde_yaml::Mapping::new();
    fm.insert("name".into(), t.title.clone().into());
    fm.insert("description".into(), t.description.clone().into());
    fm.insert("metadata".into(), Value::Mapping(meta));
    let yaml = serde_yaml::to_string(&Value::Mapping(fm)).unwrap_or_default();
    let mut out = format!("---\n{yaml}---\n\n{}", t.body);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The index's line for a topic: `- [Title](file.md) — hook`, under 150 characters.
pub fn index_line(title: &str, file: &str, hook: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>()
            .replace(['[', ']'], "")
    };
    let head = format!("- [{}]({file}) — ", clean(title));
    let room = INDEX_LINE_CHARS
        .saturating_sub(head.chars().count())
        .max(20);
    let hook = clean(hook);
    let hook = if hook.chars().count() > room {
        let cut: String = hook.chars().take(room - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        hook
    };
    format!("{head}{hook}")
}

/// The index from its lines, most valuable first, kept within what
/// Claude Code loads, and how many lines it kept; those left out are
/// counted in a last line.
pub fn render_index(lines: &[String]) -> (String, usize) {
    let mut out = String::new();
    let mut kept = 0;
    for line in lines {
        // One line is kept for the count of those left out.
        if kept + 1 >= INDEX_LINES || out.len() + line.len() + 1 + 80 > INDEX_BYTES {
            break;
        }
        out.push_str(line);
        out.push('\n');
        kept += 1;
    }
    if kept < lines.len() {
        out.push_str(&format!(
            "- {} more memories are in memoir (`memoir list`)\n",
            lines.len() - kept
        ));
    }
    (out, kept)
}

/// The folder name Claude Code gives a project under `~/.claude/projects/`:
/// its canonical root with every character outside `[A-Za-z0-9]` a `-`.
/// (Past 200 characters Claude Code cuts it and adds a hash, which memoir
/// cannot compute: the caller looks for a folder with the cut prefix.)
pub fn project_folder(root: &str) -> String {
    root.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both shapes of frontmatter are read: nested metadata and top-level type.
    #[test]
    fn reads_both_frontmatter_shapes() {
        let nested = "---\nname: Commit style\ndescription: Small commits, imperative subjects\nmetadata:\n  type: feedback\n  modified: 2026-10-02\n  originSessionId: 4d1c\n---\n\nKeep commits small.\n\n**Why:** review.\n";
        let t = parse_topic("feedback_commits.md", nested).unwrap();
        assert_eq!(
            (t.title.as_str(), t.kind),
            ("Commit style", MemoryType::Feedback)
        );
        assert_eq!(t.modified.as_deref(), Some("2026-10-02"));
        assert_eq!(t.origin_session.as_deref(), Some("4d1c"));
        assert!(t.body.starts_with("Keep commits small."));
        let old = "---\nname: role\ndescription: Ada is the tech lead\ntype: user\n---\nLeads the payments team.\n";
        assert_eq!(
            parse_topic("user_role.md", old).unwrap().kind,
            MemoryType::User
        );
    }

    /// A bad file says what and where.
    #[test]
    fn bad_files_name_their_line() {
        let cases = [
            ("no frontmatter\n", "no frontmatter"),
            ("---\nname: x\ndescription: [unclosed\n---\n", "not YAML"),
            ("---\nname: x\n---\nbody\n", "no `description`"),
            (
                "---\ndescription: d\ntype: opinion\n---\n",
                "unknown type `opinion`",
            ),
        ];
        for (text, expected) in cases {
            let e = parse_topic("f.md", text).unwrap_err();
            assert!(e.message.contains(expected), "{text:?}: {e:?}");
            assert!(e.line.is_some(), "{text:?}");
        }
    }

    /// What render_topic writes, parse_topic reads back the same.
    #[test]
    fn a_rendered_topic_reads_back() {
        let t = Topic {
            file: "project_db.md".into(),
            title: "db: the \"main\" one".into(),
            description: "Postgres 16 — see [[deploys]]".into(),
            kind: MemoryType::Project,
            modified: Some("2026-11-29".into()),
            origin_session: None,
            memoir_key: Some("project/db".into()),
            source: Some("stated by the user".into()),
            body: "Body with [[links]].\n".into(),
        };
        assert_eq!(parse_topic("project_db.md", &render_topic(&t)).unwrap(), t);
    }

    /// The index stays within Claude Code's load limit and says what it left out.
    #[test]
    fn the_index_fits_the_load_limit() {
        let lines: Vec<String> = (0..500)
            .map(|i| {
                index_line(
                    &format!("Memory {i}"),
                    &format!("m{i}.md"),
                    &"a long hook ".repeat(20),
                )
            })
            .collect();
        assert!(lines.iter().all(|l| l.chars().count() <= INDEX_LINE_CHARS));
        let (index, kept) = render_index(&lines);
        assert_eq!(index.lines().count(), kept + 1);
        assert!(index.lines().count() <= INDEX_LINES && index.len() <= INDEX_BYTES);
        assert!(index.ends_with("more memories are in memoir (`memoir list`)\n"));
        assert_eq!(project_folder("/home/u/my proj"), "-home-u-my-proj");
    }
}
