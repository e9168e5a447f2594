//! The write commands: `note`, `remember`, `forget`.
//!
//! Each checks the write policy before taking the lock, so a refused write
//! leaves no trace; then, under the lock, reads only what it needs of the
//! persistent index (see `index::Index::for_write`) and the files it touches
//! (never the whole store), appends its events to the log, replaces the
//! view files, and regenerates MEMORY.md from the index's records.

use crate::change::batch::apply_to;
use crate::change::event::event;
use crate::index::{Index, Snapshot};
use crate::log::transition::KeyState;
use crate::model::event::{Event, Op};
use crate::model::fingerprint::fingerprint;
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::model::remember::says_the_same;
use crate::model::remember::{Collision, Remember, REVIEW};
use crate::model::text;
use crate::model::time::Timestamp;
use crate::policy;
use crate::store::{Ctx, Store, StoreError};

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
    note_from(store, ctx, text, None)
}

/// A note with where it came from (`imported from OpenClaw
/// memory/2026-11-27.md:3`) in its event's `reason`, not in its text: a
/// recall shows what the note says. The source passes the policy too.
pub fn note_from(
    store: &Store,
    ctx: &Ctx,
    text: &str,
    source: Option<&str>,
) -> Result<String, StoreError> {
    policy::free_text::check_note(text)?;
    if let Some(source) = source {
        policy::check_secrets(source, "note source")?;
    }
    let mut event = event(ctx, Op::Note, None, Vec::new(), text.to_string())?;
    event.reason = source.map(str::to_string);
    let _lock = store.lock()?;
    crate::log::files::append(store, std::slice::from_ref(&event))?;
    Ok(event.id)
}

/// The event that forgets `key` (at `heads`), saying why.
fn forget_event(
    ctx: &Ctx,
    key: &Key,
    heads: Vec<String>,
    reason: String,
) -> Result<Event, StoreError> {
    let mut e = event(ctx, Op::Forget, Some(key.clone()), heads, String::new())?;
    e.reason = Some(reason);
    Ok(e)
}

/// Does the key hold a memory now (a file, or an open conflict)?
fn holds_memory(state: &KeyState) -> bool {
    state.view.is_some() || state.conflict
}

/// The current content of a memory, which its file must hold as the logs
/// say (else a hand edit is pending: refuse). The file is always read: an
/// index entry could be older than a hand edit. A file memoir itself wrote
/// that the logs have moved past (a writer killed between its log entry
/// and its view: `check`'s drift:stale) is no one's edit: the logs'
/// content is the memory's, and the write in hand replaces the file; so
/// is a file memoir never finished writing (drift:missing).
fn current_content(
    store: &Store,
    snap: &Snapshot,
    state: Option<&KeyState>,
    key: &Key,
) -> Result<Current, StoreError> {
    let rel = key.rel_path();
    store.check_dirs(&rel)?;
    let expected = state.and_then(|s| s.view_hash);
    let content = match expected {
        Some(_) => store.read_memory_file(&rel)?,
        None if store.path(&rel).symlink_metadata().is_ok() => store.read_memory_file(&rel)?,
        None => None,
    };
    let found = content.as_deref().map(|c| fingerprint(c.as_bytes()));
    if expected == found {
        return Ok(Current {
            content,
            stale: false,
        });
    }
    // memoir's own leftover, not anyone's edit: the file is what memoir
    // last wrote (a stale view), or it is missing and memoir never wrote
    // the version the logs hold (killed between its log entry and its
    // view: `check`'s drift:missing). Only a file memoir wrote as the
    // logs say and that is gone was deleted by hand.
    let journal = store.state.journal().get(&rel).copied();
    let memoir_wrote = journal == Some(found) || (found.is_none() && journal != Some(expected));
    let logged = snap
        .tail
        .views
        .get(&rel)
        .filter(|view| view.as_deref().map(|c| fingerprint(c.as_bytes())) == expected);
    match (memoir_wrote, logged) {
        (true, Some(view)) => Ok(Current {
            content: view.clone(),
            stale: true,
        }),
        (true, None) => Err(StoreError::Decision(format!(
            "{rel} is a version memoir wrote before a later one was logged (a write was interrupted): \
             run `memoir rebuild` to bring it up to date"
        ))),
        (false, _) => Err(StoreError::Decision(format!(
            "{rel} differs from its last recorded version: run `memoir record` to keep the edit, or `memoir rebuild --force` to restore it"
        ))),
    }
}

/// A memory's content as the logs say it is, and whether its file was a
/// stale view of memoir's own (the write in hand brings it up to date).
struct Current {
    content: Option<String>,
    stale: bool,
}

/// Creates or replaces a memory, or keeps it as a proposal.
pub fn remember(store: &Store, ctx: &Ctx, req: &Remember) -> Result<RememberOutcome, StoreError> {
    let mut memory = req.memory(ctx.now);
    check_remember(store, req, &memory)?;

    let _lock = store.lock()?;
    let mut snap = Index::for_write(store)?;
    let state = snap.key(&req.key);
    let heads = state.as_ref().map(|s| s.heads.clone()).unwrap_or_default();
    if let Some(moved) = moved(req, &heads) {
        return Ok(moved);
    }
    let existing = Existing::read(store, &snap, state.as_ref(), &req.key, heads)?;
    if existing.stale {
        // memoir's own view left behind by a crash: brought up to what
        // the logs say first, whatever this write then decides (the same
        // content, a proposal, a new version).
        let rel = req.key.rel_path();
        // What the logs say: a version, or no file (a forget memoir never
        // finished removing).
        let wrote = match existing.content.as_deref() {
            Some(content) => {
                store.write_view(&rel, content)?;
                Some(fingerprint(content.as_bytes()))
            }
            None => {
                store.remove_view(&rel)?;
                None
            }
        };
        let _ = store.state.journal_append(&[(rel, wrote)]);
        let block = snap.memory_md_block(store.config.index_budget);
        crate::change::memory_md::write(store, &block.text)?;
    }
    if let Some(old) = existing
        .content
        .as_deref()
        .and_then(|c| Memory::parse(c).ok())
    {
        // A new version keeps when the memory was first written.
        memory.created = old.created.or(Some(ctx.now));
        if says_the_same(&old, req) {
            return Ok(RememberOutcome::Unchanged {
                key: req.key.clone(),
            });
        }
    }
    let mut draft = Draft {
        key: req.key.clone(),
        content: memory.render(),
        memory,
        prev: existing.heads.clone(),
    };
    if let Some(proposed) = settle_same_key(store, ctx, &snap, req, &existing, &mut draft)? {
        return Ok(proposed);
    }
    let replaced = req.collision == Collision::Replace && existing.collides();
    // Replacing what is at its key, or keeping both, is a decision made:
    // near-duplicates elsewhere are let be.
    let superseded = if replaced || req.collision == Collision::KeepBoth {
        None
    } else {
        match settle_near_duplicate(store, ctx, &snap, req, &draft)? {
            Beside::Proposed(proposed) => return Ok(proposed),
            Beside::Superseded(other, forget) => Some((other, forget)),
            Beside::Nothing => None,
        }
    };
    write_draft(store, ctx, &mut snap, draft, replaced, superseded)
}

/// The write policy for `remember`, checked before the lock is taken so
/// that a refused write leaves no trace.
fn check_remember(store: &Store, req: &Remember, memory: &Memory) -> Result<(), StoreError> {
    // The name as given: its slug (in the key and the path) lowercases a
    // token, whose checksum gives its case back, and hides it from rules
    // that need its own form.
    if let Some(f) = policy::secrets::find_in_name(&req.name) {
        return Err(policy::refused(
            &format!("secret:{}", f.rule),
            "name",
            None,
            "the memory's name holds a secret (value not shown); a name is in the memory's key \
             and file path",
        ));
    }
    policy::memory::check_tags(&req.tags)?;
    let rel = req.key.rel_path();
    let content = memory.render();
    policy::memory::check_size(&content, &rel)?;
    policy::memory::check_memory(&store.config, memory, &content, &rel)
}

/// `--expect` lost: the key's heads are not the one version the caller
/// expected (`None`: no `--expect`, or it holds).
fn moved(req: &Remember, heads: &[String]) -> Option<RememberOutcome> {
    let expected = req.expect.as_ref()?;
    (heads != std::slice::from_ref(expected)).then(|| RememberOutcome::Moved {
        key: req.key.clone(),
        expected: expected.clone(),
        heads: heads.to_vec(),
    })
}

/// A memory with its timestamps cleared: two versions that differ only in
/// them say the same.
/// What [`remember`] would do with a request, found without the lock and
/// without writing: the policy's refusal as an error, else this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preview {
    /// No memory at the key: it would be written.
    New,
    /// The memory says exactly this already.
    Unchanged,
    /// The memory says something else: it would be a proposal.
    Changed,
}

/// Previews `remember` (for `--dry-run`): the write policy's checks, then
/// the memory at the key compared, times aside.
pub fn preview(store: &Store, ctx: &Ctx, req: &Remember) -> Result<Preview, StoreError> {
    let memory = req.memory(ctx.now);
    check_remember(store, req, &memory)?;
    let current = store.read_memory_file(&req.key.rel_path())?;
    Ok(
        match current.as_deref().and_then(|c| Memory::parse(c).ok()) {
            None => Preview::New,
            Some(old) if says_the_same(&old, req) => Preview::Unchanged,
            Some(_) => Preview::Changed,
        },
    )
}

/// What is at the key `remember` writes, read under the lock.
struct Existing {
    /// The key's heads (none: never written, or forgotten for good).
    heads: Vec<String>,
    /// The key has an open conflict (its file is then not read).
    conflict: bool,
    /// The file's content, checked against the log.
    content: Option<String>,
    /// The file was a stale view of memoir's own (`content` is the logs').
    stale: bool,
}

impl Existing {
    fn read(
        store: &Store,
        snap: &Snapshot,
        state: Option<&KeyState>,
        key: &Key,
        heads: Vec<String>,
    ) -> Result<Existing, StoreError> {
        let conflict = state.is_some_and(|s| s.conflict);
        let current = if conflict {
            Current {
                content: None,
                stale: false,
            }
        } else {
            current_content(store, snap, state, key)?
        };
        Ok(Existing {
            heads,
            conflict,
            content: current.content,
            stale: current.stale,
        })
    }

    /// Does a new memory at this key collide with what is there?
    fn collides(&self) -> bool {
        self.content.is_some() || self.conflict
    }
}

/// The memory `remember` is about to write: where, as rendered, and the
/// versions it follows.
struct Draft {
    key: Key,
    memory: Memory,
    content: String,
    prev: Vec<String>,
}

impl Draft {
    /// Moves the draft to `key`, a new memory beside the one it collided
    /// with (`--keep-both`): named for its key, created now, following
    /// nothing.
    fn move_to(&mut self, key: Key, now: Timestamp) {
        self.memory.name = key.slug.clone();
        self.memory.created = Some(now);
        self.content = self.memory.render();
        self.prev = Vec::new();
        self.key = key;
    }

    /// The change from `old`, labelled `old_label`, to the draft.
    fn diff_from(&self, old: &str, old_label: &str) -> String {
        let new_label = format!("b/{}", self.key.rel_path());
        text::unified_diff(old, &self.content, old_label, &new_label)
    }
}

/// Keeps the draft as a proposal instead of writing it.
fn propose(
    store: &Store,
    ctx: &Ctx,
    draft: &Draft,
    reason: ProposalReason,
    diff: String,
    review: bool,
) -> Result<RememberOutcome, StoreError> {
    let mut e = event(
        ctx,
        Op::Propose,
        Some(draft.key.clone()),
        draft.prev.clone(),
        draft.content.clone(),
    )?;
    if review {
        e.reason = Some(REVIEW.to_string());
    }
    crate::log::files::append(store, std::slice::from_ref(&e))?;
    Ok(RememberOutcome::Proposed {
        key: draft.key.clone(),
        id: e.id,
        reason,
        diff,
    })
}

/// `--propose`, or a collision at the draft's own key: kept as a proposal
/// (the outcome), or, with `--keep-both`, the draft moved to the next free
/// `<slug>-N`. `None`: go on and write.
fn settle_same_key(
    store: &Store,
    ctx: &Ctx,
    snap: &Snapshot,
    req: &Remember,
    existing: &Existing,
    draft: &mut Draft,
) -> Result<Option<RememberOutcome>, StoreError> {
    let old = existing.content.as_deref().unwrap_or("");
    let old_label = format!("a/{}", draft.key.rel_path());
    if matches!(req.collision, Collision::Propose | Collision::Review) {
        let diff = draft.diff_from(old, &old_label);
        let review = req.collision == Collision::Review;
        return propose(store, ctx, draft, ProposalReason::Requested, diff, review).map(Some);
    }
    if !existing.collides() {
        return Ok(None);
    }
    match req.collision {
        Collision::Ask if existing.conflict => {
            // No one version is the old one: the diff is from nothing.
            let diff = draft.diff_from(old, "/dev/null");
            propose(store, ctx, draft, ProposalReason::Conflict, diff, false).map(Some)
        }
        Collision::Ask => {
            let diff = draft.diff_from(old, &old_label);
            propose(store, ctx, draft, ProposalReason::Changed, diff, false).map(Some)
        }
        Collision::KeepBoth => {
            let key = free_key(store, snap, &draft.key)?;
            draft.move_to(key, ctx.now);
            Ok(None)
        }
        Collision::Replace | Collision::Propose | Collision::Review => Ok(None),
    }
}

/// What a near-duplicate at another key means for the write.
enum Beside {
    /// None, or one the collision mode lets be.
    Nothing,
    /// The draft is kept as a proposal instead.
    Proposed(RememberOutcome),
    /// The near-duplicate is forgotten in the draft's favour: its key and
    /// forget event.
    Superseded(Key, Event),
}

/// Another memory of the scope that says nearly what the draft says: the
/// draft is kept as a proposal (`--ask`), or the other is superseded
/// (`--replace`).
fn settle_near_duplicate(
    store: &Store,
    ctx: &Ctx,
    snap: &Snapshot,
    req: &Remember,
    draft: &Draft,
) -> Result<Beside, StoreError> {
    let Some((other, similarity)) = crate::search::nearest::near_duplicate(
        snap,
        &draft.key.scope,
        Some(&draft.key),
        &draft.memory.description,
        store.config.near_duplicate,
    ) else {
        return Ok(Beside::Nothing);
    };
    match req.collision {
        Collision::Ask => {
            let orel = other.rel_path();
            let old = store.read_memory_file(&orel)?.unwrap_or_default();
            let diff = draft.diff_from(&old, &format!("a/{orel}"));
            let reason = ProposalReason::NearDuplicate { other, similarity };
            propose(store, ctx, draft, reason, diff, false).map(Beside::Proposed)
        }
        Collision::Replace => {
            let forget = supersede(store, ctx, snap, &other, &draft.key)?;
            Ok(Beside::Superseded(other, forget))
        }
        Collision::KeepBoth | Collision::Propose | Collision::Review => Ok(Beside::Nothing),
    }
}

/// The event that forgets `other`, superseded by the memory at `by`. Its
/// file must be what the log says, and a conflict must be resolved first:
/// forgetting one side would decide it.
fn supersede(
    store: &Store,
    ctx: &Ctx,
    snap: &Snapshot,
    other: &Key,
    by: &Key,
) -> Result<Event, StoreError> {
    let state = snap.key(other);
    if state.as_ref().is_some_and(|s| s.conflict) {
        return Err(StoreError::Decision(format!(
            "{other} has an open conflict: resolve it before replacing it"
        )));
    }
    current_content(store, snap, state.as_ref(), other)?;
    let heads = state.map(|s| s.heads).unwrap_or_default();
    forget_event(ctx, other, heads, format!("superseded by {by}"))
}

/// Writes the draft, after the forget of the memory it supersedes.
fn write_draft(
    store: &Store,
    ctx: &Ctx,
    snap: &mut Snapshot,
    draft: Draft,
    replaced: bool,
    superseded: Option<(Key, Event)>,
) -> Result<RememberOutcome, StoreError> {
    let (superseded, mut events): (Vec<Key>, Vec<Event>) = superseded.into_iter().unzip();
    let remember = event(
        ctx,
        Op::Remember,
        Some(draft.key.clone()),
        draft.prev,
        draft.content,
    )?;
    let id = remember.id.clone();
    events.push(remember);
    apply_to(store, snap, &events)?;
    Ok(RememberOutcome::Written {
        key: draft.key,
        id,
        replaced,
        superseded,
    })
}

/// The next free key `<slug>-N` (N from 2) in the key's scope: no memory
/// at it, and nothing at its path (not even a link).
fn free_key(store: &Store, snap: &Snapshot, key: &Key) -> Result<Key, StoreError> {
    let taken = |k: &Key| {
        snap.key(k).as_ref().is_some_and(holds_memory)
            || store.path(&k.rel_path()).symlink_metadata().is_ok()
    };
    let refused = |message: String| policy::refused("name", &key.to_string(), None, message);
    crate::model::key::first_free_numbered(key, taken)
        .map_err(|e| refused(e.to_string()))?
        .ok_or_else(|| refused("no free key left for --keep-both".into()))
}

/// Forgets a memory, with a reason.
pub fn forget(store: &Store, ctx: &Ctx, key: &Key, reason: &str) -> Result<String, StoreError> {
    policy::free_text::check_reason(reason)?;
    let _lock = store.lock()?;
    let mut snap = Index::for_write(store)?;
    let Some(state) = snap.key(key).filter(holds_memory) else {
        return Err(StoreError::NoSuchMemory(key.to_string()));
    };
    if !state.conflict {
        current_content(store, &snap, Some(&state), key)?;
    }
    let e = forget_event(ctx, key, state.heads, reason.to_string())?;
    apply_to(store, &mut snap, std::slice::from_ref(&e))?;
    Ok(e.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory::MemoryType;
    use crate::model::remember::without_times;
    use crate::model::time::Date;

    fn now() -> Timestamp {
        Timestamp::parse("2026-11-29T10:41:07Z").expect("time")
    }

    fn request() -> Remember {
        Remember {
            key: Key {
                scope: "project".into(),
                slug: "test-command".into(),
            },
            name: "Test command".into(),
            description: "Run the tests with `cargo test`".into(),
            kind: MemoryType::Feedback,
            tags: vec!["build".into(), "ci".into()],
            source: "stated by the user".into(),
            confidence: 0.75,
            body: "Not `make test`.\n".into(),
            review_by: Some(Date::parse("2027-05-29").expect("date")),
            expires: None,
            collision: Collision::Ask,
            expect: None,
        }
    }

    #[test]
    fn the_memory_of_a_request_renders_and_parses_back() {
        let req = request();
        let m = req.memory(now());
        assert_eq!(
            (m.name.as_str(), m.source.as_deref(), m.confidence),
            ("Test command", Some("stated by the user"), Some(0.75))
        );
        assert_eq!((m.created, m.updated), (Some(now()), Some(now())));
        assert_eq!(m.review_by, req.review_by);
        assert_eq!(Memory::parse(&m.render()).expect("parses"), m);
    }

    #[test]
    fn versions_that_differ_only_in_their_times_are_the_same() {
        let a = request().memory(now());
        let later = Timestamp(now().0 + 60_000);
        let b = Memory {
            created: None,
            updated: Some(later),
            ..a.clone()
        };
        assert_eq!(without_times(&a), without_times(&b));
        let c = Memory {
            body: "changed\n".into(),
            ..a.clone()
        };
        assert_ne!(without_times(&a), without_times(&c));
    }

    #[test]
    fn expect_holds_only_at_the_one_expected_head() {
        let mut req = request();
        assert_eq!(moved(&req, &[]), None);
        req.expect = Some("01a".into());
        assert_eq!(moved(&req, &["01a".to_string()]), None);
        for heads in [
            vec![],
            vec!["01b".to_string()],
            vec!["01a".into(), "01b".into()],
        ] {
            assert_eq!(
                moved(&req, &heads),
                Some(RememberOutcome::Moved {
                    key: req.key.clone(),
                    expected: "01a".into(),
                    heads,
                })
            );
        }
    }

    fn draft() -> Draft {
        let memory = request().memory(now());
        Draft {
            key: request().key,
            content: memory.render(),
            memory,
            prev: vec!["01a".into()],
        }
    }

    #[test]
    fn a_draft_moved_beside_its_collision_is_a_new_memory_there() {
        let mut d = draft();
        d.memory.created = Some(Timestamp(0));
        let key = Key {
            scope: "project".into(),
            slug: "test-command-2".into(),
        };
        let later = Timestamp(now().0 + 1000);
        d.move_to(key.clone(), later);
        assert_eq!(d.key, key);
        assert!(d.prev.is_empty());
        let parsed = Memory::parse(&d.content).expect("parses");
        assert_eq!(parsed.name, "test-command-2");
        assert_eq!(parsed.created, Some(later));
        // Named for its key, so the file validates at its new path.
        policy::memory::validate_file(&d.content, &key.rel_path()).expect("valid");
    }

    #[test]
    fn a_draft_diff_goes_from_the_old_label_to_its_path() {
        let d = draft();
        let diff = d.diff_from("", "/dev/null");
        assert!(
            diff.starts_with("--- /dev/null\n+++ b/memory/project/test-command.md\n"),
            "{diff}"
        );
        assert!(diff.contains("+description: Run the tests"), "{diff}");
    }

    #[test]
    fn the_free_key_passes_over_memories_and_anything_at_a_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        crate::store::init(dir.path()).expect("init");
        let store = Store::open(dir.path()).expect("open");
        std::fs::write(store.path("memory/project/test-command-2.md"), "hand-made").expect("file");
        let snap = Index::for_write(&store).expect("snapshot");
        let key = free_key(&store, &snap, &request().key).expect("free");
        assert_eq!(key.slug, "test-command-3");
    }
}
