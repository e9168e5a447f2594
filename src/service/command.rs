//! The command transport: a program run once per call, in the store's
//! root, with the request on its stdin and the answer expected on its
//! stdout. Anything can stand behind it: a local model in Python, or curl
//! for an https provider (`sh -c 'curl ... -d @-'`).
//!
//! The call is bounded like an HTTP one: killed at the timeout, killed
//! once it prints more than the call's cap, and with it whatever it
//! started (`super::process`: its own process group). Its pipes are served by
//! threads so that neither side can block the other (a program that
//! answers as it reads would otherwise fill its output while memoir still
//! writes).

use super::{quote, timed_out, too_large, CallError};
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How much of the program's stderr is kept (for the first line).
const MAX_STDERR: u64 = 64 << 10;
/// How much of its stderr an error quotes, in characters.
const QUOTED_STDERR: usize = 200;

/// One run of a program: which, where, within which time, reading at most
/// how much of its output. Borrowed from the client that makes it.
pub(crate) struct CommandCall<'a> {
    /// The program and its arguments.
    pub argv: &'a [String],
    /// Where it runs (the store's root).
    pub dir: &'a Path,
    /// Blanked out of the stderr an error quotes (the program reads its
    /// own environment; the key is never passed to it).
    pub secret: Option<&'a str>,
    /// The whole run's time; the program is killed after it.
    pub timeout: Duration,
    /// The most output bytes read; the program is killed past them.
    pub max_answer: usize,
}

/// What a pipe's reader thread got: the bytes, or the read's error.
type Pipe = Receiver<io::Result<Vec<u8>>>;

impl CommandCall<'_> {
    fn program(&self) -> &str {
        self.argv.first().map(String::as_str).unwrap_or("")
    }

    fn failed(&self, why: impl std::fmt::Display) -> CallError {
        CallError::Command(format!("`{}` {why}", self.program()))
    }

    /// Runs the program on `input`; its output once it exited with 0.
    pub(crate) fn run(&self, input: Vec<u8>) -> Result<Vec<u8>, CallError> {
        let deadline = Instant::now() + self.timeout;
        let Some((program, args)) = self.argv.split_first() else {
            return Err(self.failed("is no program"));
        };
        let mut child = super::process::spawn(
            Command::new(program)
                .args(args)
                .current_dir(self.dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .map_err(|e| self.failed(format!("cannot run: {e}")))?;
        if let Some(mut stdin) = child.stdin.take() {
            std::thread::spawn(move || {
                // A program that exits without reading it all is judged by
                // its exit status and its output, not by the broken pipe.
                let _ = stdin.write_all(&input);
            });
        }
        let cap = self.max_answer as u64;
        let stdout = read_pipe(child.stdout.take(), cap + 1, false);
        let stderr = read_pipe(child.stderr.take(), MAX_STDERR, true);
        let (status, output) = self.wait(&mut child, &stdout, deadline)?;
        let output = match output {
            Some(bytes) => bytes,
            // Exited, its output still open: a process it left behind holds
            // it. What is left of the time is all it gets, then it goes.
            None => match stdout.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(read) => read.map_err(|e| self.failed(format!("output unreadable: {e}")))?,
                Err(_) => {
                    super::process::kill(&mut child);
                    return Err(self
                        .failed("exited with its output still open (a process it left running?)"));
                }
            },
        };
        self.verdict(status, output, &stderr)
    }

    /// What a run that ended with `status` and printed `output` gives:
    /// the output, or why not (its stderr quoted, from its reader).
    fn verdict(
        &self,
        status: ExitStatus,
        output: Vec<u8>,
        stderr: &Pipe,
    ) -> Result<Vec<u8>, CallError> {
        // Over the cap first: the reader stops at the cap and closes the
        // pipe, so a program still printing dies of SIGPIPE, and whether its
        // exit or its output is seen first is a race; too much output is the
        // reason either way.
        if output.len() > self.max_answer {
            return Err(too_large(self.max_answer));
        }
        if !status.success() {
            let said = stderr
                .recv_timeout(Duration::from_millis(100))
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            let said = quote(&String::from_utf8_lossy(&said), QUOTED_STDERR, self.secret);
            return Err(self.failed(if said.is_empty() {
                format!("failed ({status})")
            } else {
                format!("failed ({status}): {said}")
            }));
        }
        Ok(output)
    }

    /// Waits for the program to exit, taking its output when it comes; kills
    /// it at the deadline or once it printed more than the cap.
    fn wait(
        &self,
        child: &mut Child,
        stdout: &Pipe,
        deadline: Instant,
    ) -> Result<(ExitStatus, Option<Vec<u8>>), CallError> {
        let kill = super::process::kill;
        let mut output = None;
        // Short polls first: a quick program answers in milliseconds.
        let mut poll = Duration::from_millis(1);
        loop {
            if let Some(status) = child
                .try_wait()
                .map_err(|e| self.failed(format!("cannot be waited for: {e}")))?
            {
                return Ok((status, output));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                kill(child);
                return Err(timed_out(self.timeout));
            }
            let step = poll.min(left);
            if output.is_none() {
                match stdout.recv_timeout(step) {
                    Ok(Ok(bytes)) if bytes.len() > self.max_answer => {
                        kill(child);
                        return Err(too_large(self.max_answer));
                    }
                    Ok(Ok(bytes)) => output = Some(bytes),
                    Ok(Err(e)) => {
                        kill(child);
                        return Err(self.failed(format!("output unreadable: {e}")));
                    }
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
                }
            } else {
                std::thread::sleep(step);
            }
            poll = (poll * 2).min(Duration::from_millis(20));
        }
    }
}

/// Reads a pipe on a thread, at most `cap` bytes kept; with `drain`, the
/// rest is read and dropped (stderr: a chatty program must not block on a
/// full pipe), else reading stops at the cap (stdout: over it, the program
/// is killed).
fn read_pipe(pipe: Option<impl Read + Send + 'static>, cap: u64, drain: bool) -> Pipe {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = (&mut pipe).take(cap).read_to_end(&mut bytes);
            if drain {
                let _ = io::copy(&mut pipe, &mut io::sink());
            }
            let _ = tx.send(read.map(|_| bytes));
        });
    }
    rx
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_program_killed_by_its_broken_pipe_printed_too_much() {
        // `yes` past the cap: the reader stops and closes the pipe, `yes`
        // dies of SIGPIPE, and its exit may be seen before its output.
        let argv = ["yes".to_string()];
        let dir = std::env::temp_dir();
        let call = CommandCall {
            argv: &argv,
            dir: &dir,
            secret: None,
            timeout: Duration::from_secs(10),
            max_answer: 1 << 20,
        };
        let sigpipe = ExitStatus::from_raw(13);
        let (_, stderr) = mpsc::channel();
        let e = call
            .verdict(sigpipe, vec![b'y'; (1 << 20) + 1], &stderr)
            .unwrap_err();
        assert_eq!(e, CallError::BadResponse("more than 1 MiB".into()));
        // Within the cap, the signal is the reason.
        let e = call.verdict(sigpipe, b"y\n".to_vec(), &stderr).unwrap_err();
        assert!(
            matches!(&e, CallError::Command(m) if m.contains("failed (signal: 13")),
            "{e:?}"
        );
    }
}
