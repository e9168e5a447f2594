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

use crate::model::key::Key;
use crate::model::memory::{self, Memory, MemoryType};
use crate::model::remember::{Collision, Remember};
use crate::model::time::{Date, Timestamp, DAY_MS};
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
    // Claude Code loads this file into every session: a secret in one of
    // its own topic files' descriptions (which import refused) is not
    // copied into it.
    let clean = |s: &str| -> String {
        crate::policy::secrets::redact(s)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>()
            .replace(['[', ']'], "")
    };
    // A name whose parentheses do not pair would end the link early:
    // CommonMark's angle brackets keep it whole.
    let mut depth = 0i32;
    let paired = file.chars().all(|c| {
        depth += match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        depth >= 0
    }) && depth == 0;
    let target = if paired {
        file.to_string()
    } else {
        format!("<{file}>")
    };
    let head = format!("- [{}]({target}) — ", clean(title));
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

/// Which of Claude Code's two load limits cut the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The 200 lines.
    Lines,
    /// The 25,000 bytes.
    Bytes,
}

impl Limit {
    /// `lines` or `bytes`, as JSON gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Lines => "lines",
            Limit::Bytes => "bytes",
        }
    }
}

/// A topic file the index should list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The topic file's name.
    pub file: String,
    /// Its line as memoir would write it.
    pub line: String,
    /// The file was written by this export: a line the index has for it is
    /// replaced by `line` (one it has for an unchanged file is kept as
    /// written).
    pub changed: bool,
}

/// An index as an export leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// The whole file.
    pub text: String,
    /// Entries it had no room for.
    pub left_out: usize,
    /// The limit that left them out.
    pub cut_by: Option<Limit>,
}

/// The line an index of nothing holds: an empty file would read as a
/// failed export.
pub const EMPTY_INDEX_LINE: &str = "- No memories yet: memoir exports its memories here";

/// The last line of an index cut at the load limit.
fn more_line(n: usize) -> String {
    format!("- {n} more memories are in memoir (`memoir list`)")
}

/// One of the lines memoir writes for itself (the count of those left
/// out, the line of an empty index): made again by every export.
fn is_own_line(line: &str) -> bool {
    let line = line.trim_end();
    line == EMPTY_INDEX_LINE
        || line
            .strip_prefix("- ")
            .and_then(|l| l.strip_suffix(" more memories are in memoir (`memoir list`)"))
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// The topic file a line of the index links to (`- [Title](file.md) — …`).
fn linked_file(line: &str) -> Option<&str> {
    let at = line.find("](")? + 2;
    let rest = &line[at..];
    if let Some(inner) = rest.strip_prefix('<') {
        return Some(&inner[..inner.find('>')?]);
    }
    // To the `)` that closes the link: a name's own parentheses pair.
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(rest[..i].trim().trim_start_matches("./")),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The index `existing` (Claude Code's own, or an earlier export's) with
/// only what this export changed: the lines of files it removed dropped,
/// those of files it wrote replaced, lines for `entries` it has no line
/// for appended in their order while they fit in what Claude Code loads
/// (the last line then counts those left out). Every other line, and the
/// order, stays as written; with no entries and no other line, the index
/// is the one line [`EMPTY_INDEX_LINE`].
pub fn merge_index(existing: Option<&str>, entries: &[IndexEntry], removed: &[String]) -> Index {
    let by_file: std::collections::HashMap<&str, &IndexEntry> =
        entries.iter().map(|e| (e.file.as_str(), e)).collect();
    let mut out = String::new();
    let mut lines = 0;
    let mut listed = std::collections::HashSet::new();
    for line in existing.unwrap_or("").split_inclusive('\n') {
        if is_own_line(line) {
            continue;
        }
        let file = linked_file(line);
        if file.is_some_and(|f| removed.iter().any(|r| r == f)) {
            continue;
        }
        match file.and_then(|f| by_file.get(f)) {
            Some(e) if listed.contains(e.file.as_str()) => continue,
            Some(e) if e.changed => {
                out.push_str(&e.line);
                out.push('\n');
            }
            _ => {
                out.push_str(line);
                if !line.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        if let Some(e) = file.and_then(|f| by_file.get(f)) {
            listed.insert(e.file.as_str());
        }
        lines += 1;
    }
    let missing: Vec<&IndexEntry> = entries
        .iter()
        .filter(|e| !listed.contains(e.file.as_str()))
        .collect();
    let mut left_out = 0;
    let mut cut_by = None;
    for (i, e) in missing.iter().enumerate() {
        // One line is kept for the count of those left out, and room for it.
        let last = i + 1 == missing.len();
        let reserve = if last { 0 } else { 80 };
        if lines + 1 + usize::from(!last) > INDEX_LINES {
            cut_by = Some(Limit::Lines);
        } else if out.len() + e.line.len() + 1 + reserve > INDEX_BYTES {
            cut_by = Some(Limit::Bytes);
        }
        if cut_by.is_some() {
            left_out = missing.len() - i;
            break;
        }
        out.push_str(&e.line);
        out.push('\n');
        lines += 1;
    }
    if left_out > 0 {
        out.push_str(&more_line(left_out));
        out.push('\n');
    }
    if out.trim().is_empty() {
        out = format!("{EMPTY_INDEX_LINE}\n");
    }
    Index {
        text: out,
        left_out,
        cut_by,
    }
}

/// A topic file `text` memoir changes, rewritten with `t`'s description,
/// type, `modified`, body and memoir's keys, every other field (the title,
/// `originSessionId`, keys memoir does not know) as it was, each where it
/// was (a top-level `type` stays at the top). `None` when `text` is no
/// topic file.
pub fn update_topic(text: &str, t: &Topic) -> Option<String> {
    let split = memory::split(text).ok()?;
    let mut fm: Value = serde_yaml::from_str(split.yaml).ok()?;
    let map = fm.as_mapping_mut()?;
    let untitled = map
        .get("name")
        .and_then(scalar)
        .is_none_or(|n| n.trim().is_empty());
    if untitled {
        map.insert("name".into(), t.title.clone().into());
    }
    map.insert("description".into(), t.description.clone().into());
    let top_type = map.contains_key("type");
    let top_modified = map.contains_key("modified");
    if top_type {
        map.insert("type".into(), t.kind.as_str().into());
    }
    if let (true, Some(m)) = (top_modified, &t.modified) {
        map.insert("modified".into(), m.clone().into());
    }
    if !map.get("metadata").is_some_and(Value::is_mapping) {
        map.insert("metadata".into(), Value::Mapping(Default::default()));
    }
    let meta = map.get_mut("metadata").and_then(Value::as_mapping_mut)?;
    if !top_type {
        meta.insert("type".into(), t.kind.as_str().into());
    }
    if let (false, Some(m)) = (top_modified, &t.modified) {
        meta.insert("modified".into(), m.clone().into());
    }
    for (k, v) in [("memoirKey", &t.memoir_key), ("source", &t.source)] {
        if let Some(v) = v {
            meta.insert(k.into(), v.clone().into());
        }
    }
    let yaml = serde_yaml::to_string(&fm).ok()?;
    let mut out = format!("---\n{yaml}---\n\n{}", t.body);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
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

/// The `remember` a topic stands for: memoir's own key and source when
/// memoir exported it, else `<scope>/<file name as a slug>` and the file as
/// the source (with its title when that says more than the name).
pub fn topic_request(t: &Topic) -> Result<Remember, String> {
    let stem = t.file.strip_suffix(".md").unwrap_or(&t.file);
    let scope = if t.kind == MemoryType::User {
        "user"
    } else {
        "project"
    };
    // Claude Code names files `<type>_<topic>`: `user_role` is user/role.
    let stem = stem
        .strip_prefix(scope)
        .and_then(|s| s.strip_prefix(['_', '-']))
        .filter(|s| !s.is_empty())
        .unwrap_or(stem);
    let exported = t.memoir_key.as_deref().and_then(|k| Key::parse(k).ok());
    let key = match exported {
        Some((key, _)) => key,
        None => {
            Key::parse(&format!("{scope}/{}", crate::model::key::phrase_name(stem)))
                .map_err(|e| format!("{}: {e}", t.file))?
                .0
        }
    };
    // The name is the slug: the file's own name is kept in the source.
    let name = key.slug.clone();
    let source = t.source.clone().unwrap_or_else(|| {
        let same = crate::model::key::slugify(&t.title).ok().as_deref() == Some(key.slug.as_str());
        if t.title.is_empty() || same {
            format!("imported from Claude Code {}", t.file)
        } else {
            format!("imported from Claude Code {} (\"{}\")", t.file, t.title)
        }
    });
    Ok(Remember {
        key,
        name,
        description: t.description.clone(),
        kind: t.kind,
        tags: Vec::new(),
        source,
        confidence: 1.0,
        body: t.body.clone(),
        review_by: None,
        expires: None,
        collision: Collision::Ask,
        expect: None,
    })
}

/// What Claude Code's format cannot say, taken from the memory `old` at the
/// request's key: its name as written (the file has a title, not a name),
/// tags, confidence and its dates to review by and forget after. A topic
/// file without them leaves them as they are.
pub fn keep_uncarried(req: &mut Remember, old: &Memory) {
    req.name = old.name.clone();
    req.tags = old.tags.clone();
    req.confidence = old.confidence.unwrap_or(1.0);
    req.review_by = old.review_by;
    req.expires = old.expires;
}

/// `2026-10-02`, `2026-10-02T10:00:00Z` or with milliseconds.
pub fn parse_when(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(d) = Date::parse(s) {
        return Some(Timestamp(d.0 * DAY_MS));
    }
    let seconds = match (s.find('.'), s.ends_with('Z')) {
        (Some(dot), true) => format!("{}Z", &s[..dot]),
        _ => s.to_string(),
    };
    Timestamp::parse(&seconds).ok()
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
        let entries: Vec<IndexEntry> = (0..500)
            .map(|i| IndexEntry {
                file: format!("m{i}.md"),
                line: index_line(
                    &format!("Memory {i}"),
                    &format!("m{i}.md"),
                    &"a long hook ".repeat(20),
                ),
                changed: true,
            })
            .collect();
        assert!(entries
            .iter()
            .all(|e| e.line.chars().count() <= INDEX_LINE_CHARS));
        let index = merge_index(None, &entries, &[]);
        let kept = entries.len() - index.left_out;
        assert_eq!(index.text.lines().count(), kept + 1);
        assert!(index.text.lines().count() <= INDEX_LINES && index.text.len() <= INDEX_BYTES);
        assert_eq!(
            index.cut_by,
            Some(Limit::Bytes),
            "150-character lines fill the bytes first"
        );
        assert!(index
            .text
            .ends_with("more memories are in memoir (`memoir list`)\n"));
        // Merged into itself, nothing moves.
        assert_eq!(merge_index(Some(&index.text), &entries, &[]), index);
        assert_eq!(project_folder("/home/u/my proj"), "-home-u-my-proj");
    }
}
