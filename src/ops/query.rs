//! Read commands over the persistent index: `show`, `list`, `status`.
//!
//! They refresh the index (a stat per file, a read of what changed) instead
//! of replaying the logs, so they stay fast on a large store.

use crate::index::Index;
use crate::log::transition::KeyState;
use crate::model::key::Key;
use crate::model::memory::{Memory, Summary};
use crate::model::time::Date;
use crate::store::{Store, StoreError};

/// A memory as `list` and `show` report it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// Its key.
    pub key: Key,
    /// Its file, store-relative.
    pub path: String,
    /// What its frontmatter says.
    pub summary: Summary,
    /// Its versions disagree.
    pub conflict: bool,
}

/// One memory in full.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The listing fields.
    pub listed: Listed,
    /// The file's exact content.
    pub content: String,
    /// The parsed file.
    pub memory: Memory,
    /// Head event ids.
    pub heads: Vec<String>,
}

/// What `status` reports.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// Memories with a valid file, by scope.
    pub counts: Vec<(String, usize)>,
    /// Pending proposals (event ids).
    pub proposals: Vec<String>,
    /// The key each pending proposal is for, in the order of `proposals`.
    pub proposal_keys: Vec<Option<Key>>,
    /// Memories whose versions disagree.
    pub conflicts: Vec<Key>,
    /// Files that differ from their last recorded version, or should exist and do not.
    pub drift: Vec<String>,
    /// Files that do not parse.
    pub invalid: Vec<(String, String)>,
    /// Past `review_by`.
    pub stale: Vec<Key>,
    /// Past `expires`.
    pub expired: Vec<Key>,
    /// Memories left out of MEMORY.md by its budget.
    pub over_budget: usize,
    /// MEMORY.md differs from what the memory files give.
    pub index_stale: bool,
    /// The most recently updated memories, newest first.
    pub recent: Vec<Listed>,
}

/// How many memories `status` shows as recent.
const RECENT: usize = 5;

/// Filters for `list`.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this scope.
    pub scope: Option<String>,
    /// Only this type.
    pub kind: Option<String>,
}

/// What `list` found: the memories, and the files it left out.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The memories the filter lets through, sorted by key.
    pub memories: Vec<Listed>,
    /// One line for each memory file that does not parse (`path: why
    /// (skipped)`), as `recall` warns of it.
    pub skipped: Vec<String>,
}

/// Lists memories, sorted by key.
pub fn list(store: &Store, filter: &Filter) -> Result<Listing, StoreError> {
    let mut index = Index::refreshed(store)?;
    index.save(store);
    let memories = index
        .summaries()
        .into_iter()
        .filter(|(k, s)| {
            filter.scope.as_ref().is_none_or(|sc| *sc == k.scope)
                && filter.kind.as_ref().is_none_or(|t| *t == s.kind)
        })
        .map(|(key, s)| Listed {
            path: key.rel_path(),
            conflict: index.keys.get(&key.to_string()).is_some_and(|k| k.conflict),
            summary: s.clone(),
            key,
        })
        .collect();
    let skipped = index.skipped_files();
    Ok(Listing { memories, skipped })
}

/// One memory: its file's content and what the logs say of it.
pub fn show(store: &Store, key: &Key) -> Result<Shown, StoreError> {
    let index = Index::logs_refreshed(store)?;
    let rel = key.rel_path();
    // Read by its key, not found by a listing that refused links: the
    // folders on the way are checked here.
    store.check_dirs(&rel)?;
    let content = store
        .read_memory_file(&rel)?
        .ok_or_else(|| StoreError::NoSuchMemory(key.to_string()))?;
    let memory = crate::policy::memory::validate_file(&content, &rel)?;
    let state: Option<&KeyState> = index.keys.get(&key.to_string());
    Ok(Shown {
        listed: Listed {
            key: key.clone(),
            path: rel,
            summary: Summary::of(&memory),
            conflict: state.is_some_and(|s| s.conflict),
        },
        heads: state.map(|s| s.heads.clone()).unwrap_or_default(),
        content,
        memory,
    })
}

/// What needs attention, from the persistent index.
pub fn status(store: &Store, today: Date) -> Result<Status, StoreError> {
    let mut index = Index::refreshed(store)?;
    index.save(store);
    let mut st = Status {
        proposals: index.pending.iter().map(|e| e.id.clone()).collect(),
        proposal_keys: index.pending.iter().map(|e| e.key.clone()).collect(),
        ..Status::default()
    };
    let all = index.summaries();
    for scope in &store.config.scopes {
        let n = all.iter().filter(|(k, _)| &k.scope == scope).count();
        st.counts.push((scope.clone(), n));
    }
    for (key, ks) in &index.keys {
        let Ok((key, _)) = Key::parse(key) else {
            continue;
        };
        let rel = key.rel_path();
        if ks.conflict {
            st.conflicts.push(key);
        } else if ks.view_hash != index.files.get(&rel).map(|f| f.hash) {
            st.drift.push(rel);
        }
    }
    for (rel, f) in &index.files {
        if let Some(e) = &f.error {
            st.invalid.push((rel.clone(), e.clone()));
        }
        let Some(key) = Key::from_rel_path(rel) else {
            continue;
        };
        if !index.keys.contains_key(&key.to_string()) {
            st.drift.push(rel.clone());
        }
        if let Some(s) = &f.summary {
            if s.review_by.is_some_and(|d| d < today.0) {
                st.stale.push(key.clone());
            }
            if s.expires.is_some_and(|d| d < today.0) {
                st.expired.push(key);
            }
        }
    }
    // Files in the log folder that are no logs (a link, a FIFO) are
    // never read; they are listed, and `check` fails on them.
    let (_, not_logs) = crate::log::files::log_listing(store)?;
    st.invalid.extend(
        not_logs
            .into_iter()
            .map(|issue| (issue.path, issue.message)),
    );
    st.drift.sort();
    st.drift.dedup();
    let block = crate::render::memory_md::Summaries::all(all.iter().map(|(k, s)| (k, *s)))
        .render(store.config.index_budget);
    st.over_budget = block.omitted;
    let mut recent: Vec<_> = all.iter().collect();
    recent.sort_by(|a, b| b.1.updated.cmp(&a.1.updated).then(a.0.cmp(&b.0)));
    st.recent = recent
        .into_iter()
        .take(RECENT)
        .map(|(key, s)| Listed {
            key: key.clone(),
            path: key.rel_path(),
            summary: (*s).clone(),
            conflict: index.keys.get(&key.to_string()).is_some_and(|k| k.conflict),
        })
        .collect();
    let (current, wanted) = crate::change::memory_md::expected(store, &block.text)?;
    st.index_stale = current.as_deref() != Some(wanted.as_str());
    Ok(st)
}
