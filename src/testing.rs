//! A store for the tests beside the code: a fresh git repository (git run
//! pinned, as in tests/cli/util.rs: an empty environment but `PATH`, a
//! fresh `HOME`, no global or system config, one author and date) with a
//! store at its root, and a fluent way to write memories, proposals and
//! hand edits into it through the real operations. The clock is the
//! fixture's; nothing of the user's setup can change a result.

#![cfg(test)]

use crate::change::drift::{drifts, DriftKind};
use crate::model::event::Op;
use crate::model::key::Key;
use crate::model::memory::MemoryType;
use crate::model::remember::{Collision, Remember};
use crate::model::time::Timestamp;
use crate::ops::write::{remember, RememberOutcome};
use crate::store::{Ctx, Store};
use std::path::PathBuf;
use std::process::Command;

/// The pinned actor, as `MEMOIR_ACTOR` is in the CLI tests.
pub(crate) const ACTOR: &str = "Ada <ada@example.com>";

/// A temporary store, its repository and home, and the clock its writes use.
pub(crate) struct TempStore {
    dir: tempfile::TempDir,
    /// The store, opened.
    pub(crate) store: Store,
    /// The time and actor of the next write.
    pub(crate) ctx: Ctx,
}

impl TempStore {
    /// `git init` (pinned), then `memoir init`, then the store opened;
    /// the clock at 2026-11-29T10:41:07Z.
    pub(crate) fn new() -> TempStore {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::fs::create_dir_all(dir.path().join("repo")).expect("repo");
        let root = dir.path().join("repo");
        git_in(&dir, &["init", "-q", "-b", "main"]);
        crate::store::init(&root).expect("memoir init");
        let store = Store::open(&root).expect("open the store");
        let ctx = Ctx {
            now: Timestamp::parse("2026-11-29T10:41:07Z").expect("time"),
            actor: ACTOR.into(),
        };
        TempStore { dir, store, ctx }
    }

    /// Who acts, and when (the clock as it stands).
    pub(crate) fn ctx(&self) -> Ctx {
        self.ctx.clone()
    }

    /// Remembers the project memory `name` with `body`, as `memoir
    /// remember` does; its key.
    pub(crate) fn remember(&self, name: &str, body: &str) -> Key {
        let (key, name) = Key::parse(&format!("project/{name}")).expect("key");
        let req = Remember {
            key,
            description: format!("what {name} is about"),
            name,
            kind: MemoryType::Project,
            tags: Vec::new(),
            source: "a unit test".into(),
            confidence: 0.9,
            body: body.into(),
            review_by: None,
            expires: None,
            collision: Collision::Replace,
            expect: None,
        };
        match remember(&self.store, &self.ctx(), &req).expect("remember") {
            RememberOutcome::Written { key, .. } => key,
            other => panic!("not written: {other:?}"),
        }
    }

    /// Appends a `remember` of `content` for `key` to the log, and writes
    /// no view: what a crash between the log append and the view write
    /// leaves.
    pub(crate) fn append_only(&self, key: &Key, content: &str) {
        let (replay, _) = drifts(&self.store).expect("drifts");
        let heads = replay
            .memories
            .get(key)
            .map(|v| v.heads.clone())
            .unwrap_or_default();
        let e = crate::change::event::event(
            &self.ctx(),
            Op::Remember,
            Some(key.clone()),
            heads,
            content.into(),
        )
        .expect("event");
        crate::log::files::append(&self.store, &[e]).expect("append");
    }

    /// Each drift, as (path, kind).
    pub(crate) fn drifts(&self) -> Vec<(String, DriftKind)> {
        let (_, found) = drifts(&self.store).expect("drifts");
        found.into_iter().map(|d| (d.path, d.kind)).collect()
    }

    /// An absolute path in the store.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.store.path(rel)
    }

    /// The store file `rel`, if it exists.
    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    /// Writes the store file `rel`, as a person would.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).expect("write");
    }

    /// The store file `rel` with `from` replaced by `to`, by hand.
    pub(crate) fn edit(&self, rel: &str, from: &str, to: &str) {
        let text = self.read(rel).expect("the file");
        assert!(text.contains(from), "{rel} holds no {from:?}: {text}");
        self.write(rel, &text.replace(from, to));
    }

    /// Deletes the store file `rel`, by hand.
    pub(crate) fn remove(&self, rel: &str) {
        std::fs::remove_file(self.path(rel)).expect("rm");
    }

    /// The one log file.
    pub(crate) fn log(&self) -> String {
        let logs = crate::log::files::log_files(&self.store).expect("logs");
        assert_eq!(logs.len(), 1, "{logs:?}");
        logs[0].rel.clone()
    }

    /// Commits everything in the work tree.
    pub(crate) fn commit_all(&self, message: &str) {
        git_in(&self.dir, &["add", "-A"]);
        git_in(&self.dir, &["commit", "-q", "-m", message]);
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
    pub(crate) fn apply(&mut self, req: &Remember) -> RememberOutcome {
        self.later(1);
        remember(&self.store, &self.ctx, req).expect("remembered")
    }

    /// Writes the memory `key` with `description` directly.
    pub(crate) fn memory(&mut self, key: &str, description: &str) -> &mut TempStore {
        self.apply(&TempStore::request(key, description));
        self
    }

    /// Writes `key` with `description`, replacing what it says now.
    pub(crate) fn replace(&mut self, key: &str, description: &str) -> &mut TempStore {
        let mut req = TempStore::request(key, description);
        req.collision = Collision::Replace;
        self.apply(&req);
        self
    }

    /// Only proposes `key` with `description`, for consolidation.
    pub(crate) fn propose(&mut self, key: &str, description: &str) -> &mut TempStore {
        let mut req = TempStore::request(key, description);
        req.collision = Collision::Propose;
        self.apply(&req);
        self
    }

    /// A memory file's content, if it exists.
    pub(crate) fn file(&self, key: &str) -> Option<String> {
        let (key, _) = Key::parse(key).expect("a key");
        self.store.read(&key.rel_path(), None).expect("readable")
    }
}

/// Runs the pinned `git <args>` in the repository of `dir`, which must
/// succeed.
fn git_in(dir: &tempfile::TempDir, args: &[&str]) {
    let home = dir.path().join("home");
    let date = "1767323045 +0000";
    let out = Command::new("git")
        .current_dir(dir.path().join("repo"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_DATE", date)
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
