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
