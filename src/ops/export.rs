//! `export`: the store's memories as Claude Code's auto memory reads
//! them, so its own memory sees what memoir knows.
//!
//! Each memory becomes a topic file (the file it was imported from, else
//! `<scope>_<slug>.md`) carrying its key and source in `metadata`, and
//! `MEMORY.md` is written anew: memoir's memories most valuable first
//! (confidence, then the latest), then the folder's other topic files,
//! within what Claude Code loads. Topic files memoir exported before whose
//! memory is gone are removed; every other file of the folder is kept.

use crate::interop::claude_code::{self, Topic};
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
    /// `MEMORY.md` was written.
    pub index_written: bool,
    /// Memories the index had no room for (Claude Code loads 200 lines).
    pub left_out: usize,
}

/// Exports every memory into the Claude Code memory folder `dir`.
pub fn claude_code(store: &Store, dir: &Path, dry_run: bool) -> Result<Exported, StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    let topics = topics_of(store)?;
    let mut out = Exported::default();
    let ours: std::collections::HashSet<String> =
        topics.iter().map(|(t, _)| t.file.clone()).collect();
    let others = other_topics(dir, &ours, &mut out.removed);
    let mut lines = Vec::new();
    for (t, _) in &topics {
        lines.push(claude_code::index_line(&t.title, &t.file, &t.description));
        let text = claude_code::render_topic(t);
        let path = dir.join(&t.file);
        if read(&path).as_deref() == Some(text.as_str()) {
            out.unchanged += 1;
            continue;
        }
        if !dry_run {
            write(dir, &t.file, &text).map_err(io(&path))?;
        }
        out.written.push(t.file.clone());
    }
    lines.extend(others);
    let (index, kept) = claude_code::render_index(&lines);
    out.left_out = lines.len() - kept;
    let index_path = dir.join(claude_code::INDEX);
    if read(&index_path).as_deref() != Some(index.as_str()) {
        if !dry_run {
            write(dir, claude_code::INDEX, &index).map_err(io(&index_path))?;
        }
        out.index_written = true;
    }
    if !dry_run {
        for name in &out.removed {
            let path = dir.join(name);
            std::fs::remove_file(&path).map_err(io(&path))?;
        }
    }
    Ok(out)
}

/// Every readable memory as a topic, most valuable first: the index is cut
/// at Claude Code's load limit.
fn topics_of(store: &Store) -> Result<Vec<(Topic, Memory)>, StoreError> {
    let mut topics = Vec::new();
    for listed in crate::ops::query::list(store, &Default::default())?.memories {
        let Some(text) = store.read_memory_file(&listed.path)? else {
            continue;
        };
        let Ok(m) = Memory::parse(&text) else {
            continue;
        };
        topics.push(topic(
            &listed.key.to_string(),
            &listed.key.scope,
            &listed.key.slug,
            &m,
        ));
    }
    topics.sort_by(|(a, am), (b, bm)| {
        bm.confidence
            .unwrap_or(1.0)
            .total_cmp(&am.confidence.unwrap_or(1.0))
            .then(bm.updated.cmp(&am.updated))
            .then(a.file.cmp(&b.file))
    });
    Ok(topics)
}

/// The folder's other topic files: Claude Code's own stay (their index
/// lines, returned, come after memoir's); memoir's of memories now gone
/// are added to `removed`.
fn other_topics(
    dir: &Path,
    ours: &std::collections::HashSet<String>,
    removed: &mut Vec<String>,
) -> Vec<String> {
    let mut others = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return others;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != claude_code::INDEX && !ours.contains(n))
        .collect();
    names.sort();
    for name in names {
        let Some(text) = read(&dir.join(&name)) else {
            continue;
        };
        match claude_code::parse_topic(&name, &text) {
            Ok(t) if t.memoir_key.is_some() => removed.push(name),
            Ok(t) => others.push(claude_code::index_line(&t.title, &name, &t.description)),
            Err(_) => {}
        }
    }
    others
}

/// A memory as a topic file: its file and title as imported, if it was.
fn topic(key: &str, scope: &str, slug: &str, m: &Memory) -> (Topic, Memory) {
    let source = m.source.clone().unwrap_or_default();
    let (file, title) =
        imported_from(&source).unwrap_or_else(|| (format!("{scope}_{slug}.md"), slug.to_string()));
    let t = Topic {
        file,
        title,
        description: m.description.clone(),
        kind: m.kind,
        modified: m.updated.map(|t| t.date().to_string()),
        origin_session: None,
        memoir_key: Some(key.to_string()),
        source: Some(source),
        body: m.body.clone(),
    };
    (t, m.clone())
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
/// and is replaced by the export's own rather than read for ever.
fn read(path: &Path) -> Option<String> {
    // Larger than any memory memoir writes: then not one of its files.
    const MAX_READ: u64 = 4 << 20;
    let bytes = crate::fs::safe_file::read(path, MAX_READ).ok()??;
    String::from_utf8(bytes).ok()
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
