//! Freshness from a resident process: what changed under `memory/` since
//! a token, asked of `memoir watch` over a local socket instead of a stat
//! of every memory file.
//!
//! The protocol follows git's fsmonitor daemon (and watchman's clocks): a
//! token names a point in one watcher's stream of events; a client sends
//! the token its persistent index was saved with and gets back every path
//! changed since, with a newer token, or `reset` when the watcher cannot
//! vouch for the whole interval (another watcher, a lost event, an
//! overflowed queue). Before answering, the watcher writes a cookie file
//! and waits for its own event, so that every change made before the
//! request is in the answer. Tokens are counters, never times: a clock
//! jump changes nothing. Whatever goes wrong (no watcher, a stale socket,
//! a slow answer, `reset`) the client does the full scan it always did.
//!
//! `protocol` is the wire (pure), `journal` the watcher's record of what
//! changed (pure), `client` the one call a command makes. The watcher's
//! loop is `ops::watch`.

pub mod client;
pub mod journal;
pub mod protocol;
