//! What memory an agent will believe differently between two revisions:
//! for reviewers of a pull request.

use crate::log::replay::Replay;
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::text;
use crate::model::time::Timestamp;
use crate::store::{Store, StoreError};
use std::collections::{BTreeMap, BTreeSet};

/// How one memory changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// New.
    Added,
    /// Different content.
    Changed,
    /// Gone.
    Forgotten,
}

impl ChangeKind {
    /// `added`, `changed` or `forgotten`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Changed => "changed",
            ChangeKind::Forgotten => "forgotten",
        }
    }
}

/// One memory that changed.
#[derive(Debug, Clone)]
pub struct Change {
    /// The memory.
    pub key: Key,
    /// How.
    pub kind: ChangeKind,
    /// Its file's unified diff (frontmatter and body).
    pub diff: String,
    /// Why it was forgotten, if the logs say.
    pub reason: Option<String>,
    /// Who wrote the versions in between.
    pub actors: Vec<String>,
}

/// A note added in between.
#[derive(Debug, Clone)]
pub struct Note {
    /// When.
    pub time: Timestamp,
    /// Who.
    pub actor: String,
    /// What.
    pub text: String,
}

/// A proposal pending at `to` and not at `from`: what waits for a human.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The proposal's event id.
    pub id: String,
    /// The memory it is for.
    pub key: Key,
    /// Who proposed it.
    pub actor: String,
    /// Its diff from the memory as `to` has it (all added for a new one).
    pub diff: String,
}

/// The difference in memory between two revisions.
#[derive(Debug, Clone, Default)]
pub struct MemoryDiff {
    /// The base revision (commit id; empty: nothing).
    pub from: String,
    /// The revision compared (commit id, or `work tree`).
    pub to: String,
    /// Memories added, changed, forgotten, by key.
    pub changes: Vec<Change>,
    /// Conflicts open at `to` and not at `from`.
    pub opened: Vec<Key>,
    /// Conflicts open at `from` and not at `to`.
    pub resolved: Vec<Key>,
    /// Notes in `to`'s logs and not in `from`'s, oldest first.
    pub notes: Vec<Note>,
    /// Proposals pending at `to` and not at `from`, oldest first.
    pub pending: Vec<Pending>,
}

/// One side: the memory files and the replayed logs.
struct Side {
    views: BTreeMap<Key, String>,
    replay: Replay,
}

fn side_at(store: &Store, rev: &str) -> Result<(String, Side), StoreError> {
    let (commit, files) = store.files_at(rev, "memory/")?;
    let mut views = BTreeMap::new();
    let mut events: Vec<Event> = Vec::new();
    for (rel, bytes) in files {
        let rel = rel.as_str();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if rel.starts_with("memory/log/") && rel.ends_with(".md") {
            let parsed = crate::log::files::parse_log(store, &format!("{rel} at {rev}"), &text)?;
            events.extend(parsed.events);
        } else if let Some(key) = Key::from_rel_path(rel).filter(|k| store.has_scope(&k.scope)) {
            views.insert(key, text);
        }
    }
    Ok((
        commit,
        Side {
            views,
            replay: Replay::new(events),
        },
    ))
}

fn side_now(store: &Store) -> Result<Side, StoreError> {
    let mut views = BTreeMap::new();
    for (rel, _) in crate::store::listing::memory_files(store)? {
        if let (Some(key), Ok(Some(text))) =
            (Key::from_rel_path(&rel), store.read_memory_file(&rel))
        {
            views.insert(key, text);
        }
    }
    Ok(Side {
        views,
        replay: crate::log::read::replay(store)?.0,
    })
}

/// The two revisions `from` and `to` name, as git reads them: `A...B` is
/// from the merge base of A and B to B (what B's branch did since it left
/// A, whatever A did since), `A..B` is `A B`; an empty side is HEAD.
fn revisions(
    store: &Store,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<(Option<String>, Option<String>), StoreError> {
    let Some(from) = from else {
        return Ok((None, to.map(str::to_string)));
    };
    let range = from
        .split_once("...")
        .map(|r| (r, true))
        .or_else(|| from.split_once("..").map(|r| (r, false)));
    let Some(((a, b), symmetric)) = range else {
        return Ok((Some(from.to_string()), to.map(str::to_string)));
    };
    if to.is_some() {
        return Err(StoreError::Invalid {
            path: from.to_string(),
            line: None,
            message: "a range names both revisions: give `A...B` (or `A..B`) alone, or `A B`"
                .to_string(),
        });
    }
    let or_head = |r: &str| if r.is_empty() { "HEAD" } else { r }.to_string();
    let (a, b) = (or_head(a), or_head(b));
    if symmetric {
        let base = store
            .repo()
            .merge_base_of(&a, &b)?
            .ok_or_else(|| StoreError::Invalid {
                path: from.to_string(),
                line: None,
                message: format!(
                    "`{a}` and `{b}` share no history: compare them with `memoir diff {a} {b}`"
                ),
            })?;
        Ok((Some(base), Some(b)))
    } else {
        Ok((Some(a), Some(b)))
    }
}

/// What memory changed from `from` (default: the merge base of HEAD and
/// its upstream) to `to` (default: the work tree). `from` may be a range,
/// `A...B` (from their merge base to B) or `A..B` (A to B), as git's.
pub fn diff(store: &Store, from: Option<&str>, to: Option<&str>) -> Result<MemoryDiff, StoreError> {
    let (from, to) = revisions(store, from, to)?;
    let (from, to) = (from.as_deref(), to.as_deref());
    let base = match from {
        Some(r) => Some(r.to_string()),
        None => store.repo().default_base()?,
    };
    let (from_id, a) = match &base {
        Some(r) => side_at(store, r)?,
        None => (
            String::new(),
            Side {
                views: BTreeMap::new(),
                replay: Replay::default(),
            },
        ),
    };
    let (to_id, b) = match to {
        Some(r) => side_at(store, r)?,
        None => ("work tree".to_string(), side_now(store)?),
    };
    let mut new_events: Vec<&Event> = b
        .replay
        .events
        .values()
        .filter(|e| !a.replay.events.contains_key(&e.id))
        .collect();
    new_events.sort_by(|x, y| (x.time, &x.id).cmp(&(y.time, &y.id)));
    let mut out = MemoryDiff {
        from: from_id,
        to: to_id,
        ..MemoryDiff::default()
    };
    let keys: BTreeSet<&Key> = a.views.keys().chain(b.views.keys()).collect();
    out.changes = keys
        .into_iter()
        .filter_map(|key| change(key, a.views.get(key), b.views.get(key), &new_events))
        .collect();
    let (ca, cb) = (conflicted(&a.replay), conflicted(&b.replay));
    out.opened = cb.difference(&ca).cloned().collect();
    out.resolved = ca.difference(&cb).cloned().collect();
    out.pending = new_proposals(&a, &b);
    out.notes = new_events
        .iter()
        .filter(|e| e.op == Op::Note)
        .map(|e| Note {
            time: e.time,
            actor: e.actor.clone(),
            text: e.body.clone(),
        })
        .collect();
    redact(&mut out);
    Ok(out)
}

/// The keys whose versions disagree on one side.
fn conflicted(r: &Replay) -> BTreeSet<Key> {
    r.memories
        .iter()
        .filter(|(_, v)| v.conflict)
        .map(|(k, _)| k.clone())
        .collect()
}

/// The proposals pending on side `b` that were not on side `a`, each as
/// a diff from `b`'s file to what it proposes.
fn new_proposals(a: &Side, b: &Side) -> Vec<Pending> {
    let was_pending: BTreeSet<String> = a
        .replay
        .pending_events()
        .into_iter()
        .map(|e| e.id)
        .collect();
    b.replay
        .pending_events()
        .into_iter()
        .filter(|e| !was_pending.contains(&e.id))
        .filter_map(|e| {
            let key = e.key.clone()?;
            let path = key.rel_path();
            let diff = text::file_diff(
                b.views.get(&key).map(String::as_str),
                Some(&e.body),
                &format!("a/{path} (now)"),
                &format!("b/{path} (proposed {})", e.id),
            );
            Some(Pending {
                id: e.id,
                key,
                actor: e.actor,
                diff,
            })
        })
        .collect()
}

/// How `key`'s file changed between the sides (`None`: unchanged), with
/// who made the versions in between (`new_events`, oldest first).
fn change(
    key: &Key,
    before: Option<&String>,
    after: Option<&String>,
    new_events: &[&Event],
) -> Option<Change> {
    let kind = match (before, after) {
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Forgotten,
        (Some(x), Some(y)) if x != y => ChangeKind::Changed,
        _ => return None,
    };
    let path = key.rel_path();
    let diff = text::file_diff(
        before.map(String::as_str),
        after.map(String::as_str),
        &format!("a/{path}"),
        &format!("b/{path}"),
    );
    let mine: Vec<&&Event> = new_events
        .iter()
        .filter(|e| e.key.as_ref() == Some(key) && e.op.is_version())
        .collect();
    let mut actors: Vec<String> = Vec::new();
    for e in &mine {
        if !actors.contains(&e.actor) {
            actors.push(e.actor.clone());
        }
    }
    let reason = mine
        .iter()
        .rev()
        .find(|e| e.op == Op::Forget)
        .and_then(|e| e.reason.clone());
    Some(Change {
        key: key.clone(),
        kind,
        diff,
        reason,
        actors,
    })
}

/// A diff is posted where anyone reviewing can read it (a pull request's
/// comment): a secret in a change is never shown.
fn redact(out: &mut MemoryDiff) {
    for c in &mut out.changes {
        c.diff = crate::policy::secrets::redacted(&c.diff).into_owned();
        c.reason = c
            .reason
            .as_deref()
            .map(|r| crate::policy::secrets::redacted(r).into_owned());
    }
    for n in &mut out.notes {
        n.text = crate::policy::secrets::redacted(&n.text).into_owned();
    }
    for p in &mut out.pending {
        p.diff = crate::policy::secrets::redacted(&p.diff).into_owned();
    }
}
