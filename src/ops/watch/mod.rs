//! `memoir watch`: a resident process that keeps, from file-system
//! notifications (the `notify` crate: inotify, FSEvents, kqueue), what
//! changed under `memory/` since each of its tokens, and answers commands
//! over a local socket (`watch::protocol`), so that a query stats only
//! what changed instead of every memory file.
//!
//! Its failure modes are those of git's fsmonitor daemon, each answered
//! the safe way: an overflowed queue (notify's rescan flag), an error, an
//! event it cannot attribute to files (a folder moved or removed) or a
//! cookie it never sees starts a new generation, so that every older
//! token is answered `reset` and the client scans; a new folder is
//! watched and listed whole (files made in it before its watch was added
//! are not lost); a killed watcher leaves a socket no one answers, which
//! a client takes as no watcher. After a quiet moment it refreshes and
//! saves the persistent index itself, with its newest token, so that the
//! next query's answer is short. Unix only (a local socket).

mod events;

use crate::store::{Store, StoreError};
use crate::watch::protocol::Token;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a watcher runs.
#[derive(Debug)]
pub struct Options<'a> {
    /// Set (by a signal) to stop: the watcher removes its socket and
    /// returns within a tenth of a second.
    pub stop: &'a AtomicBool,
    /// For tests: the first this many events under `memory/` are dropped
    /// and taken as an overflowed queue, as a lost notification would be.
    pub overflow_events: usize,
}

/// What a watcher did, for its caller to report.
#[derive(Debug, Default, Clone, Copy)]
pub struct Served {
    /// Answers given.
    pub answered: u64,
    /// Generations started after the first (overflows, lost cookies,
    /// folders moved away).
    pub resets: u64,
}

/// What the watcher's loop hears: a notification, a request, the end of
/// its own refresh of the index.
enum Msg {
    Fs(notify::Result<notify::Event>),
    Request(UnixStream, Option<Token>),
    Refreshed,
}

/// A request waiting for its cookie's event.
struct Pending {
    cookie: PathBuf,
    stream: UnixStream,
    since: Option<Token>,
    at: Instant,
}

/// A cookie not seen within this long: events may be lost; reset.
const COOKIE_WAIT: Duration = Duration::from_secs(1);
/// Refresh the index once changes have been quiet this long (a refresh
/// reads and rewrites the whole index: not after every keystroke)...
const QUIET: Duration = Duration::from_millis(500);
/// ...and at most this often (a query reads the few files changed since
/// meanwhile, as it reads a write's tail).
const REFRESH_EVERY: Duration = Duration::from_secs(3);

/// Runs the store's watcher until `opts.stop` is set (or its `memory/`
/// folder goes away). Refuses to start beside another live watcher of
/// the same store; takes over the socket a killed one left.
pub fn watch(store: &Store, opts: Options<'_>) -> Result<Served, StoreError> {
    let dir = store.state.watch_dir();
    let sock = store.state.watch_socket_path();
    std::fs::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
    remove_cookies(&dir);
    if sock.exists() {
        if UnixStream::connect(&sock).is_ok() {
            return Err(StoreError::Busy(
                "a watcher already runs for this store".to_string(),
            ));
        }
        // A killed watcher's socket: no one answers on it.
        std::fs::remove_file(&sock).map_err(StoreError::io(&sock))?;
    }
    let (tx, rx) = mpsc::channel();
    let mut server = events::Server::start(store, tx.clone(), opts.overflow_events)?;
    let listener = UnixListener::bind(&sock).map_err(StoreError::io(&sock))?;
    let ours = Socket::at(&sock)?;
    let closing = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        let accept_tx = tx.clone();
        let closing = &closing;
        s.spawn(move || accept(listener, accept_tx, closing));
        let result = serve(s, store, &mut server, &rx, &tx, opts.stop, &ours);
        closing.store(true, Ordering::SeqCst);
        // Only its own: after `rm -rf .git/memoir` another watcher may
        // have bound the same path since.
        ours.remove();
        result
    });
    let served = server.served;
    server.close();
    remove_cookies(&dir);
    result.map(|()| served)
}

/// The watcher's loop: notifications, requests, refreshes.
fn serve<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    store: &'s Store,
    server: &mut events::Server<'_>,
    rx: &mpsc::Receiver<Msg>,
    tx: &mpsc::Sender<Msg>,
    stop: &AtomicBool,
    ours: &Socket,
) -> Result<(), StoreError> {
    let mut refreshing = false;
    let mut refreshed: Option<(Token, Instant)> = None;
    let mut looked = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        if looked.elapsed() >= SOCKET_LOOK {
            looked = Instant::now();
            // Removed (`rm -rf .git/memoir`), or another watcher's since:
            // no command can ask this one any more.
            if !ours.still_there() {
                return Err(StoreError::Io {
                    path: ours.path.clone(),
                    source: std::io::Error::other(
                        "the watcher's socket was removed while it ran; it stops (start it again)",
                    ),
                });
            }
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Msg::Fs(ev)) => server.on_event(ev)?,
            Ok(Msg::Request(stream, since)) => server.on_request(stream, since),
            Ok(Msg::Refreshed) => refreshing = false,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        server.expire(COOKIE_WAIT);
        let token = server.journal.token();
        let due = match refreshed {
            None => true,
            Some((t, at)) => {
                t != token && server.quiet_for() >= QUIET && at.elapsed() >= REFRESH_EVERY
            }
        };
        if due && !refreshing {
            refreshing = true;
            refreshed = Some((token, Instant::now()));
            let tx = tx.clone();
            // The refresh asks this watcher over the socket, like any
            // command, and saves the index with the token it got.
            s.spawn(move || {
                let _ = crate::index::Index::refreshed_leniently(store);
                let _ = tx.send(Msg::Refreshed);
            });
        }
    }
    Ok(())
}

/// How often the watcher looks that its socket is still its own.
const SOCKET_LOOK: Duration = Duration::from_secs(1);

/// The socket a watcher bound: its path, and the file's identity there,
/// so that it never takes another watcher's for its own.
struct Socket {
    path: PathBuf,
    id: (u64, u64),
}

impl Socket {
    /// The socket just bound at `path`.
    fn at(path: &std::path::Path) -> Result<Socket, StoreError> {
        let id = file_id(path).map_err(StoreError::io(path))?;
        Ok(Socket {
            path: path.to_path_buf(),
            id,
        })
    }

    /// Is the file at its path still this socket?
    fn still_there(&self) -> bool {
        file_id(&self.path).ok() == Some(self.id)
    }

    /// Removes it, if it is still there (best effort).
    fn remove(&self) {
        if self.still_there() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A file's device and inode.
fn file_id(path: &std::path::Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path)?;
    Ok((m.dev(), m.ino()))
}

/// Accepts connections and reads each one's request line, until
/// `closing`: it waits for a connection a tenth of a second at a time,
/// so that it stops though its socket is gone and no one can connect to
/// wake it (it hung, and the watcher with it, on SIGTERM).
fn accept(listener: UnixListener, tx: mpsc::Sender<Msg>, closing: &AtomicBool) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    while !closing.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(&listener, PollFlags::IN)];
        match poll(&mut fds, Some(&tick)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        }
        let Ok((mut stream, _)) = listener.accept() else {
            continue;
        };
        if let Some(since) = read_request(&mut stream) {
            if tx.send(Msg::Request(stream, since)).is_err() {
                break;
            }
        }
    }
}

/// A request line, read within the client's own time limit.
fn read_request(stream: &mut UnixStream) -> Option<Option<Token>> {
    use std::io::Read;
    let limit = Some(crate::watch::client::TIMEOUT);
    stream.set_read_timeout(limit).ok()?;
    stream.set_write_timeout(limit).ok()?;
    let mut line = Vec::new();
    let mut buf = [0u8; 64];
    while !line.contains(&b'\n') {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 || line.len() > 128 {
            return None;
        }
        line.extend_from_slice(&buf[..n]);
    }
    crate::watch::protocol::parse_request(std::str::from_utf8(&line).ok()?)
}

/// Removes the cookie files a killed watcher left.
fn remove_cookies(dir: &std::path::Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("cookie-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A fresh instance id: a restarted watcher's tokens never match.
pub(crate) fn instance() -> u64 {
    let mut b = [0u8; 8];
    // Without randomness, the process id and the address of a local
    // still tell two runs apart well enough for a cache.
    if getrandom::fill(&mut b).is_err() {
        let here = &b as *const _ as u64;
        return u64::from(std::process::id()) << 32 ^ here;
    }
    u64::from_le_bytes(b)
}
