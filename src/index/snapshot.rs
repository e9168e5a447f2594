//! What a write reads of the store: the persistent index in place, and the
//! log entries appended since it was saved (the tail).
//!
//! A write must cost the same at 50 memories and at 50,000, so it neither
//! decodes the index nor stats every memory file. It maps the index
//! ([`Load::InPlace`]: nothing is checked or decoded up front), replays
//! only the tail, looks up the few keys it touches, finds near-duplicates
//! through the postings and MEMORY.md's block in the index's saved cut.
//! It does not rewrite the index either: the next reader replays
//! the tail again, and once the tail passes a bound ([`MAX_TAIL_BYTES`],
//! [`MAX_TAIL_VERSIONS`]) the next command refreshes the whole index and
//! saves it (compaction), so that the cost per command stays flat.
//!
//! What a write cannot see this way: a memory file edited by hand since the
//! index was saved is not a near-duplicate candidate until the next full
//! refresh (any `recall`, `list` or `check` does one). The file a write
//! replaces is always read, so a hand edit of it is never overwritten.

use crate::index::layout::{Load, OpenIndex};
use crate::log::transition::KeyState;
use crate::log::transition::{advance_by, after_write};
use crate::model::event::Event;
use crate::model::key::Key;
use crate::model::memory::Summary;
use crate::store::{Store, StoreError};
use std::collections::BTreeMap;

/// Past this many bytes of log appended since the index was saved, the
/// index is refreshed and saved instead of replaying the tail again.
pub const MAX_TAIL_BYTES: u64 = 1 << 20;
/// Past this many version events in the tail, the same.
pub const MAX_TAIL_VERSIONS: usize = 256;

/// The log entries appended since the index was saved, replayed on top of it.
#[derive(Debug, Clone, Default)]
pub struct Tail {
    /// Memories whose state changed, with their state now.
    pub keys: BTreeMap<String, KeyState>,
    /// Views written since, by path: their content (`None`: removed).
    pub views: BTreeMap<String, Option<String>>,
    /// Pending proposals now.
    pub pending: Vec<String>,
    /// The proposals the tail added, whole (pending or not).
    pub proposals: Vec<Event>,
    /// Version events replayed.
    pub versions: usize,
    /// The notes the tail added.
    pub notes: Vec<Event>,
}

impl Tail {
    /// Moves the tail forward by one event; `false` if the event does not
    /// only move its memory forward (a fork, an unknown `prev`).
    pub(crate) fn push(&mut self, view: &OpenIndex, e: &Event) -> bool {
        self.track_pending(e);
        if e.op == crate::model::event::Op::Note {
            self.notes.push(e.clone());
        }
        if !e.op.is_version() {
            return true;
        }
        let Some(key) = &e.key else { return true };
        let k = key.to_string();
        let before = match self.keys.get(&k) {
            Some(s) => Some(s.clone()),
            None => view.key_state(&k),
        };
        let Some(after) = advance_by(before.as_ref(), e) else {
            return false;
        };
        self.record(key, after, e);
        true
    }

    fn track_pending(&mut self, e: &Event) {
        crate::log::transition::track_pending(&mut self.pending, e, String::as_str, |e| {
            e.id.clone()
        });
        if e.op == crate::model::event::Op::Propose {
            self.proposals.push(e.clone());
        }
    }

    fn record(&mut self, key: &Key, state: KeyState, e: &Event) {
        self.keys.insert(key.to_string(), state);
        self.views.insert(
            key.rel_path(),
            crate::log::transition::version_content(e).map(str::to_string),
        );
        self.versions += 1;
    }
}

/// The persistent index and its tail: what a write reads of the store.
#[derive(Debug)]
pub struct Snapshot {
    /// The index as saved.
    pub index: OpenIndex,
    /// What the logs added since.
    pub tail: Tail,
}

impl Snapshot {
    /// A memory's state now.
    pub fn key(&self, key: &Key) -> Option<KeyState> {
        let k = key.to_string();
        match self.tail.keys.get(&k) {
            Some(s) => Some(s.clone()),
            None => self.index.key_state(&k),
        }
    }

    /// Records events this command wrote (after their views were written).
    pub(crate) fn push(&mut self, events: &[Event]) {
        for e in events {
            // This command made each event name its memory's heads.
            self.tail.track_pending(e);
            if let (true, Some(key)) = (e.op.is_version(), &e.key) {
                let before = self.key(key);
                self.tail.record(key, after_write(before.as_ref(), e), e);
            }
        }
    }

    /// The pending proposals, whole, oldest first: the index's and the
    /// tail's. `None` if the index's are damaged.
    pub fn pending_events(&self) -> Option<Vec<Event>> {
        let mut by_id: std::collections::HashMap<String, Event> = self
            .index
            .proposals()?
            .into_iter()
            .chain(self.tail.proposals.iter().cloned())
            .map(|e| (e.id.clone(), e))
            .collect();
        self.tail
            .pending
            .iter()
            .map(|id| by_id.remove(id))
            .collect()
    }

    /// Summaries of the views written since the index was saved.
    pub(crate) fn tail_summaries(&self) -> Vec<(Key, Summary)> {
        self.tail
            .views
            .iter()
            .filter_map(|(rel, content)| {
                let m = crate::policy::memory::validate_file(content.as_deref()?, rel).ok()?;
                Some((Key::from_rel_path(rel)?, Summary::of(&m)))
            })
            .collect()
    }

    /// MEMORY.md's generated block: the most valuable memories are chosen
    /// from the index's saved cut (else from all its records), and only
    /// theirs are decoded.
    pub fn memory_md_block(&self, budget: usize) -> crate::render::memory_md::Block {
        enum Source {
            Indexed(usize),
            Tail(usize),
        }
        type Rank<'a> = crate::render::memory_md::Rank<(&'a str, &'a str)>;
        let tail = self.tail_summaries();
        let (indexed, total_indexed) = self.ranked_docs(budget);
        let mut ranked: Vec<(Rank<'_>, Source)> = Vec::new();
        for i in indexed {
            let r = self.index.rec(i);
            let Some((scope, slug)) = crate::model::key::split_rel_path(self.index.path(i)) else {
                continue;
            };
            let rank = Rank {
                kind: r.rank,
                confidence: r.confidence,
                updated: r.updated,
                key: (scope, slug),
            };
            ranked.push((rank, Source::Indexed(i)));
        }
        for (j, (k, s)) in tail.iter().enumerate() {
            let rank = Rank {
                kind: crate::render::memory_md::type_rank(&s.kind),
                confidence: s.confidence,
                updated: s.updated,
                key: (k.scope.as_str(), k.slug.as_str()),
            };
            ranked.push((rank, Source::Tail(j)));
        }
        let total = total_indexed + tail.len();
        // The same order as from summaries, on the records alone.
        crate::render::memory_md::pick(&mut ranked, budget, |(a, _), (b, _)| a.value_order(b));
        let chosen: Vec<(Key, Summary)> = ranked
            .iter()
            .filter_map(|(_, source)| match source {
                Source::Indexed(i) => Some((
                    Key::from_rel_path(self.index.path(*i))?,
                    self.index.entry(*i).0?,
                )),
                Source::Tail(j) => tail.get(*j).cloned(),
            })
            .collect();
        let chosen = chosen.iter().map(|(k, s)| (k, s)).collect();
        crate::render::memory_md::Summaries::chosen(chosen, total).render(budget)
    }

    /// The indexed docs MEMORY.md's block of `budget` lines may choose
    /// from (valid memory files the tail did not touch), and how many such
    /// docs there are. From the saved cut when enough of it is untouched:
    /// any doc outside it ranks below all of it, so `budget` untouched
    /// docs of the cut outrank it. Else every record.
    fn ranked_docs(&self, budget: usize) -> (Vec<usize>, usize) {
        let touched = |i: usize| self.tail.views.contains_key(self.index.path(i));
        let ranked = |i: usize| {
            self.index.is_valid(i)
                && crate::model::key::split_rel_path(self.index.path(i)).is_some()
        };
        if let Some((count, cut)) = self.index.memory_md_cut() {
            let whole = cut.len() == count;
            let kept: Vec<usize> = cut.into_iter().filter(|&i| !touched(i)).collect();
            if whole || kept.len() >= budget {
                let touched_ranked = (self.tail.views.keys())
                    .filter_map(|path| self.index.position(path))
                    .filter(|&i| ranked(i))
                    .count();
                return (kept, count.saturating_sub(touched_ranked));
            }
        }
        let all: Vec<usize> = (0..self.index.len())
            .filter(|&i| ranked(i) && !touched(i))
            .collect();
        let count = all.len();
        (all, count)
    }
}

/// The log entries appended since `view` was saved, replayed on top of
/// it; `None` when they do not only move memories forward, a log was
/// rewritten or removed, or the tail is past its bound.
pub(crate) fn tail(store: &Store, view: &OpenIndex) -> Result<Option<Tail>, StoreError> {
    let since = crate::index::watched::Since::ask(store, view.head.watch.as_ref());
    let files = crate::index::watched::log_files(store, &view.head.logs, &since)?;
    tail_of(store, view, &files)
}

/// [`tail`] from the log files as they are now.
pub(crate) fn tail_of(
    store: &Store,
    view: &OpenIndex,
    files: &[crate::log::files::LogFile],
) -> Result<Option<Tail>, StoreError> {
    let Some(grown) = crate::log::files::log_growth(files, &view.head.logs) else {
        return Ok(None);
    };
    if grown
        .iter()
        .map(|(f, from)| f.stamp.size - from)
        .sum::<u64>()
        > MAX_TAIL_BYTES
    {
        return Ok(None);
    }
    let mut tail = Tail {
        pending: view.head.pending.clone(),
        ..Tail::default()
    };
    for (f, from) in grown {
        let Some(text) = store.read_from(&f.rel, from) else {
            return Ok(None);
        };
        // As in a full replay, quarantined entries are skipped; a torn
        // end may yet be completed.
        let parsed = match crate::log::files::parse_log(store, &f.rel, &text) {
            Ok(p) if p.torn.is_empty() && !p.open_end => p,
            _ => return Ok(None),
        };
        for e in &parsed.events {
            if !tail.push(view, e) || tail.versions > MAX_TAIL_VERSIONS {
                return Ok(None);
            }
        }
    }
    Ok(Some(tail))
}

/// Each of `keys` with its heads now: the index's key states with the
/// log entries appended since it was saved replayed on top. Where that
/// tail cannot be replayed (a fork since, a log rewritten), the index's
/// own: a search that met such a tail refreshed the index before opening
/// it, so it is current.
pub fn heads(store: &Store, view: &OpenIndex, keys: &[Key]) -> Vec<(Key, Vec<String>)> {
    if keys.is_empty() {
        return Vec::new();
    }
    let tail = tail(store, view).ok().flatten().unwrap_or_default();
    keys.iter()
        .map(|key| {
            let k = key.to_string();
            let state = match tail.keys.get(&k) {
                Some(s) => Some(s.clone()),
                None => view.key_state(&k),
            };
            (key.clone(), state.map(|s| s.heads).unwrap_or_default())
        })
        .collect()
}

/// The persistent index and its tail. When there is no usable index, or
/// the tail cannot be replayed on it, refreshes and saves the index
/// first (the one time a write reads the whole store).
pub(crate) fn snapshot(store: &Store) -> Result<Snapshot, StoreError> {
    if let Some((view, _)) = crate::index::file::open(&store.state, Load::InPlace) {
        if let Some(tail) = tail(store, &view)? {
            return Ok(Snapshot { index: view, tail });
        }
    }
    let cache = crate::index::refresh::refreshed_cache(store)?;
    let saved = crate::index::file::save(&store.state, &cache).is_ok();
    let view = match crate::index::file::open(&store.state, Load::InPlace) {
        Some((view, _)) if saved => Some(view),
        _ => OpenIndex::parse(
            crate::index::layout::encode(&cache, crate::index::cache::CACHE_VERSION),
            crate::index::cache::CACHE_VERSION,
        ),
    };
    let view = view.ok_or(StoreError::Internal(
        "the persistent index could not be encoded",
    ))?;
    let tail = Tail {
        pending: view.head.pending.clone(),
        ..Tail::default()
    };
    Ok(Snapshot { index: view, tail })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::layout::Load;
    use crate::testing::TempStore;

    #[test]
    fn a_snapshot_is_the_saved_index_and_its_tail_as_a_replay_says() {
        let mut t = TempStore::new();
        t.memory("project/a", "alpha one")
            .memory("project/b", "beta two");
        // A reader saves the index; later writes are its tail.
        let cache = crate::index::refresh::refreshed_cache(&t.store).expect("indexed");
        crate::index::file::save(&t.store.state, &cache).expect("saved");
        t.memory("project/c", "gamma three")
            .replace("project/a", "alpha changed");
        let snap = snapshot(&t.store).expect("a snapshot");
        let tail: Vec<&String> = snap.tail.keys.keys().collect();
        assert_eq!(
            tail,
            ["project/a", "project/c"],
            "only what came after the save"
        );
        let (replay, _) = crate::log::read::replay(&t.store).expect("replayed");
        for (k, state) in replay.key_states() {
            let key = Key::parse(&k).expect("a key").0;
            assert_eq!(snap.key(&key), Some(state), "{k}");
        }
        let block = snap.memory_md_block(100);
        for d in ["alpha changed", "beta two", "gamma three"] {
            assert!(block.text.contains(d), "{d} in {}", block.text);
        }
        assert!(!block.text.contains("alpha one"));
    }

    #[test]
    fn heads_are_the_index_s_with_its_tail_replayed() {
        let mut t = TempStore::new();
        t.memory("project/a", "alpha one")
            .memory("project/b", "beta two");
        let cache = crate::index::refresh::refreshed_cache(&t.store).expect("indexed");
        crate::index::file::save(&t.store.state, &cache).expect("saved");
        // After the save: only the tail knows a's new head, and c.
        t.replace("project/a", "alpha changed")
            .memory("project/c", "gamma three");
        let (view, _) =
            crate::index::file::open(&t.store.state, Load::InPlace).expect("the saved index");
        let keys: Vec<Key> = ["project/a", "project/b", "project/c", "project/none"]
            .iter()
            .map(|k| Key::parse(k).expect("a key").0)
            .collect();
        let (replay, _) = crate::log::read::replay(&t.store).expect("replayed");
        let want: Vec<(Key, Vec<String>)> = keys
            .iter()
            .map(|k| {
                let heads = replay.memories.get(k).map(|m| m.heads.clone());
                (k.clone(), heads.unwrap_or_default())
            })
            .collect();
        assert!(want[..3].iter().all(|(_, h)| h.len() == 1), "{want:?}");
        assert_ne!(
            view.key_state("project/a").map(|s| s.heads),
            Some(want[0].1.clone()),
            "the index alone is behind"
        );
        assert_eq!(heads(&t.store, &view, &keys), want);
        assert!(heads(&t.store, &view, &[]).is_empty());
    }

    #[test]
    fn a_tail_past_its_bound_is_none_and_the_index_is_rebuilt() {
        let mut t = TempStore::new();
        t.memory("project/a", "alpha");
        let cache = crate::index::refresh::refreshed_cache(&t.store).expect("indexed");
        crate::index::file::save(&t.store.state, &cache).expect("saved");
        for i in 0..=MAX_TAIL_VERSIONS {
            t.memory(&format!("project/m{i}"), &format!("memory number {i}"));
        }
        let (view, _) =
            crate::index::file::open(&t.store.state, Load::InPlace).expect("the saved index");
        assert!(
            tail(&t.store, &view).expect("read").is_none(),
            "past the bound"
        );
        // A snapshot then compacts: its tail is empty and it knows them all.
        let snap = snapshot(&t.store).expect("a snapshot");
        assert!(snap.tail.keys.is_empty());
        let last = Key::parse(&format!("project/m{MAX_TAIL_VERSIONS}"))
            .expect("a key")
            .0;
        assert!(snap.key(&last).is_some());
    }

    #[test]
    fn memory_md_from_the_saved_cut_is_memory_md_from_every_record() {
        use crate::index::cache::{Cache, FileEntry};
        use crate::model::stamp::Stamp;
        // More memories than the cut holds, of every rank; a tail that
        // removes some of the most valuable (so the cut's rest must do)
        // and, for large budgets, too many of them (so every record must).
        let mut cache = Cache::default();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let n = crate::index::layout::CUT + 500;
        for i in 0..n {
            let r = next();
            let kind = ["user", "feedback", "project", "reference"][(r % 4) as usize];
            let summary = (r % 23 != 0).then(|| Summary {
                name: format!("m{i}"),
                description: format!("memory {i}"),
                kind: kind.into(),
                tags: vec![],
                source: Some("test".into()),
                confidence: [1.0, 0.9, 0.5][(r >> 8) as usize % 3],
                updated: ((r >> 16) % 50) as i64,
                review_by: None,
                expires: None,
            });
            let scope = ["project", "user"][(r >> 32) as usize % 2];
            let entry = FileEntry {
                stamp: Stamp { size: 1, mtime: 1 },
                hash: r,
                summary,
                error: None,
                terms: Default::default(),
                len: 1,
                clean: true,
            };
            cache
                .files
                .insert(format!("memory/{scope}/m{i:05}.md"), entry);
        }
        let bytes = crate::index::layout::encode(&cache, 1);
        let index = OpenIndex::parse(bytes, 1).expect("parses");
        let (_, cut) = index.memory_md_cut().expect("a cut");
        assert_eq!(cut.len(), crate::index::layout::CUT);
        for removed in [0, 10, 300, 1000] {
            let mut tail = Tail::default();
            let mut rest = cache.clone();
            for &i in cut.iter().step_by(2).take(removed) {
                tail.views.insert(index.path(i).to_string(), None);
                rest.files.remove(index.path(i));
            }
            let snap = Snapshot {
                index: OpenIndex::parse(crate::index::layout::encode(&cache, 1), 1)
                    .expect("parses"),
                tail,
            };
            for budget in [10, 200, 700, 2000] {
                let want = crate::index::refresh::memory_md_block(&rest, budget);
                assert_eq!(snap.memory_md_block(budget), want, "{removed} {budget}");
            }
        }
    }
}
