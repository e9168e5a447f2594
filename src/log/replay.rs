//! Replay: from the log events to the state of every memory.
//!
//! Causality comes from `prev` links alone. Each memory's versions form a
//! DAG; its heads (versions nothing replaces) decide what the memory is. One
//! head, or several with identical content, is the current version; heads
//! that differ are a conflict, and the view then shows their common ancestor.
//! Time and id only order what has no causal order.

use crate::log::transition::{advance, content_print, version_content, KeyState};
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The replayed state of one memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versions {
    /// Ids of the version events, oldest first by (time, id).
    pub all: Vec<String>,
    /// Ids of the heads, first by (time, id).
    pub heads: Vec<String>,
    /// The version the file shows: `None` when it is forgotten (no file).
    pub view: Option<String>,
    /// The heads differ: a human must decide.
    pub conflict: bool,
}

/// Everything the logs say.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every distinct event, by id.
    pub events: Events,
    /// Each memory ever written, by key.
    pub memories: BTreeMap<Key, Versions>,
    /// Ids of `propose` events no later event consumed, oldest first.
    pub pending: Vec<String>,
    /// Ids of `note` events, oldest first.
    pub notes: Vec<String>,
    /// Things a reader should know (unknown `prev`, duplicate ids).
    pub warnings: Vec<String>,
    /// Notes a [`Keep::Prints`] replay only counted (fingerprint by id).
    counted_notes: HashMap<IdKey, u64>,
    /// The first copy of each note a [`Keep::Prints`] replay counted, in
    /// reading order (recall searches notes: the index keeps them).
    counted_note_events: Vec<Event>,
}

/// An event id as a map key: ids are 26 ASCII characters ([`crate::model::event::is_id`];
/// every id read from a log is checked), so a key is its bytes, with no
/// allocation of its own.
type IdKey = [u8; 26];

fn id_key(id: &str) -> Option<IdKey> {
    id.as_bytes().try_into().ok()
}

/// Every distinct event of a replay, found by id.
///
/// A replay of a large store holds hundreds of thousands of events: each is
/// stored once, in place, and found through a table of fixed-size ids. A
/// [`Keep::Prints`] replay keeps each version only as what resolving needs
/// (`Lean`: ids as bytes, the key interned, the content's fingerprint),
/// about a fifth of an [`Event`] with its strings; such versions are
/// counted and resolved, but [`Events::get`] and [`Events::values`] give
/// only the events kept whole.
#[derive(Debug, Default)]
pub struct Events {
    whole: Vec<Slot>,
    lean: Vec<Lean>,
    /// Index into `whole`, or into `lean` with [`LEAN`] set.
    by_id: HashMap<IdKey, u32>,
    /// The keys of lean versions, interned.
    keys: Vec<Key>,
    /// Index into `keys` by [`key_print`] (a second copy of every key would
    /// cost as much as the interning saves).
    key_ids: HashMap<u64, u32>,
}

const LEAN: u32 = 1 << 31;

#[derive(Debug)]
struct Slot {
    event: Event,
    /// Fingerprint of the content whose text was let go (see [`Builder`]).
    shed: Option<u64>,
}

/// A version as a [`Keep::Prints`] replay keeps it.
#[derive(Debug)]
struct Lean {
    id: IdKey,
    time: crate::model::time::Timestamp,
    op: Op,
    key: Option<u32>,
    prev: Box<[IdKey]>,
    consumed: Box<[IdKey]>,
    /// Fingerprint of the content (`None`: a tombstone).
    print: Option<u64>,
    /// Fingerprint of everything else ([`meta_print`]), to tell a
    /// duplicate from a different event under the same id.
    meta: u64,
}

/// Event ids, as an event keeps them or as a lean version does.
#[derive(Debug, Clone, Copy)]
enum Ids<'a> {
    Strings(&'a [String]),
    Bytes(&'a [IdKey]),
}

impl<'a> Ids<'a> {
    fn iter(self) -> impl Iterator<Item = &'a str> {
        let (strings, bytes) = match self {
            Ids::Strings(s) => (s, &[][..]),
            Ids::Bytes(b) => (&[][..], b),
        };
        strings
            .iter()
            .map(String::as_str)
            .chain(bytes.iter().map(id_str))
    }
}

/// An id kept as bytes, as text: it was text when it was kept.
fn id_str(id: &IdKey) -> &str {
    std::str::from_utf8(id).unwrap_or_default()
}

/// What resolving reads of an event, however it is kept.
#[derive(Debug, Clone, Copy)]
struct Meta<'a> {
    id: &'a str,
    time: crate::model::time::Timestamp,
    op: Op,
    key: Option<&'a Key>,
    prev: Ids<'a>,
    consumed: Ids<'a>,
}

impl<'a> Meta<'a> {
    fn of(e: &'a Event) -> Meta<'a> {
        Meta {
            id: &e.id,
            time: e.time,
            op: e.op,
            key: e.key.as_ref(),
            prev: Ids::Strings(&e.prev),
            consumed: Ids::Strings(&e.consumed),
        }
    }
}

/// A fingerprint of a key.
fn key_print(k: &Key) -> u64 {
    use crate::model::fingerprint::fingerprint_extend as fold;
    fold(
        fold(
            crate::model::fingerprint::fingerprint(k.scope.as_bytes()),
            b"/",
        ),
        k.slug.as_bytes(),
    )
}

/// A fingerprint of an event but for its body.
fn meta_print(e: &Event) -> u64 {
    use crate::model::fingerprint::fingerprint_extend as fold;
    let mut h = crate::model::fingerprint::fingerprint(e.id.as_bytes());
    for part in [e.op.as_str(), &e.actor, e.reason.as_deref().unwrap_or("\0")]
        .into_iter()
        .chain(e.redacted.as_deref())
    {
        h = fold(fold(h, part.as_bytes()), b"\n");
    }
    h = fold(h, &e.time.0.to_le_bytes());
    h = fold(h, &e.key.as_ref().map_or(0, key_print).to_le_bytes());
    for id in &e.prev {
        h = fold(h, id.as_bytes());
    }
    h = fold(h, b"|");
    for id in &e.consumed {
        h = fold(h, id.as_bytes());
    }
    h
}

impl Events {
    /// The event with this id, if it is kept whole.
    pub fn get(&self, id: &str) -> Option<&Event> {
        self.slot(id).map(|s| &s.event)
    }

    /// Is there an event with this id?
    pub fn contains_key(&self, id: &str) -> bool {
        id_key(id).is_some_and(|k| self.by_id.contains_key(&k))
    }

    /// Every event kept whole, in the order first added.
    pub fn values(&self) -> impl Iterator<Item = &Event> {
        self.whole.iter().map(|s| &s.event)
    }

    /// How many events (lean versions included).
    pub fn len(&self) -> usize {
        self.whole.len() + self.lean.len()
    }

    /// No events at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fingerprint of a version's content whose text was let go.
    pub fn shed_print(&self, id: &str) -> Option<u64> {
        match self.find(id)? {
            i if i & LEAN != 0 => self.lean.get((i & !LEAN) as usize)?.print,
            i => self.whole.get(i as usize)?.shed,
        }
    }

    fn find(&self, id: &str) -> Option<u32> {
        self.by_id.get(&id_key(id)?).copied()
    }

    fn slot(&self, id: &str) -> Option<&Slot> {
        self.find(id)
            .filter(|i| i & LEAN == 0)
            .and_then(|i| self.whole.get(i as usize))
    }

    fn slot_mut(&mut self, id: &str) -> Option<&mut Slot> {
        self.find(id)
            .filter(|i| i & LEAN == 0)
            .and_then(|i| self.whole.get_mut(i as usize))
    }

    fn lean(&self, id: &str) -> Option<&Lean> {
        self.find(id)
            .filter(|i| i & LEAN != 0)
            .and_then(|i| self.lean.get((i & !LEAN) as usize))
    }

    /// Every event, as resolving reads it.
    fn metas(&self) -> impl Iterator<Item = Meta<'_>> {
        self.values()
            .map(Meta::of)
            .chain(self.lean.iter().map(|l| Meta {
                id: id_str(&l.id),
                time: l.time,
                op: l.op,
                key: l.key.and_then(|k| self.keys.get(k as usize)),
                prev: Ids::Bytes(&l.prev),
                consumed: Ids::Bytes(&l.consumed),
            }))
    }

    /// Adds an event whose id is not here yet; false for an id that is no
    /// event id (none read from a log is).
    fn insert(&mut self, event: Event) -> bool {
        let (Some(key), Ok(i)) = (id_key(&event.id), u32::try_from(self.whole.len())) else {
            return false;
        };
        if i >= LEAN {
            return false;
        }
        self.by_id.insert(key, i);
        self.whole.push(Slot { event, shed: None });
        true
    }

    /// Adds a version whose id is not here yet as only what resolving needs.
    fn insert_lean(&mut self, e: &Event) -> bool {
        let ids =
            |list: &[String]| -> Option<Box<[IdKey]>> { list.iter().map(|p| id_key(p)).collect() };
        let (Some(id), Ok(i), Some(prev), Some(consumed)) = (
            id_key(&e.id),
            u32::try_from(self.lean.len()),
            ids(&e.prev),
            ids(&e.consumed),
        ) else {
            return false;
        };
        if i >= LEAN {
            return false;
        }
        let key = e.key.as_ref().map(|k| {
            let print = key_print(k);
            match self.key_ids.get(&print) {
                Some(n) if self.keys.get(*n as usize) == Some(k) => *n,
                // A key new here, or one whose fingerprint another key has
                // (then kept apart, uninterned).
                found => {
                    let n = self.keys.len() as u32;
                    self.keys.push(k.clone());
                    if found.is_none() {
                        self.key_ids.insert(print, n);
                    }
                    n
                }
            }
        });
        self.by_id.insert(id, i | LEAN);
        self.lean.push(Lean {
            id,
            time: e.time,
            op: e.op,
            key,
            prev,
            consumed,
            print: content_print(e),
            meta: meta_print(e),
        });
        true
    }
}

/// Gathers events for a replay, a log at a time.
///
/// With [`Keep::Views`], the builder lets go of the text of every version as soon as another
/// version of the same memory names it as `prev` (keeping its fingerprint):
/// such a version is no head, and is what a file shows only if it is the
/// common ancestor of a conflict. So memory is bounded by the memories, not
/// by the logs' length. Which versions are replaced, and so every memory's
/// heads and view, does not depend on the text; the few views whose text
/// was let go are listed by [`Replay::missing_views`] and put back with
/// [`Replay::restore`] from a second read of the logs.
#[derive(Debug, Default)]
pub struct Builder {
    keep: Keep,
    r: Replay,
    /// `prev` links to events not seen yet, with the naming event's key.
    ahead: HashMap<String, Vec<Key>>,
}

/// Which versions' text a replay keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Keep {
    /// Every version's (history needs old versions).
    #[default]
    All,
    /// What can be a view: versions no other version of the memory replaces.
    Views,
    /// None: only fingerprints (enough to compare files with the views);
    /// versions are kept only as what resolving needs (see [`Events`]),
    /// notes are counted, not kept.
    Prints,
}

impl Builder {
    /// A builder keeping the text of `keep`.
    pub fn new(keep: Keep) -> Builder {
        Builder {
            keep,
            ..Builder::default()
        }
    }

    fn shed(&mut self, id: &str) {
        let Some(slot) = self.r.events.slot_mut(id) else {
            return;
        };
        if slot.shed.is_some() {
            return;
        }
        if let Some(print) = content_print(&slot.event) {
            slot.shed = Some(print);
            slot.event.body = String::new();
        }
    }

    /// Adds one event (duplicates are applied once).
    pub fn add(&mut self, e: Event) {
        if self.keep == Keep::Prints && e.op == Op::Note {
            // Notes change no memory: a fingerprint tells duplicates apart.
            let print = crate::model::fingerprint::fingerprint(e.render().as_bytes());
            let Some(id) = id_key(&e.id) else {
                return self.invalid_id(&e.id);
            };
            match self.r.counted_notes.get(&id) {
                Some(p) => {
                    let same = *p == print;
                    self.copy_seen(&e.id, same);
                }
                None => {
                    self.r.counted_notes.insert(id, print);
                    self.r.counted_note_events.push(e);
                }
            }
            return;
        }
        // A copy of an event already here (logs merged by git hold some)
        // is applied once; one that differs is named.
        let same = if let Some(seen) = self.r.events.lean(&e.id) {
            Some(seen.print == content_print(&e) && seen.meta == meta_print(&e))
        } else {
            self.r.events.slot(&e.id).map(|seen| match seen.shed {
                Some(print) => {
                    content_print(&e) == Some(print)
                        && Event {
                            body: String::new(),
                            ..e.clone()
                        } == seen.event
                }
                None => seen.event == e,
            })
        };
        if let Some(same) = same {
            return self.copy_seen(&e.id, same);
        }
        let id = e.id.clone();
        let key = e.key.clone();
        let lean = self.keep == Keep::Views && e.op.is_version();
        let prev = if lean { e.prev.clone() } else { Vec::new() };
        if self.keep == Keep::Prints && e.op.is_version() {
            if !self.r.events.insert_lean(&e) {
                self.invalid_id(&id);
            }
            return;
        }
        if !self.r.events.insert(e) {
            return self.invalid_id(&id);
        }
        if !lean {
            return;
        }
        // Named before it was seen, by a version of its own memory?
        if let Some(namers) = self.ahead.remove(&id) {
            if namers.iter().any(|k| Some(k) == key.as_ref()) {
                self.shed(&id);
            }
        }
        for p in prev {
            match self.r.events.get(&p).map(|pe| pe.key == key) {
                Some(true) => self.shed(&p),
                Some(false) => {}
                None => self.ahead.entry(p).or_default().extend(key.clone()),
            }
        }
    }

    fn invalid_id(&mut self, id: &str) {
        self.r.warnings.push(format!(
            "event `{id}`: its id, or an id it names, is no event id; the event is ignored"
        ));
    }

    fn copy_seen(&mut self, id: &str, same: bool) {
        if !same {
            self.r.warnings.push(format!(
                "event {id} appears twice with different content; the first copy is used"
            ));
        }
    }

    /// The replay (see [`Replay::missing_views`]).
    pub fn finish(self) -> Replay {
        self.r.resolve()
    }
}

impl Replay {
    /// Replays events gathered from every log, in any order, duplicates included.
    pub fn new(events: impl IntoIterator<Item = Event>) -> Replay {
        let mut b = Builder::new(Keep::All);
        for e in events {
            b.add(e);
        }
        b.r.resolve()
    }

    /// Every distinct note, oldest first (equal times: by id), whatever
    /// the replay kept.
    pub fn note_events(&self) -> Vec<Event> {
        let mut notes: Vec<Event> = if self.counted_note_events.is_empty() {
            self.notes
                .iter()
                .filter_map(|id| self.events.get(id).cloned())
                .collect()
        } else {
            self.counted_note_events.clone()
        };
        notes.sort_by(oldest_note_first);
        notes
    }

    /// [`Replay::note_events`], moved out of a replay no longer needed
    /// (years of notes, not copied).
    pub fn into_note_events(mut self) -> Vec<Event> {
        if self.counted_note_events.is_empty() {
            return self.note_events();
        }
        let mut notes = std::mem::take(&mut self.counted_note_events);
        notes.sort_by(oldest_note_first);
        notes
    }

    /// Works out every memory's versions from the gathered events.
    fn resolve(self) -> Replay {
        let mut r = self;
        let mut order: Vec<Meta<'_>> = r.events.metas().collect();
        order.sort_by(|a, b| (a.time, a.id).cmp(&(b.time, b.id)));

        let mut by_key: BTreeMap<&Key, Vec<Meta<'_>>> = BTreeMap::new();
        let mut consumed: HashSet<&str> = HashSet::new();
        for e in &order {
            consumed.extend(e.consumed.iter());
            match e.op {
                Op::Note => r.notes.push(e.id.to_string()),
                op if op.is_version() => {
                    if let Some(k) = e.key {
                        by_key.entry(k).or_default().push(*e);
                    }
                }
                _ => {}
            }
        }
        for e in &order {
            if e.op == Op::Propose && !consumed.contains(e.id) {
                r.pending.push(e.id.to_string());
            }
        }
        let mut warnings = Vec::new();
        for (key, versions) in by_key {
            let v = resolve_key(key, &versions, &r.events, &mut warnings);
            r.memories.insert(key.clone(), v);
        }
        r.warnings.extend(warnings);
        r
    }

    /// The content the memory's file should have, if it should exist.
    pub fn view(&self, key: &Key) -> Option<&str> {
        let id = self.memories.get(key)?.view.as_ref()?;
        version_content(self.events.get(id)?)
    }

    /// Distinct events replayed (counted notes included).
    pub fn event_count(&self) -> usize {
        self.events.len() + self.counted_notes.len()
    }

    /// Each memory's state as the persistent index keeps it, by key
    /// (`scope/slug`).
    pub fn key_states(&self) -> BTreeMap<String, KeyState> {
        self.memories
            .iter()
            .map(|(k, v)| {
                let state = KeyState {
                    heads: v.heads.clone(),
                    view: v.view.clone(),
                    view_hash: self.view_print(k),
                    conflict: v.conflict,
                };
                (k.to_string(), state)
            })
            .collect()
    }

    /// The fingerprint of the content the memory's file should have, if it
    /// should exist (known even where the text was let go).
    pub fn view_print(&self, key: &Key) -> Option<u64> {
        let id = self.memories.get(key)?.view.as_ref()?;
        print_of(&self.events, id)
    }

    /// The pending proposals, whole, oldest first.
    pub fn pending_events(&self) -> Vec<Event> {
        self.pending
            .iter()
            .filter_map(|id| self.events.get(id).cloned())
            .collect()
    }

    /// Every memory that should have a file, with that file's content.
    pub fn views(&self) -> impl Iterator<Item = (&Key, &str)> {
        self.memories
            .keys()
            .filter_map(|k| Some((k, self.view(k)?)))
    }

    /// Views whose text a lean replay let go (the common ancestors of
    /// conflicts): put them back with [`Replay::restore`].
    pub fn missing_views(&self) -> HashSet<String> {
        self.memories
            .values()
            .filter_map(|v| v.view.as_ref())
            .filter(|id| self.events.shed_print(id).is_some())
            .cloned()
            .collect()
    }

    /// Puts back the text of a version a lean replay let go.
    pub fn restore(&mut self, e: Event) {
        if let Some(slot) = self.events.slot_mut(&e.id) {
            if slot.shed.take().is_some() {
                slot.event.body = e.body;
            }
        }
    }

    /// Has any version of `key` had exactly this content?
    pub fn has_content(&self, key: &Key, content: &str) -> bool {
        self.has_version(
            key,
            crate::model::fingerprint::fingerprint(content.as_bytes()),
        )
    }

    /// Has any version of `key` had content with this fingerprint?
    pub fn has_version(&self, key: &Key, print: u64) -> bool {
        self.memories.get(key).is_some_and(|v| {
            v.all
                .iter()
                .any(|id| print_of(&self.events, id) == Some(print))
        })
    }
}

/// The fingerprint of a version's content, known even where the text was
/// let go; `None` for a tombstone or an unknown id.
fn print_of(events: &Events, id: &str) -> Option<u64> {
    if let Some(lean) = events.lean(id) {
        return lean.print;
    }
    let slot = events.slot(id)?;
    slot.shed.or_else(|| content_print(&slot.event))
}

/// A memory's state when each of its versions, in (time, id) order, moves
/// it forward from the one before ([`advance`]): the common case, which
/// needs no DAG. `None` for anything else (a fork, a `prev` outside the
/// memory, a cycle), which [`resolve_key`] works out from the DAG.
fn chain(versions: &[Meta<'_>], events: &Events) -> Option<KeyState> {
    let mut state = None;
    for v in versions {
        state = Some(advance(
            state.as_ref(),
            v.id,
            v.prev.iter(),
            print_of(events, v.id),
        )?);
    }
    state
}

/// Notes oldest first; of one time, by id.
fn oldest_note_first(a: &Event, b: &Event) -> std::cmp::Ordering {
    (a.time, &a.id).cmp(&(b.time, &b.id))
}

/// A memory's versions, heads and view, from its version DAG.
fn resolve_key<'a>(
    key: &Key,
    versions: &[Meta<'a>],
    events: &Events,
    warnings: &mut Vec<String>,
) -> Versions {
    let all = || versions.iter().map(|e| e.id.to_string()).collect();
    if let Some(state) = chain(versions, events) {
        return Versions {
            all: all(),
            heads: state.heads,
            view: state.view,
            conflict: false,
        };
    }
    let mine: HashSet<&str> = versions.iter().map(|e| e.id).collect();
    // prev links within this memory's DAG; an unknown prev makes a root.
    let mut parents: HashMap<&'a str, Vec<&'a str>> = HashMap::new();
    let mut replaced: HashSet<&str> = HashSet::new();
    for e in versions {
        let mut ps = Vec::new();
        for p in e.prev.iter() {
            if mine.contains(p) {
                ps.push(p);
                replaced.insert(p);
            } else if !events.contains_key(p) {
                warnings.push(format!(
                    "{key}: event {} replaces unknown event {p}; treated as a first version",
                    e.id
                ));
            }
        }
        parents.insert(e.id, ps);
    }
    let mut heads: Vec<&str> = versions
        .iter()
        .map(|e| e.id)
        .filter(|id| !replaced.contains(id))
        .collect();
    if heads.is_empty() {
        // Only a cycle of prev links (hostile input) gets here.
        warnings.push(format!("{key}: its versions replace each other in a cycle"));
        heads.extend(versions.last().map(|e| e.id));
    }
    // Compared by fingerprint: a replay may have let go of the text.
    let print = |id: &str| print_of(events, id);
    let first = heads[0];
    let agree = heads.iter().all(|h| print(h) == print(first));
    let view = if agree {
        // Identical heads are one version; show the newest of them.
        heads.last().copied()
    } else {
        common_ancestor(&heads, &parents, versions).or(Some(first))
    };
    Versions {
        all: all(),
        heads: heads.iter().map(|s| s.to_string()).collect(),
        view: view.filter(|id| print(id).is_some()).map(str::to_string),
        conflict: !agree,
    }
}

fn ancestors<'a>(id: &'a str, parents: &HashMap<&'a str, Vec<&'a str>>) -> HashSet<&'a str> {
    let mut seen = HashSet::new();
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            stack.extend(parents.get(n).into_iter().flatten().copied());
        }
    }
    seen
}

/// The newest version every head descends from (a lowest common ancestor),
/// first by (time, id) if there are several.
fn common_ancestor<'a>(
    heads: &[&'a str],
    parents: &HashMap<&'a str, Vec<&'a str>>,
    versions: &[Meta<'a>],
) -> Option<&'a str> {
    let mut common = ancestors(heads[0], parents);
    for h in &heads[1..] {
        let a = ancestors(h, parents);
        common.retain(|x| a.contains(x));
    }
    // Drop every common ancestor that is a proper ancestor of another one.
    let mut lowest = common.clone();
    for c in &common {
        for a in ancestors(c, parents) {
            if a != *c {
                lowest.remove(a);
            }
        }
    }
    versions.iter().map(|e| e.id).find(|id| lowest.contains(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::Timestamp;

    fn ev(id: char, op: Op, t: i64, prev: &[char], body: &str) -> Event {
        let id_of = |c: char| format!("01M8KE9VDRYT8YR076RY78CYN{c}");
        Event {
            id: id_of(id),
            op,
            time: Timestamp(t),
            actor: "A <a@b>".into(),
            key: Some(Key::parse("project/x").unwrap().0),
            prev: prev.iter().map(|c| id_of(*c)).collect(),
            reason: None,
            consumed: vec![],
            redacted: None,
            body: body.into(),
        }
    }

    fn key() -> Key {
        Key::parse("project/x").unwrap().0
    }

    #[test]
    fn a_chain_ends_at_its_last_link_whatever_the_clock() {
        for times in [[5, 5, 5], [9, 3, 1]] {
            let r = Replay::new(vec![
                ev('C', Op::Remember, times[2], &['B'], "c"),
                ev('A', Op::Remember, times[0], &[], "a"),
                ev('B', Op::Remember, times[1], &['A'], "b"),
            ]);
            assert_eq!(r.view(&key()), Some("c"));
            assert!(!r.memories[&key()].conflict);
        }
    }

    #[test]
    fn a_fork_is_a_conflict_showing_the_common_ancestor() {
        let r = Replay::new(vec![
            ev('A', Op::Remember, 1, &[], "a"),
            ev('B', Op::Remember, 2, &['A'], "b"),
            ev('C', Op::Remember, 3, &['A'], "c"),
        ]);
        let v = &r.memories[&key()];
        assert!(v.conflict);
        assert_eq!(v.heads.len(), 2);
        assert_eq!(r.view(&key()), Some("a"));
        // A resolve joining the heads ends it.
        let r = Replay::new(vec![
            ev('A', Op::Remember, 1, &[], "a"),
            ev('B', Op::Remember, 2, &['A'], "b"),
            ev('C', Op::Remember, 3, &['A'], "c"),
            ev('D', Op::Resolve, 0, &['B', 'C'], "d"),
        ]);
        assert!(!r.memories[&key()].conflict);
        assert_eq!(r.view(&key()), Some("d"));
    }

    #[test]
    fn identical_heads_agree_and_duplicates_apply_once() {
        let r = Replay::new(vec![
            ev('A', Op::Remember, 1, &[], "a"),
            ev('B', Op::Remember, 2, &['A'], "same"),
            ev('C', Op::Remember, 3, &['A'], "same"),
            ev('C', Op::Remember, 3, &['A'], "same"),
        ]);
        assert!(!r.memories[&key()].conflict);
        assert_eq!(r.view(&key()), Some("same"));
        assert_eq!(r.memories[&key()].all.len(), 3);
    }

    #[test]
    fn two_roots_without_ancestor_show_the_first_head() {
        let r = Replay::new(vec![
            ev('B', Op::Remember, 2, &[], "b"),
            ev('A', Op::Remember, 1, &[], "a"),
        ]);
        assert!(r.memories[&key()].conflict);
        assert_eq!(r.view(&key()), Some("a"));
    }

    #[test]
    fn forget_is_a_tombstone_and_unknown_prev_a_root() {
        let r = Replay::new(vec![
            ev('A', Op::Remember, 1, &[], "a"),
            ev('B', Op::Forget, 2, &['A'], ""),
        ]);
        assert_eq!(r.view(&key()), None);
        let r = Replay::new(vec![ev('B', Op::Remember, 2, &['Z'], "b")]);
        assert_eq!(r.view(&key()), Some("b"));
        assert_eq!(r.warnings.len(), 1);
    }

    fn lean_replay(events: &[Event]) -> Replay {
        let mut b = Builder::new(Keep::Views);
        events.iter().cloned().for_each(|e| b.add(e));
        b.finish()
    }

    #[test]
    fn a_lean_replay_lets_go_of_replaced_text_and_agrees_with_a_full_one() {
        // A chain, a fork at B, a duplicate, and links that arrive before
        // the events they name (another writer's log read first).
        let events = vec![
            ev('D', Op::Remember, 4, &['C'], "d"),
            ev('A', Op::Remember, 1, &[], "a"),
            ev('B', Op::Remember, 2, &['A'], "b"),
            ev('C', Op::Remember, 3, &['B'], "c"),
            ev('E', Op::Remember, 5, &['B'], "e"),
            ev('A', Op::Remember, 1, &[], "a"),
        ];
        let full = Replay::new(events.clone());
        let mut lean = lean_replay(&events);
        assert_eq!(lean.memories, full.memories);
        let id = |c: char| ev(c, Op::Note, 0, &[], "").id;
        for replaced in ['A', 'B', 'C'] {
            assert!(
                lean.events.shed_print(&id(replaced)).is_some(),
                "{replaced}"
            );
        }
        let key = Key::parse("project/x").unwrap().0;
        for old in ["a", "b", "c", "d", "e"] {
            assert!(lean.has_content(&key, old), "{old}");
        }
        assert!(!lean.has_content(&key, "z"));
        assert!(lean.warnings.is_empty(), "{:?}", lean.warnings);
        // The conflict's view is the fork point, whose text was let go:
        // a second read of the logs puts it back.
        assert_eq!(lean.missing_views(), HashSet::from([id('B')]));
        for e in events.clone() {
            if lean.missing_views().contains(&e.id) {
                lean.restore(e);
            }
        }
        assert_eq!(lean.view(&key), Some("b"));
        assert_eq!(lean.view(&key), full.view(&key));
        assert!(lean.missing_views().is_empty());

        // Keeping fingerprints only gives the same versions, conflict and view.
        let mut b = Builder::new(Keep::Prints);
        events.iter().cloned().for_each(|e| b.add(e));
        let prints = b.finish();
        assert_eq!(prints.memories, full.memories);
        assert!(prints.memories[&key].conflict);
        assert_eq!(
            prints.view_print(&key),
            Some(crate::model::fingerprint::fingerprint(b"b"))
        );
        assert!(prints.has_content(&key, "e") && !prints.has_content(&key, "z"));
    }

    #[test]
    fn a_prints_replay_tells_a_copy_from_another_event_under_the_same_id() {
        let prints = |events: Vec<Event>| {
            let mut b = Builder::new(Keep::Prints);
            events.into_iter().for_each(|e| b.add(e));
            b.finish()
        };
        let a = ev('A', Op::Remember, 1, &[], "a");
        let r = prints(vec![a.clone(), a.clone()]);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!(r.event_count(), 1);
        for other in [
            Event {
                body: "b".into(),
                ..a.clone()
            },
            Event {
                actor: "B <b@c>".into(),
                ..a.clone()
            },
            Event {
                prev: vec![ev('Z', Op::Note, 0, &[], "").id],
                ..a.clone()
            },
        ] {
            let r = prints(vec![a.clone(), other]);
            assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
            assert_eq!(
                r.view_print(&key()),
                Some(crate::model::fingerprint::fingerprint(b"a"))
            );
        }
        // An id that is no event id (none read from a log has one) is
        // dropped with a warning, whether the event's own or one it names.
        for bad in [
            Event {
                id: "bogus".into(),
                ..a.clone()
            },
            Event {
                prev: vec!["bogus".into()],
                ..a.clone()
            },
        ] {
            let r = prints(vec![bad]);
            assert_eq!(r.event_count(), 0);
            assert!(r.warnings[0].contains("is no event id"), "{:?}", r.warnings);
        }
        // Versions are resolved, not kept whole; the count includes them.
        let r = prints(vec![a.clone(), ev('B', Op::Remember, 2, &['A'], "b")]);
        assert!(r.events.get(&a.id).is_none() && r.events.contains_key(&a.id));
        assert_eq!(r.events.len(), 2);
        assert_eq!(
            r.memories[&key()].heads,
            vec![ev('B', Op::Note, 0, &[], "").id]
        );
    }

    #[test]
    fn a_prev_cycle_does_not_hang() {
        let r = Replay::new(vec![
            ev('A', Op::Remember, 1, &['B'], "a"),
            ev('B', Op::Remember, 2, &['A'], "b"),
        ]);
        assert!(r.view(&key()).is_some());
        assert!(!r.warnings.is_empty());
    }
}
