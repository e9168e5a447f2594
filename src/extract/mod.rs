//! The extractor `consolidate --extract-cmd` runs: a shell command that
//! reads the notes no consolidation has consumed yet as JSON lines on its
//! stdin and prints candidate memories as JSON lines (`wire`: both sides
//! of the protocol, the answers checked into `remember` requests).
//!
//! Not the command transport `embed` and `rerank` share
//! (`service::command`): an extractor is a shell line (`sh -c`), has no
//! time limit (it may read many notes with a model) and its stderr is the
//! user's to see; only its output is capped. It runs in a process group of
//! its own (`service::process`), so that giving up on it takes down what it
//! started.

mod wire;

use crate::model::remember::Remember;
use crate::store::{Store, StoreError};
use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The most an extractor may print: an endless output (`yes`) is refused.
pub const MAX_OUTPUT: u64 = 64 << 20;

/// What an extractor answered: its candidates, and the notes it answered
/// for (those a candidate names as drawn from, and those it says it
/// consumed with nothing to remember).
#[derive(Debug, Clone, Default)]
pub struct Extracted {
    /// The candidates, checked, as requests to consolidate like proposals.
    pub candidates: Vec<Remember>,
    /// The ids of the notes answered for, each once: only those are
    /// consumed, so a note an extractor never read is given to the next one.
    pub notes: Vec<String>,
}

/// Why an extractor's answer could not be used: nothing is consolidated.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The pending notes could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The command could not be started.
    #[error("cannot run the extractor `{cmd}`: {source}")]
    Spawn {
        /// The command.
        cmd: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// The command failed, printed too much, or left its output open.
    #[error("the extractor `{cmd}` {why}; nothing consolidated")]
    Failed {
        /// The command.
        cmd: String,
        /// What it did, e.g. `failed (exit status: 1)`.
        why: String,
    },
    /// Its output is not UTF-8.
    #[error("the extractor's output is not UTF-8")]
    NotUtf8,
    /// A line of its output is malformed or breaks a check.
    #[error("extractor output line {line}: {message}")]
    Line {
        /// The line, 1-based.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A candidate's key is no key (the write policy's rule `name`).
    #[error("{key}: {message}")]
    Key {
        /// The key as the extractor wrote it.
        key: String,
        /// Why it is refused.
        message: String,
    },
    /// A candidate names an unknown type (the write policy's rule `type`).
    #[error("extractor output line {line}: unknown type `{kind}`")]
    Type {
        /// The line, 1-based.
        line: usize,
        /// The type it named.
        kind: String,
    },
    /// Reading its output or waiting for it failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Runs the extractor `cmd` (with `sh -c`, in the store's root) on the
/// pending notes; returns its candidates and the notes it answered for.
pub fn extract(cmd: &str, store: &Store) -> Result<Extracted, ExtractError> {
    let notes = crate::ops::consolidate::pending_notes(store)?;
    let bytes = run(cmd, &store.root, wire::input(&notes))?;
    let text = String::from_utf8(bytes).map_err(|_| ExtractError::NotUtf8)?;
    let given: HashSet<&str> = notes.iter().map(|n| n.id.as_str()).collect();
    let (candidates, notes) = wire::answers(&text, &given)?;
    Ok(Extracted { candidates, notes })
}

/// The extractor failed: nothing is consolidated.
fn failed(cmd: &str, why: &str) -> ExtractError {
    ExtractError::Failed {
        cmd: cmd.into(),
        why: why.into(),
    }
}

/// Runs `cmd` with `sh -c` in `dir`, `input` on its stdin; returns its
/// output once it has exited successfully.
fn run(cmd: &str, dir: &Path, input: String) -> Result<Vec<u8>, ExtractError> {
    // In a process group of its own: killed, it takes what it started along.
    let mut child = crate::service::process::spawn(
        Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped()),
    )
    .map_err(|source| ExtractError::Spawn {
        cmd: cmd.into(),
        source,
    })?;
    // Written on a thread while the output is read: an extractor that
    // answers each line as it reads it would fill its output pipe while
    // memoir still writes, and both would wait for ever.
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            // An extractor that exits without reading is its own business.
            let _ = stdin.write_all(input.as_bytes());
        })
    });
    let output = read_output(child.stdout.take());
    let (status, bytes) = wait(cmd, &mut child, &output)?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    if !status.success() {
        return Err(failed(cmd, &format!("failed ({status})")));
    }
    let bytes = match bytes {
        Some(bytes) => bytes,
        None => match output.recv_timeout(Duration::from_secs(5)) {
            Ok(read) => read?,
            Err(_) => {
                crate::service::process::kill(&mut child);
                return Err(failed(
                    cmd,
                    "exited with its output still open (a process it left in the background?)",
                ));
            }
        },
    };
    if bytes.len() as u64 > MAX_OUTPUT {
        return Err(failed(cmd, "printed more than 64 MiB"));
    }
    Ok(bytes)
}

/// What the extractor printed, as a thread reads it.
type Printed = Receiver<std::io::Result<Vec<u8>>>;

/// Reads the extractor's output on a thread up to a cap: an endless one
/// (`yes`) is refused, and one left open by a process it started in the
/// background is not waited for once it has exited.
fn read_output(stdout: Option<ChildStdout>) -> Printed {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = stdout.take(MAX_OUTPUT + 1).read_to_end(&mut bytes);
            let _ = tx.send(read.map(|_| bytes));
        });
    }
    rx
}

/// Waits for the extractor to exit, taking its output when it comes;
/// kills it once it has printed more than the cap.
fn wait(
    cmd: &str,
    child: &mut Child,
    output: &Printed,
) -> Result<(ExitStatus, Option<Vec<u8>>), ExtractError> {
    let mut bytes = None;
    loop {
        if bytes.is_none() {
            if let Ok(read) = output.recv_timeout(Duration::from_millis(50)) {
                let read = read?;
                if read.len() as u64 > MAX_OUTPUT {
                    crate::service::process::kill(child);
                    return Err(failed(cmd, "printed more than 64 MiB"));
                }
                bytes = Some(read);
            }
        }
        if let Some(status) = child.try_wait()? {
            return Ok((status, bytes));
        }
        if bytes.is_some() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
