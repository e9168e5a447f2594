//! The programs memoir runs (an embedder, a reranker, an extractor), each
//! in a process group of its own, so that giving up on one takes down
//! everything it started: the documented `[sh, -c, 'curl …']` is a shell
//! whose curl would otherwise outlive its killed shell, and memoir.
//!
//! Memoir gives up on a program when its time is up, when it prints more
//! than its cap, or when it exits leaving a child that holds its output.
//! A program that exits cleanly keeps what it started: a helper it leaves
//! running on purpose (a local model server) is its own business.

use std::io;
use std::process::{Child, Command};

/// Starts `command` as the leader of a new process group (on unix; a
/// plain spawn elsewhere).
pub fn spawn(command: &mut Command) -> io::Result<Child> {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    command.spawn()
}

/// Kills `child`'s whole process group, then `child` itself, and reaps it
/// so that no zombie outlives the call. Also after `child` was reaped: a
/// group outlives its leader while a member runs, and its id is not given
/// to another process meanwhile.
pub fn kill(child: &mut Child) {
    #[cfg(unix)]
    {
        use rustix::process::{kill_process_group, Pid, Signal};
        let group = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
        // Never -1 (every process memoir may signal), whatever the id.
        if let Some(group) = group.filter(|g| *g != Pid::INIT) {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn running(pid: u32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").and_then(|(_, r)| r.chars().next());
        !matches!(state, None | Some('Z' | 'X'))
    }

    #[test]
    fn kill_takes_the_grandchildren_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 60 & echo $! > '{}'; wait", pidfile.display());
        let mut child = spawn(Command::new("sh").args(["-c", &script])).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let pid = loop {
            let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
            if let Ok(pid) = text.trim().parse::<u32>() {
                break pid;
            }
            assert!(Instant::now() < deadline, "no pid");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(running(pid));
        kill(&mut child);
        let deadline = Instant::now() + Duration::from_secs(3);
        while running(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!running(pid), "the shell's child {pid} survived");
    }
}
