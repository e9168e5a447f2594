//! The one call a command makes to the watcher: what changed since a
//! token. Any failure is `None`, and the caller scans as it always did.

use crate::local::state::StateDir;
use crate::watch::protocol::{Answer, Token};
use std::time::Duration;

/// How long a command waits for the watcher, from connecting to the end
/// of its answer: a hook must not hang on a stuck watcher, and a full
/// scan of a large store takes about this long anyway.
pub const TIMEOUT: Duration = Duration::from_millis(200);

/// The largest answer read: more changed paths than this means a scan.
const MAX_ANSWER: u64 = 16 << 20;

/// Asks the store's watcher what changed since `since`; `None` when no
/// watcher answers in time, whole (no socket, a stale one, a refused
/// connection, a timeout, an answer cut short).
pub fn ask(state: &StateDir, since: Option<&Token>) -> Option<Answer> {
    #[cfg(unix)]
    {
        ask_unix(state, since)
    }
    #[cfg(not(unix))]
    {
        // No local socket to ask: always the full scan.
        let _ = (state, since);
        None
    }
}

#[cfg(unix)]
fn ask_unix(state: &StateDir, since: Option<&Token>) -> Option<Answer> {
    use std::io::{Read, Write};
    let path = state.watch_socket_path();
    // No watcher: one failed stat, not a failed connect.
    if std::fs::symlink_metadata(&path).is_err() {
        return None;
    }
    let mut stream = std::os::unix::net::UnixStream::connect(&path).ok()?;
    stream.set_write_timeout(Some(TIMEOUT)).ok()?;
    stream.set_read_timeout(Some(TIMEOUT)).ok()?;
    stream
        .write_all(crate::watch::protocol::request(since).as_bytes())
        .ok()?;
    let mut text = String::new();
    stream.take(MAX_ANSWER).read_to_string(&mut text).ok()?;
    Answer::parse(&text)
}

/// Is there a socket a watcher may answer on? (One stat: without one a
/// query lists the files while it reads the index, as it always did.)
pub fn may_answer(state: &StateDir) -> bool {
    cfg!(unix) && std::fs::symlink_metadata(state.watch_socket_path()).is_ok()
}
