//! The watcher's state: the notify watcher, the journal of what changed,
//! the folders it knows, the requests waiting for their cookies.

use super::{Msg, Pending, Served};
use crate::store::{Store, StoreError};
use crate::watch::journal::Journal;
use crate::watch::protocol::{Answer, Token};
use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind, RenameMode};
use notify::{RecursiveMode, Watcher};
use std::collections::HashSet;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The watcher's state, fed by its loop.
pub(super) struct Server<'a> {
    store: &'a Store,
    watcher: notify::RecommendedWatcher,
    /// What changed, by token.
    pub(super) journal: Journal,
    /// `memory/`, absolute.
    root: PathBuf,
    /// The watcher's folder in local state (socket and cookies).
    dir: PathBuf,
    /// Every folder under `memory/` (its removal or move cannot be told
    /// apart file by file: it resets).
    dirs: HashSet<PathBuf>,
    pending: Vec<Pending>,
    next_cookie: u64,
    overflow_left: usize,
    last_change: Instant,
    /// What it did.
    pub(super) served: Served,
}

impl<'a> Server<'a> {
    /// Watches `memory/` (recursively) and the watcher's own folder (for
    /// its cookies), each notification sent on `tx`.
    pub(super) fn start(
        store: &'a Store,
        tx: mpsc::Sender<Msg>,
        overflow_events: usize,
    ) -> Result<Server<'a>, StoreError> {
        let root = store.path("memory");
        let dir = store.state.watch_dir();
        let config = notify::Config::default().with_follow_symlinks(false);
        let handler = move |ev| {
            let _ = tx.send(Msg::Fs(ev));
        };
        let failed = |e: notify::Error| StoreError::Io {
            path: root.clone(),
            source: std::io::Error::other(format!("cannot watch it: {e}")),
        };
        let mut watcher = notify::RecommendedWatcher::new(handler, config).map_err(failed)?;
        watcher
            .watch(&root, RecursiveMode::Recursive)
            .map_err(failed)?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(failed)?;
        let mut server = Server {
            store,
            watcher,
            journal: Journal::new(super::instance()),
            root: root.clone(),
            dir,
            dirs: HashSet::new(),
            pending: Vec::new(),
            next_cookie: 0,
            overflow_left: overflow_events,
            last_change: Instant::now(),
            served: Served::default(),
        };
        server.dirs.insert(root.clone());
        server.list_dirs(&root);
        Ok(server)
    }

    /// Stops watching.
    pub(super) fn close(self) {
        drop(self.watcher);
    }

    /// How long since the last change.
    pub(super) fn quiet_for(&self) -> Duration {
        self.last_change.elapsed()
    }

    /// Records the folders under `from` (walked, links not followed).
    fn list_dirs(&mut self, from: &Path) {
        for e in walkdir::WalkDir::new(from)
            .follow_links(false)
            .into_iter()
            .flatten()
        {
            if e.file_type().is_dir() {
                self.dirs.insert(e.into_path());
            }
        }
    }

    /// Starts a new generation: every older token gets `reset`.
    fn reset(&mut self) {
        self.journal.reset();
        self.served.resets += 1;
        self.last_change = Instant::now();
    }

    /// Takes in one notification. `Err` when `memory/` itself is gone:
    /// there is nothing left to watch.
    pub(super) fn on_event(&mut self, ev: notify::Result<notify::Event>) -> Result<(), StoreError> {
        let ev = match ev {
            Ok(ev) => ev,
            // Out of watches: a folder goes unwatched, and its changes
            // would never be told. Stop, so that commands scan.
            Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                return Err(self.blind(&self.root, e));
            }
            // Any other error of the watcher: events may be lost.
            Err(_) => {
                self.reset();
                return Ok(());
            }
        };
        if ev.need_rescan() {
            self.reset();
            return Ok(());
        }
        let (mine, theirs): (Vec<&PathBuf>, Vec<&PathBuf>) =
            ev.paths.iter().partition(|p| p.starts_with(&self.dir));
        if matches!(ev.kind, EventKind::Create(_)) {
            for cookie in mine {
                self.cookie_seen(cookie);
            }
        }
        if theirs.is_empty() || !changes_content(&ev.kind) {
            return Ok(());
        }
        if self.overflow_left > 0 {
            // The test knob: this event is lost, as in a full queue.
            self.overflow_left -= 1;
            self.reset();
            return Ok(());
        }
        self.last_change = Instant::now();
        for path in theirs {
            self.on_path(&ev.kind, path)?;
        }
        if !self.root.is_dir() {
            return Err(StoreError::Io {
                path: self.root.clone(),
                source: std::io::Error::other("the watched folder was removed"),
            });
        }
        Ok(())
    }

    /// The error that stops a watcher that can no longer see `path`.
    fn blind(&self, path: &Path, e: notify::Error) -> StoreError {
        StoreError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("cannot watch it: {e}")),
        }
    }

    /// One path of a notification.
    fn on_path(&mut self, kind: &EventKind, path: &Path) -> Result<(), StoreError> {
        let gone = matches!(
            kind,
            EventKind::Remove(_)
                | EventKind::Modify(ModifyKind::Name(RenameMode::From | RenameMode::Any))
        );
        if gone && path == self.root {
            // Even if made again at once, the new folder is not watched.
            return Err(StoreError::Io {
                path: self.root.clone(),
                source: std::io::Error::other("the watched folder was removed or moved"),
            });
        }
        if gone && self.dirs.contains(path) {
            // A folder moved or removed: its files were not each told.
            self.dirs.retain(|d| !d.starts_with(path));
            self.reset();
            return Ok(());
        }
        let appeared = matches!(
            kind,
            EventKind::Create(_)
                | EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Any))
        );
        let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
        if appeared && is_dir {
            return self.new_dir(path);
        }
        if !is_dir {
            self.record(path);
        }
        Ok(())
    }

    /// A folder made or moved in: watched now (by itself, so that what is
    /// made in it from now on is told), and every file already in it
    /// counted as changed.
    fn new_dir(&mut self, path: &Path) -> Result<(), StoreError> {
        if let Err(e) = self.watcher.watch(path, RecursiveMode::Recursive) {
            // Gone already: its removal is the next event. Else it cannot
            // be watched (out of watches): stop, so that commands scan.
            if path.is_dir() {
                return Err(self.blind(path, e));
            }
            return Ok(());
        }
        let walk = walkdir::WalkDir::new(path).follow_links(false);
        for e in walk.into_iter().flatten() {
            if e.file_type().is_dir() {
                self.dirs.insert(e.into_path());
            } else {
                self.record(e.path());
            }
        }
        Ok(())
    }

    /// Counts a file under `memory/` as changed.
    fn record(&mut self, path: &Path) {
        let rel = path
            .strip_prefix(&self.store.root)
            .ok()
            .and_then(Path::to_str)
            .filter(|r| !r.contains('\n'));
        match rel {
            Some(rel) => self.journal.changed(rel.to_string()),
            // A name the protocol cannot carry: scan.
            None if path.starts_with(&self.root) => self.reset(),
            None => {}
        }
    }

    /// A request: answered once the cookie it makes is seen (so once
    /// every event before it is in the journal).
    pub(super) fn on_request(&mut self, mut stream: UnixStream, since: Option<Token>) {
        self.next_cookie += 1;
        let cookie = self.dir.join(format!("cookie-{}", self.next_cookie));
        if std::fs::File::create(&cookie).is_err() {
            self.answer(&mut stream, since.as_ref(), true);
            return;
        }
        self.pending.push(Pending {
            cookie,
            stream,
            since,
            at: Instant::now(),
        });
    }

    fn cookie_seen(&mut self, path: &Path) {
        let Some(at) = self.pending.iter().position(|p| p.cookie == path) else {
            return;
        };
        let mut p = self.pending.swap_remove(at);
        let _ = std::fs::remove_file(&p.cookie);
        self.answer(&mut p.stream, p.since.as_ref(), false);
    }

    /// Requests whose cookie was not seen in time: events may be lost.
    pub(super) fn expire(&mut self, wait: Duration) {
        let (late, waiting): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.at.elapsed() > wait);
        self.pending = waiting;
        if late.is_empty() {
            return;
        }
        self.reset();
        for mut p in late {
            let _ = std::fs::remove_file(&p.cookie);
            self.answer(&mut p.stream, p.since.as_ref(), true);
        }
    }

    fn answer(&mut self, stream: &mut UnixStream, since: Option<&Token>, reset: bool) {
        use std::io::Write;
        let answer = if reset {
            Answer::Reset {
                token: self.journal.token(),
            }
        } else {
            self.journal.answer(since)
        };
        self.served.answered += 1;
        let _ = stream.write_all(answer.render().as_bytes());
    }
}

/// Does an event of this kind say a file's content or presence changed?
/// (Opening and reading a file does not: a query reads many.)
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => false,
        _ => true,
    }
}
