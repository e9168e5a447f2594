//! A store for the tests beside the code: a temporary git repository with
//! a store in it, and a fluent way to write memories and proposals into it
//! through the real operations. Time and identity are pinned; nothing of
//! the user's environment is read (the store's git repository is created
//! by gix, and commits name their author).

use crate::model::key::Key;
use crate::model::memory::MemoryType;
use crate::model::time::Timestamp;
use crate::ops::write::{remember, Collision, Remember, RememberOutcome};
use crate::store::{Ctx, Store};

/// A temporary store and the clock its writes use.
pub(crate) struct TempStore {
    /// Keeps the folder alive.
    _dir: tempfile::TempDir,
    /// The open store.
    pub(crate) store: Store,
    /// The time and actor of the next write.
    pub(crate) ctx: Ctx,
}

impl TempStore {
    /// A fresh store at 2026-11-29T10:00:00Z.
    pub(crate) fn new() -> TempStore {
        let dir = tempfile::tempdir().expect("a temporary folder");
        crate::store::init(dir.path()).expect("a store");
        let store = Store::open(dir.path()).expect("the store");
        let now = Timestamp::parse("2026-11-29T10:00:00Z").expect("a time");
        TempStore {
            _dir: dir,
            store,
            ctx: Ctx {
                now,
                actor: "Ada <ada@example.com>".into(),
            },
        }
    }

    /// Moves the clock on by `seconds`.
    pub(crate) fn later(&mut self, seconds: i64) -> &mut TempStore {
        self.ctx.now = Timestamp(self.ctx.now.0 + seconds * 1000);
        self
    }

    /// A request to remember `key` (`scope/name`) with `description`.
    pub(crate) fn request(key: &str, description: &str) -> Remember {
        let (key, name) = Key::parse(key).expect("a key");
        Remember {
            key,
            name,
            description: description.into(),
            kind: MemoryType::Project,
            tags: Vec::new(),
            source: "a test".into(),
            confidence: 1.0,
            body: format!("{description}.\n"),
            review_by: None,
            expires: None,
            collision: Collision::Ask,
            expect: None,
        }
    }

    /// Remembers a request, a second later than the last write.
    pub(crate) fn remember(&mut self, req: &Remember) -> RememberOutcome {
        self.later(1);
        remember(&self.store, &self.ctx, req).expect("remembered")
    }

    /// Writes `key` with `description` directly.
    pub(crate) fn write(&mut self, key: &str, description: &str) -> &mut TempStore {
        self.remember(&TempStore::request(key, description));
        self
    }

    /// Writes `key` with `description`, replacing what it says now.
    pub(crate) fn replace(&mut self, key: &str, description: &str) -> &mut TempStore {
        let mut req = TempStore::request(key, description);
        req.collision = Collision::Replace;
        self.remember(&req);
        self
    }

    /// Only proposes `key` with `description`, for consolidation.
    pub(crate) fn propose(&mut self, key: &str, description: &str) -> &mut TempStore {
        let mut req = TempStore::request(key, description);
        req.collision = Collision::Propose;
        self.remember(&req);
        self
    }

    /// A memory file's content, if it exists.
    pub(crate) fn file(&self, key: &str) -> Option<String> {
        let (key, _) = Key::parse(key).expect("a key");
        self.store.read(&key.rel_path(), None).expect("readable")
    }
}
