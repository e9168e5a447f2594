//! The batch every command that changes memory writes through: events
//! checked and appended to this writer's log (fsync), their views written
//! (on several threads for a large batch), the journal, and the persistent
//! index or a write's snapshot told of them. `note`, `remember`, `forget`,
//! `record`, `resolve`, `rollback` and `consolidate` all end here.

use crate::index::{Index, Snapshot};
use crate::model::event::Event;
use crate::model::fingerprint::fingerprint;
use crate::model::key::Key;
use crate::store::{Failpoint, Store, StoreError};

/// From this many views in one write (a consolidation), they are written
/// on several threads; fewer are not worth the threads' start.
const PARALLEL_VIEWS: usize = 256;

/// A view a command wrote: its path and content (`None`: removed).
type View<'e> = (String, Option<&'e str>);

/// Logs events, then writes their views and the journal: what every
/// command that changes memory does first. Returns the log files
/// appended to and each view written (`None`: removed), in order.
fn write_events<'e>(
    store: &Store,
    events: &'e [Event],
) -> Result<(Vec<crate::log::files::LogFile>, Vec<View<'e>>), StoreError> {
    preflight(store, events)?;
    let appended = crate::log::files::append(store, events)?;
    // Tests simulate a crash between the log append and the view write.
    store.stop_at(Failpoint::AfterLogAppend)?;
    let views: Vec<View<'e>> = versions(events)
        .map(|(key, e)| (key.rel_path(), crate::log::transition::version_content(e)))
        .collect();
    write_views(store, &views)?;
    let journal: Vec<_> = views
        .iter()
        .map(|(rel, c)| (rel.clone(), c.map(|c| fingerprint(c.as_bytes()))))
        .collect();
    let _ = store.state.journal_append(&journal);
    Ok((appended, views))
}

/// The events that make a version of a memory, each with its key.
fn versions(events: &[Event]) -> impl Iterator<Item = (&Key, &Event)> {
    events
        .iter()
        .filter(|e| e.op.is_version())
        .filter_map(|e| Some((e.key.as_ref()?, e)))
}

/// Writes (or removes) the views, in order.
fn write_views(store: &Store, views: &[View<'_>]) -> Result<(), StoreError> {
    let write = |(rel, content): &View<'_>| match content {
        Some(c) => store.write_view(rel, c),
        None => store.remove_view(rel),
    };
    if views.len() >= PARALLEL_VIEWS && !store.stops_at(Failpoint::MidViewUpdate) {
        // Many views (a consolidation): written on the cores, the kernel's
        // work. Only each path's last version, the end state of writing
        // them in order.
        let mut seen = std::collections::HashSet::new();
        let last: Vec<&View<'_>> = views
            .iter()
            .rev()
            .filter(|(rel, _)| seen.insert(rel.as_str()))
            .collect();
        let threads = crate::parallel::worker_threads();
        let parts = last.chunks(last.len().div_ceil(threads));
        let written = crate::parallel::each(
            parts,
            |part| part.iter().try_for_each(|v| write(v)),
            || crate::store::listing::thread_failed(store),
        );
        return written.map(drop);
    }
    for (i, view) in views.iter().enumerate() {
        if i > 0 {
            // Tests simulate a crash with some views written and others not.
            store.stop_at(Failpoint::MidViewUpdate)?;
        }
        write(view)?;
    }
    Ok(())
}

/// Refuses, before anything is appended, what would make the writes
/// after the log append fail: a MEMORY.md that cannot be read (a link,
/// not a regular file, not UTF-8) and a view's folder that is a link or
/// no folder. (A write that fails after its append is a crash to
/// repair; one refused here leaves no trace.)
fn preflight(store: &Store, events: &[Event]) -> Result<(), StoreError> {
    store.read(crate::render::memory_md::MEMORY_MD, None)?;
    let mut folders: Vec<String> = versions(events).map(|(key, _)| key.scope.clone()).collect();
    folders.sort_unstable();
    folders.dedup();
    for scope in folders {
        let rel = format!("memory/{scope}");
        match std::fs::symlink_metadata(store.path(&rel)) {
            Ok(m) if m.file_type().is_symlink() => return Err(StoreError::link(&rel)),
            Ok(m) if !m.is_dir() => {
                return Err(StoreError::Invalid {
                    path: rel,
                    line: None,
                    message: "is not a folder".into(),
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
pub(crate) fn apply(store: &Store, index: &mut Index, events: &[Event]) -> Result<(), StoreError> {
    let (logs, views) = write_events(store, events)?;
    let files = views;
    index.record(
        store,
        &crate::index::Written {
            events,
            logs,
            files,
        },
    )?;
    let block = index.memory_md_block(store.config.index_budget);
    crate::change::memory_md::write(store, &block.text)?;
    index.save(store);
    Ok(())
}

/// Writes events (see [`write_events`]) for a per-write command,
/// then MEMORY.md from the snapshot. The persistent index is left as it
/// is: its readers replay the tail (see [`crate::index::Index::for_write`]). Returns
/// the store paths it wrote or removed: logs, views, MEMORY.md.
pub(crate) fn apply_to(
    store: &Store,
    snap: &mut Snapshot,
    events: &[Event],
) -> Result<Vec<String>, StoreError> {
    let (appended, views) = write_events(store, events)?;
    snap.push(events);
    let block = snap.memory_md_block(store.config.index_budget);
    crate::change::memory_md::write(store, &block.text)?;
    let mut written: Vec<String> = appended.into_iter().map(|f| f.rel).collect();
    written.extend(views.into_iter().map(|(rel, _)| rel));
    written.push(crate::render::memory_md::MEMORY_MD.to_string());
    Ok(written)
}
