//! The one transition: a memory's state after one more version event.
//!
//! A memory's versions form a DAG by their `prev` links (see
//! `log::replay`). Almost every version names exactly the heads
//! before it, and so moves the memory forward: its only head is the new
//! version, and its file shows that version's content. [`advance`] is that
//! step, and every path that moves a memory forward calls it: a full
//! replay (for each memory whose versions form a chain), the persistent
//! index's refresh from appended log entries, the tail a write replays on
//! top of the saved index, and a write recording what it appended. Any
//! other event (a fork from two clones, a `prev` not seen yet, a cycle) is
//! not a step: the full replay resolves the whole DAG, and the incremental
//! paths fall back to it. A property test (below) drives random histories
//! through every path and checks that they reach the same state.

use crate::model::event::{Event, Op};
use crate::model::fingerprint::fingerprint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A memory's replayed state, as recorded in the persistent index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyState {
    /// The heads of its version DAG.
    pub heads: Vec<String>,
    /// The version the view shows (none: no file).
    pub view: Option<String>,
    /// Fingerprint of the view's content.
    pub view_hash: Option<u64>,
    /// The heads differ.
    pub conflict: bool,
}

/// The content a version event gives its memory: `None` for a tombstone
/// (a redacted version with its whole body removed is one too).
pub fn version_content(e: &Event) -> Option<&str> {
    match e.op {
        _ if e.redacted.is_some() && e.body.is_empty() => None,
        Op::Remember => Some(&e.body),
        Op::Resolve if !e.body.is_empty() => Some(&e.body),
        _ => None,
    }
}

/// The fingerprint of the content a version event gives its memory.
pub fn content_print(e: &Event) -> Option<u64> {
    version_content(e).map(|c| fingerprint(c.as_bytes()))
}

/// A memory's state after the version `id`, whose `prev` links are `prev`
/// and whose content has the fingerprint `print` (`None`: a tombstone), if
/// that version moves the memory forward from `state`: a first version
/// names nothing, a later one names every head (even of an open conflict,
/// which it then resolves). `None` when it does not (a fork, an unknown
/// `prev`): only a full replay of the DAG knows the state then.
pub fn advance<'p>(
    state: Option<&KeyState>,
    id: &str,
    prev: impl IntoIterator<Item = &'p str>,
    print: Option<u64>,
) -> Option<KeyState> {
    let prev: BTreeSet<&str> = prev.into_iter().collect();
    let forward = match state {
        None => prev.is_empty(),
        Some(ks) => {
            !prev.is_empty() && ks.heads.iter().map(String::as_str).collect::<BTreeSet<_>>() == prev
        }
    };
    forward.then(|| only_head(id, print))
}

/// The state of a memory whose one head is `id`, of content `print`.
fn only_head(id: &str, print: Option<u64>) -> KeyState {
    KeyState {
        heads: vec![id.to_string()],
        view: print.map(|_| id.to_string()),
        view_hash: print,
        conflict: false,
    }
}

/// [`advance`] by a version event.
pub fn advance_by(state: Option<&KeyState>, e: &Event) -> Option<KeyState> {
    advance(
        state,
        &e.id,
        e.prev.iter().map(String::as_str),
        content_print(e),
    )
}

/// The state after an event this command wrote, naming the heads it read
/// under the lock: a step by [`advance`]. Were the heads it read not the
/// memory's (a stale index: a bug), the event is taken as the only head,
/// and the next full replay of the logs tells the truth.
pub fn after_write(state: Option<&KeyState>, e: &Event) -> KeyState {
    advance_by(state, e).unwrap_or_else(|| only_head(&e.id, content_print(e)))
}

/// Keeps a list of pending proposals (oldest first) in step with an
/// event: a proposal joins it, and what an event consumes leaves it. The
/// list holds items of any kind that name a proposal by `id`.
pub fn track_pending<T>(
    pending: &mut Vec<T>,
    e: &Event,
    id: impl Fn(&T) -> &str,
    item: impl FnOnce(&Event) -> T,
) {
    if e.op == Op::Propose {
        pending.push(item(e));
    }
    if !e.consumed.is_empty() {
        pending.retain(|p| !e.consumed.iter().any(|c| c == id(p)));
    }
}

#[cfg(test)]
mod tests {
    //! Every path that moves memories forward reaches the state a full
    //! replay of the same events gives: the replay's three ways of keeping
    //! text, the index's refresh from appended entries (falling back to a
    //! replay when a batch is not a run of steps, as `refresh_logs` does),
    //! and a write's tail on top of a saved index (falling back likewise).

    use super::*;
    use crate::index::testing::{apply_events, encode, Tail, CACHE_VERSION};
    use crate::index::{Cache, OpenIndex};
    use crate::log::replay::{Builder, Keep, Replay};
    use crate::model::key::Key;
    use crate::model::time::Timestamp;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// One step of a generated history.
    #[derive(Debug, Clone)]
    enum Step {
        /// A version naming the key's heads (a write).
        Forward,
        /// A `resolve` naming every head (closing a fork), consuming a
        /// proposal when there is one.
        Resolve,
        /// A version naming an older version (another clone's fork).
        Fork,
        /// A version naming an id that is no event.
        Unknown,
        /// A first version of a key that may exist (a fork at the root).
        Root,
        /// A tombstone naming the heads.
        Forget,
        /// An earlier event again (logs merged by git hold copies).
        Duplicate,
        /// A proposal for the key.
        Propose,
        /// A consolidation consuming an earlier proposal.
        Consume,
        /// A note.
        Note,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => Just(Step::Forward),
            1 => Just(Step::Resolve),
            1 => Just(Step::Fork),
            1 => Just(Step::Unknown),
            1 => Just(Step::Root),
            1 => Just(Step::Forget),
            1 => Just(Step::Duplicate),
            1 => Just(Step::Propose),
            1 => Just(Step::Consume),
            1 => Just(Step::Note),
        ]
    }

    fn id(n: usize) -> String {
        format!("01M8KE9VDRYT8YR076RY{n:06}")
    }

    fn key(k: u8) -> Key {
        let name = ["project/a", "project/b", "user/c"][usize::from(k % 3)];
        Key::parse(name)
            .map(|(k, _)| k)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Builds the events of a history: `(step, key, pick, clock)` each.
    fn history(steps: &[(Step, u8, u8, i8)]) -> Vec<Event> {
        let mut events: Vec<Event> = Vec::new();
        let mut time = 1_000_000i64;
        for (n, (step, k, pick, clock)) in steps.iter().enumerate() {
            // Mostly forward in time; sometimes a clock behind.
            time += i64::from(*clock) * 1000;
            let key = key(*k);
            let heads = |events: &[Event]| -> Vec<String> {
                let replay = Replay::new(events.to_vec());
                replay
                    .memories
                    .get(&key)
                    .map(|v| v.heads.clone())
                    .unwrap_or_default()
            };
            let versions: Vec<&Event> = events
                .iter()
                .filter(|e| e.op.is_version() && e.key.as_ref() == Some(&key))
                .collect();
            let picked = |list: &[&Event]| {
                (!list.is_empty()).then(|| list[usize::from(*pick) % list.len()].id.clone())
            };
            let mut e = Event {
                id: id(n),
                op: Op::Remember,
                time: Timestamp(time),
                actor: "A <a@b>".into(),
                key: Some(key.clone()),
                prev: Vec::new(),
                reason: None,
                consumed: Vec::new(),
                redacted: None,
                body: format!("---\nname: v{n}\n---\nversion {}\n", n % 4),
            };
            match step {
                Step::Forward => e.prev = heads(&events),
                Step::Resolve => {
                    e.op = Op::Resolve;
                    e.prev = heads(&events);
                    let proposals: Vec<&Event> =
                        events.iter().filter(|x| x.op == Op::Propose).collect();
                    e.consumed = picked(&proposals).into_iter().collect();
                }
                Step::Fork => e.prev = picked(&versions).into_iter().collect(),
                Step::Unknown => e.prev = vec![id(10_000 + n)],
                Step::Root => {}
                Step::Forget => {
                    e.op = Op::Forget;
                    e.body = String::new();
                    e.prev = heads(&events);
                }
                // Not of a proposal: the incremental paths keep no record
                // of proposals consumed before the index was saved, so a
                // copy of one appended later reads as pending again until
                // the next full replay (a known limit: copies arise only
                // from a hand-merged log that repeats an entry).
                Step::Duplicate => {
                    if let Some(id) = picked(
                        &events
                            .iter()
                            .filter(|x| x.op != Op::Propose)
                            .collect::<Vec<_>>(),
                    ) {
                        if let Some(copy) = events.iter().find(|x| x.id == id).cloned() {
                            events.push(copy);
                        }
                        continue;
                    }
                }
                Step::Propose => e.op = Op::Propose,
                Step::Consume => {
                    let proposals: Vec<&Event> =
                        events.iter().filter(|x| x.op == Op::Propose).collect();
                    e.op = Op::Consolidate;
                    e.key = None;
                    e.body = String::new();
                    e.consumed = picked(&proposals).into_iter().collect();
                }
                Step::Note => {
                    e.op = Op::Note;
                    e.key = None;
                    e.body = format!("note {n}");
                }
            }
            events.push(e);
        }
        events
    }

    /// What every path must agree on: each memory's state and the pending
    /// proposals (as a set: the paths order them by log or by time).
    type Outcome = (BTreeMap<String, KeyState>, BTreeSet<String>);

    fn replayed(events: &[Event], keep: Keep) -> Outcome {
        let mut b = Builder::new(keep);
        events.iter().cloned().for_each(|e| b.add(e));
        let replay = b.finish();
        (
            replay.key_states(),
            replay.pending.iter().cloned().collect(),
        )
    }

    /// The index's refresh: batches applied by the transition, a full
    /// replay of everything so far when a batch is not a run of steps.
    fn refreshed(events: &[Event], cuts: &[usize]) -> Outcome {
        let mut cache = Cache::default();
        let mut from = 0;
        for &to in cuts.iter().chain(std::iter::once(&events.len())) {
            let to = to.clamp(from, events.len());
            let mut batch = events[from..to].to_vec();
            batch.sort_by_key(|e| e.time);
            if !apply_events(&mut cache, batch) {
                let replay = Replay::new(events[..to].to_vec());
                cache.keys = replay.key_states();
                cache.pending = replay.pending_events();
            }
            from = to;
        }
        let pending = cache.pending.iter().map(|e| e.id.clone()).collect();
        (cache.keys, pending)
    }

    /// A write's tail on top of an index saved after `saved` events.
    fn tailed(events: &[Event], saved: usize) -> Outcome {
        let saved = saved.min(events.len());
        let replay = Replay::new(events[..saved].to_vec());
        let cache = Cache {
            keys: replay.key_states(),
            pending: replay.pending_events(),
            ..Cache::default()
        };
        let Some(view) = OpenIndex::parse(encode(&cache, CACHE_VERSION), CACHE_VERSION) else {
            panic!("the index of a replay parses");
        };
        let mut tail = Tail {
            pending: view.head.pending.clone(),
            ..Tail::default()
        };
        if !events[saved..].iter().all(|e| tail.push(&view, e)) {
            return replayed(events, Keep::All);
        }
        let mut keys = replay.key_states();
        keys.extend(tail.keys);
        (keys, tail.pending.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn every_path_reaches_the_state_a_full_replay_gives(
            steps in prop::collection::vec((step(), 0u8..3, any::<u8>(), -2i8..6), 1..28),
            cuts in prop::collection::vec(0usize..30, 0..4),
            saved in 0usize..30,
        ) {
            let events = history(&steps);
            let full = replayed(&events, Keep::All);
            prop_assert_eq!(&replayed(&events, Keep::Views), &full, "Keep::Views");
            prop_assert_eq!(&replayed(&events, Keep::Prints), &full, "Keep::Prints");
            let mut cuts = cuts;
            cuts.sort_unstable();
            prop_assert_eq!(&refreshed(&events, &cuts), &full, "refresh at {:?}", cuts);
            prop_assert_eq!(&tailed(&events, saved), &full, "tail after {}", saved);
        }
    }

    #[test]
    fn a_step_names_every_head_and_a_first_version_none() {
        let state = advance(None, "a", [], Some(1));
        assert_eq!(
            state.as_ref().map(|s| s.heads.clone()),
            Some(vec!["a".to_string()])
        );
        assert!(
            advance(state.as_ref(), "b", [], Some(2)).is_none(),
            "a second root forks"
        );
        assert!(
            advance(state.as_ref(), "b", ["x"], Some(2)).is_none(),
            "unknown prev"
        );
        let b = advance(state.as_ref(), "b", ["a"], None);
        assert_eq!(
            b.as_ref().and_then(|s| s.view.clone()),
            None,
            "a tombstone shows nothing"
        );
        let conflict = KeyState {
            heads: vec!["a".into(), "b".into()],
            view: Some("a".into()),
            view_hash: Some(1),
            conflict: true,
        };
        assert!(advance(Some(&conflict), "c", ["a"], Some(3)).is_none());
        let resolved = advance(Some(&conflict), "c", ["b", "a"], Some(3));
        assert_eq!(
            resolved.map(|s| (s.heads, s.conflict)),
            Some((vec!["c".to_string()], false))
        );
    }
}
