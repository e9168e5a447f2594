//! `memoir watch`

use super::{error::CliError, App};

/// Keep the store's freshness in a resident process: queries ask it what changed.
///
/// Watches memory/ for changes (inotify, FSEvents, kqueue) and answers
/// `recall`, `context` and the hooks over a socket in local state, so that
/// a query stats only the files that changed instead of every memory file.
/// Runs in the foreground, quietly, until SIGTERM or ctrl-c; without it
/// (or when it cannot vouch for what changed) commands scan as before.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir watch &\n  memoir watch --store ~/notes")]
pub struct Args {}

/// Runs the watcher until a signal stops it.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    #[cfg(unix)]
    {
        let store = app.store()?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            signal_hook::flag::register(signal, stop.clone())
                .map_err(|e| CliError::Usage(format!("cannot handle signals: {e}")))?;
        }
        let opts = memoir::ops::watch::Options {
            stop: &stop,
            overflow_events: overflow_events(),
        };
        memoir::ops::watch::watch(&store, opts)?;
        Ok(0)
    }
    #[cfg(not(unix))]
    {
        let _ = app;
        Err(CliError::Usage(
            "memoir watch needs a unix system (a local socket); commands scan the store instead"
                .to_string(),
        ))
    }
}

/// Tests (debug builds): MEMOIR_WATCH_OVERFLOW=N drops the first N events
/// as an overflowed queue would.
#[cfg(unix)]
fn overflow_events() -> usize {
    #[cfg(debug_assertions)]
    if let Some(n) = std::env::var("MEMOIR_WATCH_OVERFLOW")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    0
}
