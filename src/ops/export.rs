//! `export`: the store's memories as Claude Code's auto memory reads
//! them, so its own memory sees what memoir knows.
//!
//! Each memory becomes a topic file (the file it was imported from, else
//! `<scope>_<slug>.md` with `_` for `-`). Export writes only what changed: a topic file
//! that already says what the memory says (importing it would change
//! nothing) is left byte for byte, with Claude Code's own fields
//! (`originSessionId`, `modified`, its title); one that says something
//! else is rewritten keeping those fields, unless Claude Code modified
//! it after the memory's last update (then it is kept, for an import). `MEMORY.md` keeps its lines and
//! their order: only the lines of files written, added or removed change
//! (new ones appended, memoir's most valuable first, within what Claude
//! Code loads). Topic files memoir exported before whose memory is gone
//! are removed; every other file of the folder is kept.

use crate::interop::claude_code::{self, IndexEntry, Limit, Topic};
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::store::{Store, StoreError};
use std::path::Path;

/// What an export did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exported {
    /// Topic files written (new or changed), by name.
    pub written: Vec<String>,
    /// Topic files of memories no longer in the store, removed.
    pub removed: Vec<String>,
    /// Topic files already as they should be.
    pub unchanged: usize,
    /// Topic files that say something else but were modified in Claude
    /// Code after the memory's last update: left as they are, for an
    /// import to bring in.
    pub kept: Vec<String>,
    /// `MEMORY.md` was written.
    pub index_written: bool,
    /// Memories the index had no room for.
    pub left_out: usize,
    /// Which of Claude Code's load limits (200 lines, 25,000 bytes) left
    /// them out.
    pub cut_by: Option<Limit>,
}

/// Exports every memory of `stores` (the repository's, then the
/// person's own: Claude Code's user memories were imported there) into
/// the Claude Code memory folder `dir`; a key in two stores is the
/// first's.
pub fn claude_code(stores: &[&Store], dir: &Path, dry_run: bool) -> Result<Exported, StoreError> {
    let memories = memories_of(stores)?;
    let mut out = Exported::default();
    let folder = topic_files(dir);
    // The file each key is read from on import: where a memory memoir
    // changed (a new source, say) is written back, not a second file.
    let mut by_key = std::collections::HashMap::new();
    for (name, topic) in &folder {
        if let Some(Ok(req)) = topic.as_ref().map(claude_code::topic_request) {
            by_key.entry(req.key).or_insert_with(|| name.clone());
        }
    }
    let files: Vec<(String, String)> = memories
        .iter()
        .map(|(k, m)| file_of(k, m, &by_key))
        .collect();
    let ours: std::collections::HashSet<String> = files.iter().map(|(f, _)| f.clone()).collect();
    let others = other_topics(&folder, &ours, &mut out.removed);
    // Every file the export may replace is read before any is written: one
    // it cannot read (too large, not UTF-8) is refused with nothing written.
    let index = read(&dir.join(claude_code::INDEX))?;
    let texts = files
        .iter()
        .map(|(file, _)| read(&dir.join(file)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut entries = Vec::new();
    for (((key, m), (file, title)), text) in memories.iter().zip(files).zip(texts) {
        let path = dir.join(&file);
        let current = text
            .as_deref()
            .and_then(|t| claude_code::parse_topic(&file, t).ok());
        let newer = current.as_ref().filter(|c| changed_since(c, m));
        if let Some(c) = newer.filter(|c| !says(c, key, m)) {
            // Claude Code wrote it after memoir's version: an import
            // brings that in; writing memoir's over it would lose it.
            out.kept.push(file.clone());
            entries.push(IndexEntry {
                line: claude_code::index_line(&c.title, &file, &c.description),
                file,
                changed: false,
            });
            continue;
        }
        if let Some(c) = current.as_ref().filter(|c| says(c, key, m)) {
            out.unchanged += 1;
            entries.push(IndexEntry {
                line: claude_code::index_line(&c.title, &file, &c.description),
                file,
                changed: false,
            });
            continue;
        }
        let (t, new) = rewritten(key, m, &file, title, text.as_deref(), current.as_ref());
        entries.push(IndexEntry {
            line: claude_code::index_line(&t.title, &file, &t.description),
            file: file.clone(),
            changed: true,
        });
        if text.as_deref() == Some(new.as_str()) {
            out.unchanged += 1;
            continue;
        }
        if !dry_run {
            write(dir, &file, &new).map_err(io_at(&path))?;
        }
        out.written.push(file);
    }
    entries.extend(others);
    write_index(dir, index, &entries, &mut out, dry_run)?;
    Ok(out)
}

/// An I/O failure at `path`, as the store reports one.
fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |source| StoreError::Io { path, source }
}

/// Merges the topic files' lines into Claude Code's MEMORY.md (written if
/// it changed), then removes the topic files of memories gone.
fn write_index(
    dir: &Path,
    current: Option<String>,
    entries: &[IndexEntry],
    out: &mut Exported,
    dry_run: bool,
) -> Result<(), StoreError> {
    let index_path = dir.join(claude_code::INDEX);
    // Merged with LF line ends, written back with the file's own: an
    // index saved on Windows keeps CRLF, with no LF line beside them.
    let crlf = current.as_deref().is_some_and(|c| c.contains("\r\n"));
    let lf = current.as_deref().map(|c| c.replace("\r\n", "\n"));
    let index = claude_code::merge_index(lf.as_deref(), entries, &out.removed);
    out.left_out = index.left_out;
    out.cut_by = index.cut_by;
    let text = match crlf {
        true => index.text.replace('\n', "\r\n"),
        false => index.text,
    };
    if current.as_deref() != Some(text.as_str()) {
        if !dry_run {
            write(dir, claude_code::INDEX, &text).map_err(io_at(&index_path))?;
        }
        out.index_written = true;
    }
    if !dry_run {
        for name in &out.removed {
            let path = dir.join(name);
            std::fs::remove_file(&path).map_err(io_at(&path))?;
        }
    }
    Ok(())
}

/// The topic file memoir writes for memory `m` at `file`, and its text:
/// the file as it is (`text`, parsed as `current`) with memoir's fields
/// changed and every other kept, or a new file.
fn rewritten(
    key: &Key,
    m: &Memory,
    file: &str,
    title: String,
    text: Option<&str>,
    current: Option<&Topic>,
) -> (Topic, String) {
    let t = Topic {
        file: file.to_string(),
        // Claude Code's title and session stay: memoir has neither.
        title: current
            .map(|c| c.title.clone())
            .filter(|t| !t.is_empty())
            .unwrap_or(title),
        description: m.description.clone(),
        kind: m.kind,
        modified: m.updated.map(|t| t.seconds()),
        origin_session: current.and_then(|c| c.origin_session.clone()),
        memoir_key: Some(key.to_string()),
        source: Some(m.source.clone().unwrap_or_default()),
        body: m.body.clone(),
    };
    let new = match (text, current) {
        (Some(text), Some(_)) => claude_code::update_topic(text, &t),
        _ => None,
    }
    .unwrap_or_else(|| claude_code::render_topic(&t));
    (t, new)
}

/// Whether the topic file `t` was modified (its `modified`, to the second)
/// after the memory `m` was last updated.
fn changed_since(t: &Topic, m: &Memory) -> bool {
    let modified = t.modified.as_deref().and_then(claude_code::parse_when);
    match (modified, m.updated) {
        (Some(file), Some(memory)) => file.0.div_euclid(1000) > memory.0.div_euclid(1000),
        _ => false,
    }
}

/// Whether the topic file `t` says what the memory `m` at `key` says:
/// importing it would change nothing (the fields Claude Code's format
/// cannot carry aside).
fn says(t: &Topic, key: &Key, m: &Memory) -> bool {
    let Ok(mut req) = claude_code::topic_request(t) else {
        return false;
    };
    if &req.key != key {
        return false;
    }
    claude_code::keep_uncarried(&mut req, m);
    crate::model::remember::says_the_same(m, &req)
}

/// Every readable memory with its key, most valuable first: new index
/// lines are appended in this order until Claude Code's load limit.
fn memories_of(stores: &[&Store]) -> Result<Vec<(Key, Memory)>, StoreError> {
    let mut memories: Vec<(Key, Memory)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for store in stores {
        for listed in crate::ops::query::list(store, &Default::default())?.memories {
            if !seen.insert(listed.key.clone()) {
                continue;
            }
            let Some(text) = store.read_memory_file(&listed.path)? else {
                continue;
            };
            let Ok(m) = Memory::parse(&text) else {
                continue;
            };
            memories.push((listed.key, m));
        }
    }
    memories.sort_by(|(a, am), (b, bm)| {
        bm.confidence
            .unwrap_or(1.0)
            .total_cmp(&am.confidence.unwrap_or(1.0))
            .then(bm.updated.cmp(&am.updated))
            .then(a.to_string().cmp(&b.to_string()))
    });
    Ok(memories)
}

/// The folder's `*.md` files but the index, by name, each read as a
/// topic file where it is one.
fn topic_files(dir: &Path) -> Vec<(String, Option<Topic>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != claude_code::INDEX)
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            // One that cannot be read is no topic file: left alone.
            let topic = read(&dir.join(&name))
                .ok()
                .flatten()
                .and_then(|text| claude_code::parse_topic(&name, &text).ok());
            (name, topic)
        })
        .collect()
}

/// The folder's other topic files: Claude Code's own stay (their index
/// entries, returned, come after memoir's); memoir's of memories now gone
/// are added to `removed`.
fn other_topics(
    folder: &[(String, Option<Topic>)],
    ours: &std::collections::HashSet<String>,
    removed: &mut Vec<String>,
) -> Vec<IndexEntry> {
    let mut others = Vec::new();
    for (name, topic) in folder {
        match topic {
            _ if ours.contains(name) => {}
            Some(t) if t.memoir_key.is_some() => removed.push(name.clone()),
            Some(t) => others.push(IndexEntry {
                line: claude_code::index_line(&t.title, name, &t.description),
                file: name.clone(),
                changed: false,
            }),
            None => {}
        }
    }
    others
}

/// A memory's topic file and title: as imported, if it was, else the
/// folder's file that imports as its key, else `<scope>_<slug>.md` (with
/// `_` for `-`) and its name.
fn file_of(
    key: &Key,
    m: &Memory,
    by_key: &std::collections::HashMap<Key, String>,
) -> (String, String) {
    imported_from(m.source.as_deref().unwrap_or_default())
        .or_else(|| by_key.get(key).map(|f| (f.clone(), m.name.clone())))
        .unwrap_or_else(|| (new_file_name(key), m.name.clone()))
}

/// A new topic file's name, as Claude Code names its own: `<type>_<topic>`
/// with `_` between words (`project_deploy_day.md` for
/// `project/deploy-day`), never `_` and `-` mixed. A slug holds no `_`, so
/// the import reads it back as the same key (and `memoirKey` says it).
fn new_file_name(key: &Key) -> String {
    format!(
        "{}_{}.md",
        key.scope.replace('-', "_"),
        key.slug.replace('-', "_")
    )
}

/// The file (and title) of a source `imported from Claude Code <file>[ ("<title>")]`.
fn imported_from(source: &str) -> Option<(String, String)> {
    let rest = source.strip_prefix("imported from Claude Code ")?;
    let (file, title) = match rest.split_once(" (\"") {
        Some((file, t)) => (file, t.strip_suffix("\")")?.to_string()),
        None => (rest, rest.trim_end_matches(".md").to_string()),
    };
    let plain = file.ends_with(".md") && !file.contains(['/', '\\']) && !file.starts_with('.');
    plain.then(|| (file.to_string(), title))
}

/// A file of the folder as text, read as a store file is (`safe_file`): a
/// FIFO, a device or a link at its name is no file of memoir's (`None`),
/// and is replaced by the export's own rather than read for ever. A file
/// too large or not UTF-8 is someone's, which the export would lose:
/// refused.
fn read(path: &Path) -> Result<Option<String>, StoreError> {
    use crate::fs::safe_file::ReadError;
    // Larger than any memory memoir writes: then not one of its files.
    const MAX_READ: u64 = 4 << 20;
    let refused = |why: &str| StoreError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!(
            "{why}; the export would replace it: move it away, then export again"
        )),
    };
    match crate::fs::safe_file::read(path, MAX_READ) {
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| refused("not UTF-8")),
        Ok(None) | Err(ReadError::Link | ReadError::NotRegular) => Ok(None),
        Err(ReadError::TooLarge(_)) => Err(refused("over 4 MiB")),
        Err(ReadError::Io(e)) => Err(io_at(path)(e)),
    }
}

/// Writes a file of the folder whole, by a rename ([`crate::fs::replace`]:
/// never through a link planted at its temporary name). Not synced: an
/// export is made again from the store.
fn write(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    crate::fs::replace::replace(
        &dir.join(name),
        text.as_bytes(),
        crate::fs::replace::Durability::Cached,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imported_files_keep_their_names() {
        assert_eq!(
            imported_from("imported from Claude Code feedback_commits.md (\"Commit style\")"),
            Some(("feedback_commits.md".into(), "Commit style".into()))
        );
        assert_eq!(
            imported_from("imported from Claude Code db.md"),
            Some(("db.md".into(), "db".into()))
        );
        assert_eq!(imported_from("imported from Claude Code ../x.md"), None);
        assert_eq!(imported_from("stated by the user"), None);
    }
}
