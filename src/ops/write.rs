//! The write commands: `note`, `remember`, `forget`.
//!
//! Each checks the write policy before taking the lock, so a refused write
//! leaves no trace; then, under the lock, reads only what it needs of the
//! persistent index (see [`crate::index::snapshot`]) and the files it touches
//! (never the whole store), appends its events to the log, replaces the
//! view files, and regenerates MEMORY.md from the index's records.

use crate::index::cache::Cache;
use crate::index::refresh::entry_for;
use crate::index::snapshot::Snapshot;
use crate::log::transition::{after_write, KeyState};
use crate::model::event::{new_id, Event, Op};
use crate::model::fingerprint::fingerprint;
use crate::model::key::Key;
use crate::model::memory::{Memory, MemoryType};
use crate::model::text;
use crate::model::time::Date;
use crate::policy;
use crate::store::{Ctx, Store, StoreError};

/// From this many views in one write (a consolidation), they are written
/// on several threads; fewer are not worth the threads' start.
const PARALLEL_VIEWS: usize = 256;

/// A view a command wrote: its path and content (`None`: removed).
type Written<'e> = (String, Option<&'e str>);

/// How `remember` treats a collision with an existing memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Collision {
    /// Keep the new memory as a proposal and ask (exit 4).
    #[default]
    Ask,
    /// The new memory replaces what it collides with.
    Replace,
    /// Keep both: a same-key collision gets the next free `<slug>-N`.
    KeepBoth,
    /// Only propose, whatever happens.
    Propose,
}

/// A memory to remember.
#[derive(Debug, Clone)]
pub struct Remember {
    /// Where it goes.
    pub key: Key,
    /// Its name as given.
    pub name: String,
    /// One-line summary.
    pub description: String,
    /// Its kind.
    pub kind: MemoryType,
    /// Labels.
    pub tags: Vec<String>,
    /// Why it can be trusted.
    pub source: String,
    /// 0..=1.
    pub confidence: f64,
    /// Markdown body.
    pub body: String,
    /// Stale after.
    pub review_by: Option<Date>,
    /// Forgotten after.
    pub expires: Option<Date>,
    /// What to do on a collision.
    pub collision: Collision,
    /// Compare-and-swap: the event id the memory must be at now.
    pub expect: Option<String>,
}

/// Why a memory became a proposal instead of being written.
#[derive(Debug, Clone, PartialEq)]
pub enum ProposalReason {
    /// `--propose` asked for it.
    Requested,
    /// The key exists with different content.
    Changed,
    /// The key has an open conflict.
    Conflict,
    /// Another memory says nearly the same.
    NearDuplicate {
        /// The similar memory.
        other: Key,
        /// Word-set similarity of name and description.
        similarity: f64,
    },
}

/// What `remember` did.
#[derive(Debug, Clone, PartialEq)]
pub enum RememberOutcome {
    /// Written (and any `superseded` memories forgotten).
    Written {
        /// Where.
        key: Key,
        /// The remember event.
        id: String,
        /// It replaced an existing version.
        replaced: bool,
        /// Near-duplicates forgotten in its favour.
        superseded: Vec<Key>,
    },
    /// The same memory already exists: nothing written.
    Unchanged {
        /// Which.
        key: Key,
    },
    /// Kept as a proposal.
    Proposed {
        /// Target key.
        key: Key,
        /// The propose event.
        id: String,
        /// Why.
        reason: ProposalReason,
        /// The change as a unified diff (old → new).
        diff: String,
    },
    /// `--expect` lost: the memory moved on. Nothing written.
    Moved {
        /// Which.
        key: Key,
        /// What the caller expected.
        expected: String,
        /// The heads now.
        heads: Vec<String>,
    },
}

/// Appends a note to this writer's log for today.
pub fn note(store: &Store, ctx: &Ctx, text: &str) -> Result<String, StoreError> {
    policy::free_text::check_note(text)?;
    let event = event(ctx, Op::Note, None, Vec::new(), text.to_string())?;
    let _lock = store.lock()?;
    crate::log::files::append(store, std::slice::from_ref(&event))?;
    Ok(event.id)
}

/// A new event by this actor at this time, with a fresh id.
pub(crate) fn event(
    ctx: &Ctx,
    op: Op,
    key: Option<Key>,
    prev: Vec<String>,
    body: String,
) -> Result<Event, StoreError> {
    // The actor goes into every entry: it passes the policy too.
    policy::check_secrets(&ctx.actor, "actor")?;
    Ok(Event {
        id: new_id(ctx.now).map_err(StoreError::io("random source"))?,
        op,
        time: ctx.now,
        actor: ctx.actor.clone(),
        key,
        prev,
        reason: None,
        consumed: Vec::new(),
        redacted: None,
        body,
    })
}

/// The current content of a memory's file, which must be what the logs
/// say it is (else a hand edit or a crash is pending: refuse). The file
/// is always read: an index entry could be older than a hand edit.
fn current_content(
    store: &Store,
    state: Option<&KeyState>,
    key: &Key,
) -> Result<Option<String>, StoreError> {
    let rel = key.rel_path();
    store.check_dirs(&rel)?;
    let expected = state.and_then(|s| s.view_hash);
    let content = match expected {
        Some(_) => store.read_memory_file(&rel)?,
        None if store.path(&rel).symlink_metadata().is_ok() => store.read_memory_file(&rel)?,
        None => None,
    };
    if expected != content.as_deref().map(|c| fingerprint(c.as_bytes())) {
        return Err(StoreError::Decision(format!(
            "{rel} differs from its last recorded version: run `memoir record` to keep the edit, or `memoir rebuild` to restore it"
        )));
    }
    Ok(content)
}

/// Creates or replaces a memory, or keeps it as a proposal.
pub fn remember(store: &Store, ctx: &Ctx, req: &Remember) -> Result<RememberOutcome, StoreError> {
    let mut memory = Memory {
        name: req.name.clone(),
        description: req.description.clone(),
        kind: req.kind,
        tags: req.tags.clone(),
        source: Some(req.source.clone()),
        confidence: Some(req.confidence),
        created: Some(ctx.now),
        updated: Some(ctx.now),
        review_by: req.review_by,
        expires: req.expires,
        body: req.body.clone(),
    };
    policy::memory::check_tags(&req.tags)?;
    let mut key = req.key.clone();
    let content = memory.render();
    policy::memory::check_size(&content, &key.rel_path())?;
    policy::memory::check_memory(store, &memory, &content, &key.rel_path())?;

    let _lock = store.lock()?;
    let mut snap = crate::index::snapshot::snapshot(store, crate::index::layout::Load::Write)?;
    let state = snap.key(&key);
    if let Some(expected) = &req.expect {
        let heads = state.as_ref().map(|s| s.heads.clone()).unwrap_or_default();
        if heads != [expected.clone()] {
            return Ok(RememberOutcome::Moved {
                key,
                expected: expected.clone(),
                heads,
            });
        }
    }
    let mut prev = state.as_ref().map(|s| s.heads.clone()).unwrap_or_default();
    let conflict = state.as_ref().is_some_and(|s| s.conflict);
    let current = if conflict {
        None
    } else {
        current_content(store, state.as_ref(), &key)?
    };
    let mut replaced = false;
    let mut superseded = Vec::new();
    let mut forget_events = Vec::new();

    if let Some(old) = &current {
        let old_memory = Memory::parse(old).ok();
        if let Some(om) = &old_memory {
            memory.created = om.created.or(Some(ctx.now));
            let same = Memory {
                created: None,
                updated: None,
                ..om.clone()
            } == Memory {
                created: None,
                updated: None,
                ..memory.clone()
            };
            if same {
                return Ok(RememberOutcome::Unchanged { key });
            }
        }
    }
    let mut content = memory.render();

    let proposal =
        |reason: ProposalReason, key: Key, prev: Vec<String>, diff: String, content: String| {
            let e = event(ctx, Op::Propose, Some(key.clone()), prev, content)?;
            crate::log::files::append(store, std::slice::from_ref(&e))?;
            Ok::<_, StoreError>(RememberOutcome::Proposed {
                key,
                id: e.id,
                reason,
                diff,
            })
        };
    let rel = key.rel_path();
    if req.collision == Collision::Propose {
        let diff = text::unified_diff(
            current.as_deref().unwrap_or(""),
            &content,
            &format!("a/{rel}"),
            &format!("b/{rel}"),
        );
        return proposal(ProposalReason::Requested, key, prev, diff, content);
    }
    if current.is_some() || conflict {
        match req.collision {
            Collision::Ask => {
                let old = current.as_deref().unwrap_or("");
                let (reason, label) = if conflict {
                    (ProposalReason::Conflict, "/dev/null".to_string())
                } else {
                    (ProposalReason::Changed, format!("a/{rel}"))
                };
                let diff = text::unified_diff(old, &content, &label, &format!("b/{rel}"));
                return proposal(reason, key, prev, diff, content);
            }
            Collision::Replace => replaced = true,
            Collision::KeepBoth => {
                key = free_key(store, &snap, &key)?;
                memory.name = key.slug.clone();
                memory.created = Some(ctx.now);
                content = memory.render();
                prev = Vec::new();
            }
            Collision::Propose => {}
        }
    }
    if !replaced && req.collision != Collision::KeepBoth {
        if let Some((other, similarity)) = snap.near_duplicate(
            &key.scope,
            Some(&key),
            &memory.description,
            store.config.near_duplicate,
        ) {
            let orel = other.rel_path();
            match req.collision {
                Collision::Ask => {
                    let old = store.read_memory_file(&orel)?.unwrap_or_default();
                    let diff = text::unified_diff(
                        &old,
                        &content,
                        &format!("a/{orel}"),
                        &format!("b/{}", key.rel_path()),
                    );
                    return proposal(
                        ProposalReason::NearDuplicate { other, similarity },
                        key,
                        prev,
                        diff,
                        content,
                    );
                }
                Collision::Replace => {
                    let ostate = snap.key(&other);
                    if ostate.as_ref().is_some_and(|s| s.conflict) {
                        return Err(StoreError::Decision(format!(
                            "{other} has an open conflict: resolve it before replacing it"
                        )));
                    }
                    current_content(store, ostate.as_ref(), &other)?;
                    let mut f = event(
                        ctx,
                        Op::Forget,
                        Some(other.clone()),
                        ostate.map(|s| s.heads).unwrap_or_default(),
                        String::new(),
                    )?;
                    f.reason = Some(format!("superseded by {key}"));
                    forget_events.push(f);
                    superseded.push(other);
                }
                _ => {}
            }
        }
    }
    let event = event(ctx, Op::Remember, Some(key.clone()), prev, content.clone())?;
    let mut events = forget_events;
    events.push(event.clone());
    apply_to(store, &mut snap, &events)?;
    Ok(RememberOutcome::Written {
        key,
        id: event.id,
        replaced,
        superseded,
    })
}

/// Forgets a memory, with a reason.
pub fn forget(store: &Store, ctx: &Ctx, key: &Key, reason: &str) -> Result<String, StoreError> {
    policy::free_text::check_reason(reason)?;
    let _lock = store.lock()?;
    let mut snap = crate::index::snapshot::snapshot(store, crate::index::layout::Load::Write)?;
    let Some(state) = snap.key(key).filter(|s| s.view.is_some() || s.conflict) else {
        return Err(StoreError::NoSuchMemory(key.to_string()));
    };
    if !state.conflict {
        current_content(store, Some(&state), key)?;
    }
    let mut e = event(
        ctx,
        Op::Forget,
        Some(key.clone()),
        state.heads,
        String::new(),
    )?;
    e.reason = Some(reason.to_string());
    apply_to(store, &mut snap, std::slice::from_ref(&e))?;
    Ok(e.id)
}

/// Logs events, then writes their views and the journal: what every
/// command that changes memory does first. Returns the log files
/// appended to and each view written (`None`: removed), in order.
fn write_events<'e>(
    store: &Store,
    events: &'e [Event],
) -> Result<(Vec<crate::log::files::LogFile>, Vec<Written<'e>>), StoreError> {
    preflight(store, events)?;
    let appended = crate::log::files::append(store, events)?;
    if store.failpoint.as_deref() == Some("after-log-append") {
        // Tests simulate a crash between the log append and the view write.
        return Err(StoreError::Decision(
            "failpoint after-log-append: stopped before writing views".into(),
        ));
    }
    let views: Vec<Written<'e>> = events
        .iter()
        .filter(|e| e.op.is_version())
        .filter_map(|e| {
            Some((
                e.key.as_ref()?.rel_path(),
                crate::log::transition::version_content(e),
            ))
        })
        .collect();
    let write = |(rel, content): &Written<'e>| match content {
        Some(c) => store.write_view(rel, c),
        None => store.remove_view(rel),
    };
    if views.len() >= PARALLEL_VIEWS && store.failpoint.is_none() {
        // Many views (a consolidation): written on the cores, the kernel's
        // work. Only each path's last version, the end state of writing
        // them in order.
        let mut seen = std::collections::HashSet::new();
        let last: Vec<&Written<'e>> = views
            .iter()
            .rev()
            .filter(|(rel, _)| seen.insert(rel.as_str()))
            .collect();
        let threads = crate::worker_threads();
        std::thread::scope(|scope| {
            let workers: Vec<_> = last
                .chunks(last.len().div_ceil(threads))
                .map(|part| scope.spawn(move || part.iter().try_for_each(|v| write(v))))
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(crate::index::refresh::thread_failed(store)))
            })
        })?;
    } else {
        for (i, view) in views.iter().enumerate() {
            if store.failpoint.as_deref() == Some("mid-view-update") && i > 0 {
                // Tests simulate a crash with some views written and others not.
                return Err(StoreError::Decision(
                    "failpoint mid-view-update: stopped between views".into(),
                ));
            }
            write(view)?;
        }
    }
    let journal: Vec<_> = views
        .iter()
        .map(|(rel, c)| (rel.clone(), c.map(|c| fingerprint(c.as_bytes()))))
        .collect();
    let _ = store.state.journal_append(&journal);
    Ok((appended, views))
}

/// Refuses, before anything is appended, what would make the writes
/// after the log append fail: a MEMORY.md that cannot be read (a link,
/// not a regular file, not UTF-8) and a view's folder that is a link or
/// no folder. (A write that fails after its append is a crash to
/// repair; one refused here leaves no trace.)
fn preflight(store: &Store, events: &[Event]) -> Result<(), StoreError> {
    store.read(crate::render::memory_md::INDEX_PATH, None)?;
    let mut folders: Vec<String> = events
        .iter()
        .filter(|e| e.op.is_version())
        .filter_map(|e| Some(e.key.as_ref()?.scope.clone()))
        .collect();
    folders.sort_unstable();
    folders.dedup();
    for scope in folders {
        let rel = format!("memory/{scope}");
        match std::fs::symlink_metadata(store.path(&rel)) {
            Ok(m) if !m.is_dir() => {
                return Err(StoreError::Invalid {
                    path: rel,
                    line: None,
                    message: if m.file_type().is_symlink() {
                        "is a symbolic link; memoir never follows links in a store".into()
                    } else {
                        "is not a folder".into()
                    },
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// Writes events (see [`write_events`]) for a command that holds
/// the whole index, then MEMORY.md and the persistent index. Events must
/// each move their memory forward from its current heads.
pub(crate) fn apply(store: &Store, cache: &mut Cache, events: &[Event]) -> Result<(), StoreError> {
    let (appended, views) = write_events(store, events)?;
    for e in events {
        crate::log::transition::track_pending(&mut cache.pending, e, |p| &p.id, Event::clone);
    }
    for (rel, content) in views {
        match content {
            Some(c) => {
                let stamp = std::fs::symlink_metadata(store.path(&rel))
                    .map(|m| crate::model::stamp::Stamp::of(&m))
                    .map_err(StoreError::io(store.path(&rel)))?;
                let entry = entry_for(c, stamp, &rel, &mut cache.dict);
                cache.files.insert(rel, entry);
            }
            None => {
                cache.files.remove(&rel);
            }
        }
    }
    for e in events.iter().filter(|e| e.op.is_version()) {
        let Some(key) = &e.key else { continue };
        let k = key.to_string();
        let after = after_write(cache.keys.get(&k), e);
        cache.keys.insert(k, after);
    }
    for f in appended {
        cache.logs.insert(f.rel, f.stamp);
    }
    crate::index::refresh::write_memory_md(store, cache)?;
    crate::index::refresh::save_cache(store, cache);
    Ok(())
}

/// Writes events (see [`write_events`]) for a per-write command,
/// then MEMORY.md from the snapshot. The persistent index is left as it
/// is: its readers replay the tail (see [`crate::index::snapshot`]). Returns
/// the store paths it wrote or removed: logs, views, MEMORY.md.
pub(crate) fn apply_to(
    store: &Store,
    snap: &mut Snapshot,
    events: &[Event],
) -> Result<Vec<String>, StoreError> {
    let (appended, views) = write_events(store, events)?;
    snap.push(events);
    crate::index::snapshot::write_index_from(store, snap)?;
    let mut written: Vec<String> = appended.into_iter().map(|f| f.rel).collect();
    written.extend(views.into_iter().map(|(rel, _)| rel));
    written.push(crate::render::memory_md::INDEX_PATH.to_string());
    Ok(written)
}

/// The next free key `<slug>-N` (N from 2) in the key's scope.
fn free_key(store: &Store, snap: &Snapshot, key: &Key) -> Result<Key, StoreError> {
    for n in 2..10_000 {
        let slug = crate::model::key::numbered(&key.slug, n)
            .map_err(|e| policy::refused("name", &key.to_string(), None, e.to_string()))?;
        let k = Key {
            scope: key.scope.clone(),
            slug,
        };
        let taken = snap.key(&k).is_some_and(|s| s.view.is_some() || s.conflict)
            || store.path(&k.rel_path()).symlink_metadata().is_ok();
        if !taken {
            return Ok(k);
        }
    }
    Err(policy::refused(
        "name",
        &key.to_string(),
        None,
        "no free key left for --keep-both",
    ))
}
