//! `rebuild`: every view the logs give written again (memory files and
//! MEMORY.md), repairing what memoir left behind (a crash between the log
//! append and the view write) and never destroying a hand change whose
//! content is nowhere in the logs (unless `--force`).

use crate::change::drift::{memory_md_block, scan_to_write, Drift, DriftKind, Rewritten, Scan};
use crate::fs::replace::{leftovers, remove_leftovers, Leftovers, Writers};
use crate::index::Index;
use crate::model::key::Key;
use crate::model::memory;
use crate::policy::memory::validate_file;
use crate::render::memory_md::MEMORY_MD;
use crate::store::{Store, StoreError};
use std::collections::{HashMap, HashSet};

/// What `rebuild` did (or, with `--check`, would do).
#[derive(Debug, Clone, Default)]
pub struct RebuildReport {
    /// Files written.
    pub written: Vec<String>,
    /// Files removed.
    pub removed: Vec<String>,
    /// Hand changes left alone (need `--force`).
    pub refused: Vec<Drift>,
    /// Files that could not be read (a link, bad UTF-8, a name that is not
    /// UTF-8), with why; left alone (need `--force`).
    pub unreadable: Vec<(String, String)>,
    /// MEMORY.md changed.
    pub index_changed: bool,
}

/// The folders memoir replaces files in, relative to the store's root,
/// and whose temporary files in each are memoir's: the views' folders,
/// the logs' (a `redact` rewrites a log whole) and, of the root, which is
/// the team's, MEMORY.md's alone.
fn replaced_in(store: &Store) -> Vec<(String, Leftovers<'static>)> {
    let views = store
        .config
        .scopes
        .iter()
        .map(|scope| format!("memory/{scope}"));
    let days = crate::fs::folder::Folder::open_no_link(&store.path("memory/log"))
        .map(|folder| {
            let names = folder
                .names()
                .filter_map(|day| day.to_str().map(str::to_string));
            names
                .map(|day| format!("memory/log/{day}"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut out: Vec<_> = views.chain(days).map(|f| (f, Leftovers::All)).collect();
    out.push((String::new(), Leftovers::Of(MEMORY_MD)));
    out
}

/// Removes what writes killed before their rename left: `fs::replace`
/// says what a leftover is and that it lies beside the file it was to
/// replace, so this asks it to clean each folder memoir replaces files in
/// under the store lock, held here (so no live write owns one); and in
/// the clone's local state (the persistent index, the access signal, the
/// journal), which no lock covers, those of writers gone.
fn remove_temporary_files(store: &Store) {
    for (folder, whose) in replaced_in(store) {
        remove_leftovers(&store.path(&folder), whose, Writers::Any);
    }
    remove_leftovers(&store.state.path, Leftovers::All, Writers::Gone);
}

/// The temporary files of writes killed before their rename (their
/// writers gone), under the store's root: what `check` reports and
/// `rebuild` removes.
pub(crate) fn temporary_files(store: &Store) -> Vec<String> {
    let mut out: Vec<String> = replaced_in(store)
        .into_iter()
        .flat_map(|(folder, whose)| {
            let names = leftovers(&store.path(&folder), whose, Writers::Gone);
            names.into_iter().map(move |name| {
                let name = name.to_string_lossy();
                match folder.as_str() {
                    "" => name.into_owned(),
                    folder => format!("{folder}/{name}"),
                }
            })
        })
        .collect();
    out.sort();
    out
}

/// Regenerates memory files and MEMORY.md from the logs. Stale and
/// missing views are repaired; hand changes whose content exists nowhere
/// in the logs are left alone unless `force`.
pub fn rebuild(store: &Store, force: bool, dry_run: bool) -> Result<RebuildReport, StoreError> {
    let _lock = store.lock()?;
    rebuild_locked(store, force, dry_run)
}

/// [`rebuild`] for a caller that holds the store lock.
pub(crate) fn rebuild_locked(
    store: &Store,
    force: bool,
    dry_run: bool,
) -> Result<RebuildReport, StoreError> {
    if !dry_run {
        remove_temporary_files(store);
    }
    let scan = scan_to_write(store)?;
    let mut report = RebuildReport::default();
    let writes = views_to_write(&scan, force, &mut report);
    // A write trusts the index's records of memory files rather than
    // stat every file, and a rebuild writes outside the logs' tail, so a
    // stale record would leave memories out of the MEMORY.md the next
    // write makes (after a crash repaired by `rebuild`, a consolidation
    // committed such a MEMORY.md): the index is off the disk while the
    // views are written.
    let patch = if dry_run {
        None
    } else {
        Index::take_off(store, writes.len())
    };
    // What is written, as MEMORY.md weighs it.
    let mut rewritten = Rewritten::new(store.config.index_budget);
    let by_version = remove_gone(store, &scan, &writes, dry_run, &mut report, &mut rewritten)?;
    // With nothing to write, the logs are not read again.
    if !by_version.is_empty() {
        write_from_logs(store, by_version, dry_run, &mut report, &mut rewritten)?;
    }
    report.written.sort();
    report.refused.sort_by(|a, b| a.path.cmp(&b.path));
    report.unreadable.sort();
    // The paths written are not held beside MEMORY.md's ranking (after
    // every view was deleted, tens of thousands).
    drop(writes);
    let block = memory_md_block(&scan, &rewritten, store.config.index_budget);
    let (current, wanted) = crate::change::memory_md::expected(store, &block.text)?;
    report.index_changed = current.as_deref() != Some(wanted.as_str());
    if dry_run {
        return Ok(report);
    }
    if report.index_changed {
        store.write_view(MEMORY_MD, &wanted)?;
    }
    // The persistent index is not rebuilt here: it is a cache that every
    // reader checks against the logs' and files' stamps, and the next
    // one brings it up to date reading only what changed. (Rebuilding
    // it here would hold it beside what the replay leaves behind.)
    reset_journal(store, &scan, &report);
    if let Some(index) = patch {
        let mut changed = report.written.clone();
        changed.extend(report.removed.iter().cloned());
        if patch_index(store, index, &changed).is_err() {
            let _ = Index::discard(store);
        }
    }
    Ok(report)
}

/// Each view to write, by path and key, sorted: the drifts it is safe to
/// overwrite (and with `force`, every drift and unreadable file). Those
/// left alone go into `report`.
fn views_to_write(scan: &Scan, force: bool, report: &mut RebuildReport) -> Vec<(String, Key)> {
    let mut writes = Vec::new();
    for d in scan.drifts() {
        let safe = force || d.kind.is_memoirs() || d.kind == DriftKind::Deleted || d.in_logs;
        if !safe {
            report.refused.push(d);
            continue;
        }
        writes.push((d.path, d.key));
    }
    // A file that could not be read at all (a link, bad UTF-8) is replaced only with --force.
    for (rel, content) in &scan.files {
        let (Err(why), Some(key)) = (content, Key::from_rel_path(rel)) else {
            continue;
        };
        if force {
            writes.push((rel.clone(), key));
        } else {
            report.unreadable.push((rel.clone(), why.to_string()));
        }
    }
    writes.sort();
    writes
}

/// Removes (unless `dry_run`) each file of `writes` whose memory has no
/// view now; returns the others grouped by the version whose text they
/// get.
fn remove_gone<'a>(
    store: &Store,
    scan: &'a Scan,
    writes: &'a [(String, Key)],
    dry_run: bool,
    report: &mut RebuildReport,
    rewritten: &mut Rewritten,
) -> Result<ByVersion<'a>, StoreError> {
    // The views' texts are read back from the logs and written as they
    // are found, never all held at once (a rebuild after every view was
    // deleted writes tens of thousands).
    let mut by_version: ByVersion<'a> = HashMap::new();
    for (rel, key) in writes {
        match scan
            .replay
            .memories
            .get(key)
            .and_then(|v| v.view.as_deref())
        {
            Some(id) => by_version.entry(id).or_default().push((rel, key)),
            None => {
                report.removed.push(rel.to_string());
                rewritten.changed.insert(rel.to_string());
                if !dry_run {
                    store.remove_view(rel)?;
                }
            }
        }
    }
    Ok(by_version)
}

/// The views to write, by the id of the version whose text they get.
type ByVersion<'a> = HashMap<&'a str, Vec<(&'a str, &'a Key)>>;

/// Writes (unless `dry_run`) each view of `by_version` with its text, as
/// one read of the logs finds it; what is written goes into `report` and
/// `rewritten`.
fn write_from_logs(
    store: &Store,
    mut by_version: ByVersion<'_>,
    dry_run: bool,
    report: &mut RebuildReport,
    rewritten: &mut Rewritten,
) -> Result<(), StoreError> {
    // Writing is most of a rebuild after every view was deleted, nearly
    // all of it in the kernel: the views are parsed (for MEMORY.md) and
    // written on worker threads while this one reads the logs.
    let threads = crate::parallel::worker_threads();
    let budget = store.config.index_budget;
    std::thread::scope(|scope| -> Result<(), StoreError> {
        let (senders, workers): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| {
                let (tx, rx) = std::sync::mpsc::sync_channel(256);
                (
                    tx,
                    scope.spawn(move || write_views(store, rx, dry_run, budget)),
                )
            })
            .unzip();
        let mut next = 0;
        // Every view deleted, at 50,000 memories: seconds. Say how far.
        let total: usize = by_version.values().map(Vec::len).sum();
        let meter = store.meter("writing memory files", total, total >= 1000);
        let read = crate::log::read::each_event(store, |e| {
            // The first copy of a version only.
            let Some(targets) = by_version.remove(e.id.as_str()) else {
                return Ok(());
            };
            let Some(content) = crate::log::transition::version_content(&e) else {
                return Ok(());
            };
            for (rel, key) in targets {
                // A worker that failed has stopped: its error is
                // the one reported.
                let _ = senders[next % threads].send((rel, key, content.to_string()));
                next += 1;
            }
            meter.advance(next);
            Ok(())
        });
        drop(senders);
        let mut failed = read.err();
        for worker in workers {
            let (done, part, error) = worker.join().unwrap_or_else(|_| {
                let nothing = Rewritten::new(budget);
                (
                    Vec::new(),
                    nothing,
                    Some(crate::store::listing::thread_failed(store)),
                )
            });
            report.written.extend(done.into_iter().map(str::to_string));
            rewritten.merge(part);
            failed = failed.or(error);
        }
        meter.finish();
        failed.map_or(Ok(()), Err)
    })
}

/// Rewrites the journal: every view the logs give is what memoir wrote,
/// but for the files left alone.
fn reset_journal(store: &Store, scan: &Scan, report: &RebuildReport) {
    // Files left alone keep no journal entry (a set: after a hand edit
    // of every file, that is tens of thousands of paths).
    let left_alone: HashSet<&str> = report
        .refused
        .iter()
        .map(|d| d.path.as_str())
        .chain(report.unreadable.iter().map(|(p, _)| p.as_str()))
        .collect();
    let views = scan
        .replay
        .memories
        .keys()
        .filter_map(|k| Some((k.rel_path(), scan.replay.view_print(k)?)))
        .filter(|(rel, _)| !left_alone.contains(rel.as_str()));
    store.journal_reset(views);
}

/// Tells the index taken off the disk before the views were written
/// ([`Index::take_off`]) of the files at `paths` as they are now, and saves
/// it again.
fn patch_index(store: &Store, mut index: Index, paths: &[String]) -> Result<(), StoreError> {
    let mut contents = Vec::with_capacity(paths.len());
    for rel in paths {
        contents.push((rel.clone(), store.read_memory_file(rel)?));
    }
    let files = contents
        .iter()
        .map(|(rel, c)| (rel.clone(), c.as_deref()))
        .collect();
    index.record(
        store,
        &crate::index::Written {
            files,
            ..Default::default()
        },
    )?;
    index.save_or_fail(store)
}

/// Writes each view it is sent (path, key, text; unless `dry_run`);
/// returns their paths and what MEMORY.md weighs of them. Stops at the
/// first failure, which it returns.
fn write_views<'a>(
    store: &Store,
    views: std::sync::mpsc::Receiver<(&'a str, &'a Key, String)>,
    dry_run: bool,
    budget: usize,
) -> (Vec<&'a str>, Rewritten, Option<StoreError>) {
    let mut done = Vec::new();
    let mut rewritten = Rewritten::new(budget);
    for (rel, key, content) in views {
        let summary = validate_file(&content, rel)
            .ok()
            .map(|m| memory::Summary::of(&m));
        rewritten.written(rel, key, summary);
        done.push(rel);
        if dry_run {
            continue;
        }
        // A view that is a link (replaced only with --force) goes with
        // the rename: it replaces the link, never what it points to.
        if let Err(e) = store.write_view(rel, &content) {
            return (done, rewritten, Some(e));
        }
    }
    (done, rewritten, None)
}

#[cfg(test)]
mod tests {
    use super::rebuild;
    use crate::change::drift::DriftKind;
    use crate::testing::TempStore;

    #[test]
    fn a_view_deleted_after_memoir_wrote_it_is_restored() {
        let t = TempStore::new();
        let rel = t.remember("deploy", "Deploys run from CI.").rel_path();
        let view = t.read(&rel);
        t.remove(&rel);
        let dry = rebuild(&t.store, false, true).expect("rebuild --check");
        assert_eq!((dry.written, t.read(&rel)), (vec![rel.clone()], None));
        let report = rebuild(&t.store, false, false).expect("rebuild");
        assert_eq!(report.written, std::slice::from_ref(&rel));
        assert_eq!(t.read(&rel), view);
        assert_eq!(t.drifts(), []);
    }

    #[test]
    fn views_memoir_left_stale_or_never_wrote_are_repaired() {
        let t = TempStore::new();
        let key = t.remember("deploy", "Deploys run from CI.");
        let rel = key.rel_path();
        let view = t.read(&rel).expect("the view");
        let new = view.replace("from CI", "from the release branch");
        t.append_only(&key, &new);
        // A memory whose first version was logged and never written: its
        // file is nowhere, so nothing of it is in the logs either.
        let (other, _) = crate::model::key::Key::parse("project/review").expect("key");
        let first = view.replace("deploy", "review");
        t.append_only(&other, &first);
        let missing = other.rel_path();
        assert_eq!(
            t.drifts(),
            [
                (rel.clone(), DriftKind::Stale),
                (missing.clone(), DriftKind::Missing)
            ]
        );
        let report = rebuild(&t.store, false, false).expect("rebuild");
        assert_eq!(report.written, [rel.clone(), missing.clone()]);
        assert_eq!(t.read(&rel), Some(new));
        assert_eq!(t.read(&missing), Some(first));
        assert_eq!(t.drifts(), []);
    }

    #[test]
    fn a_hand_edit_is_left_alone_unless_forced() {
        let t = TempStore::new();
        let rel = t.remember("deploy", "Deploys run from CI.").rel_path();
        let view = t.read(&rel);
        t.edit(&rel, "from CI", "by hand");
        let edited = t.read(&rel);
        let report = rebuild(&t.store, false, false).expect("rebuild");
        let refused: Vec<_> = report.refused.iter().map(|d| (&d.path, d.kind)).collect();
        assert_eq!(refused, [(&rel, DriftKind::Edited)]);
        assert!(report.written.is_empty());
        assert_eq!(t.read(&rel), edited);
        assert_eq!(t.drifts(), [(rel.clone(), DriftKind::Edited)]);
        let report = rebuild(&t.store, true, false).expect("rebuild --force");
        assert_eq!(report.written, std::slice::from_ref(&rel));
        assert_eq!(t.read(&rel), view);
        assert_eq!(t.drifts(), []);
    }
}
