//! Replays every saved fuzz crash input, `fuzz/regressions/<target>/*`,
//! through the checks its fuzz target makes (`fuzz/checks.rs`: the same
//! library calls and assertions), each within a time bound: a panic or a
//! hang that was fixed stays fixed. Inputs whose bug is not fixed yet wait
//! in `fuzz/regressions-pending/` and are not replayed (docs/fuzzing.md).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

#[path = "../../fuzz/checks.rs"]
mod checks;

/// Far above what any input takes once its bug is fixed (milliseconds, in
/// a debug build), far below what the hangs took.
const BOUND: Duration = Duration::from_secs(10);

/// The fuzz targets (fuzz/Cargo.toml).
const TARGETS: &[&str] = &[
    "memory", "log", "slug", "secrets", "merge", "interop", "mcp", "hook",
];

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .map(|e| e.expect("read regressions").path())
            .filter(|p| p.is_file())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    files.sort();
    files
}

/// Runs `check` on each saved input of `target` in a thread of its own:
/// fails on a panic (naming the file) or when one takes longer than BOUND.
fn replay(target: &str, check: fn(&str)) {
    for path in inputs(target) {
        let bytes = std::fs::read(&path).expect("read input");
        // The targets skip input that is not UTF-8: so does the replay.
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let (tx, rx) = mpsc::channel();
        let start = Instant::now();
        let worker = thread::spawn(move || {
            check(&text);
            let _ = tx.send(());
        });
        match rx.recv_timeout(BOUND) {
            Ok(()) => worker.join().expect("joined"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let panic = worker.join().expect_err("the check panicked");
                let msg = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                panic!("{}: {msg}", path.display());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{}: still running after {:?} (bound {BOUND:?})",
                path.display(),
                start.elapsed()
            ),
        }
    }
}

#[test]
fn memory() {
    replay("memory", checks::memory);
}

#[test]
fn log() {
    replay("log", checks::log);
}

#[test]
fn slug() {
    replay("slug", checks::slug);
}

#[test]
fn secrets() {
    replay("secrets", checks::secrets);
}

#[test]
fn merge() {
    replay("merge", checks::merge);
}

#[test]
fn interop() {
    replay("interop", checks::interop);
}

#[test]
fn mcp() {
    replay("mcp", checks::mcp);
}

#[test]
fn hook() {
    replay("hook", |text| checks::hook(text.as_bytes()));
}

/// Every folder of saved inputs is named after a target (a misnamed one
/// would never be replayed).
#[test]
fn saved_inputs_name_targets() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for dir in ["regressions", "regressions-pending"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir)) else {
            continue;
        };
        for e in entries {
            let path = e.expect("read regressions").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                assert!(TARGETS.contains(&&*name), "{}", path.display());
            }
        }
    }
}
