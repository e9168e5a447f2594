//! Hangs, processes and paths (issue 26, points 12 to 14): a hook fed a
//! FIFO returns, a timed-out program takes its children with it, and a
//! link planted at a temporary name never gets written through.

use crate::util::Env;
use std::path::Path;
use std::time::{Duration, Instant};

/// Longer than any of these commands takes when it does not hang.
const HANG: Duration = Duration::from_secs(10);

#[cfg(unix)]
fn mkfifo(path: &Path) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("folder");
    }
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.expect("mkfifo").success(), "mkfifo {path:?}");
}

/// Runs memoir with `stdin`, killed after [`HANG`]: (exit code, stderr);
/// a kill is a test failure, not a wait for ever.
fn run_bounded(env: &Env, args: &[&str], stdin: &str) -> (i32, String) {
    let started = Instant::now();
    let out = env
        .cmd(args)
        .write_stdin(stdin)
        .timeout(HANG)
        .output()
        .expect("run memoir");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        started.elapsed() < HANG && out.status.code().is_some(),
        "memoir {args:?} hung (killed after {HANG:?}): {err}"
    );
    (out.status.code().unwrap_or(-1), err)
}

/// A SessionEnd hook whose transcript is a FIFO nobody writes: memoir
/// refuses it with a warning and exits 0, it never blocks the agent.
#[cfg(unix)]
#[test]
fn note_from_hook_never_blocks_on_a_fifo_transcript() {
    let env = Env::new();
    let fifo = env.dir.path().join("transcript.jsonl");
    mkfifo(&fifo);
    let before = env.snapshot();
    for event in ["SessionEnd", "Stop"] {
        let payload = serde_json::json!({
            "session_id": "8f0c2a4e",
            "transcript_path": fifo,
            "cwd": env.root(),
            "hook_event_name": event,
            "reason": "prompt_input_exit",
        })
        .to_string();
        let (code, err) = run_bounded(&env, &["note", "--from-hook"], &payload);
        assert_eq!(code, 0, "{event}: {err}");
        assert!(
            err.contains("is not a regular file") && err.contains("no note recorded"),
            "{event}: {err}"
        );
    }
    assert_eq!(env.snapshot(), before, "nothing written");
}

/// The importers read every file without blocking: Claude Code's settings
/// in the project (where `import claude-code` looks for its folder) and a
/// topic file in the folder `export claude-code` writes, both FIFOs.
#[cfg(unix)]
#[test]
fn import_and_export_never_block_on_a_fifo() {
    let env = Env::new();
    mkfifo(&env.path(".claude/settings.local.json"));
    let _ = run_bounded(&env, &["import", "claude-code", "--dry-run"], "");

    assert_eq!(
        env.remember("project/deploys", "Deploys on weekdays", &[])
            .0,
        0
    );
    let folder = env.dir.path().join("cc");
    mkfifo(&folder.join("project_deploys.md"));
    let out = folder.to_str().expect("utf-8");
    let (code, err) = run_bounded(&env, &["export", "claude-code", out], "");
    assert_eq!(code, 0, "{err}");
    let topic = std::fs::read_to_string(folder.join("project_deploys.md")).expect("a file now");
    assert!(topic.contains("Deploys on weekdays"), "{topic}");
}

/// Whether the process `pid` is gone (a zombie no one reaped counts: it
/// runs nothing), within a few seconds of its kill.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        // The state follows the command's name in parentheses.
        let state = stat.as_deref().ok().and_then(|s| {
            let (_, rest) = s.rsplit_once(") ")?;
            rest.chars().next()
        });
        if matches!(state, None | Some('Z' | 'X')) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pid a shell wrote to `file`, and a check that it is gone, which
/// kills it first when it is not (a failing test leaves no sleeper).
fn check_gone(file: &Path, what: &str) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{what}: no pid: {e}"));
    let pid: u32 = text.trim().parse().expect("a pid");
    if !gone(pid) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
        panic!("{what}: the program's child {pid} still runs after memoir returned");
    }
}

/// Recall with an embedder `[sh, -c, script]` (`script` gets the path
/// its sleeping child's pid goes to) that memoir gives up on: recall still
/// answers with its keywords, with the stderr it printed; the child is
/// gone once memoir returns.
#[cfg(unix)]
fn recall_giving_up_on(script: impl Fn(&std::path::Path) -> String, what: &str) -> String {
    let env = Env::new();
    assert_eq!(
        env.remember("project/deploys", "Deploys on weekdays", &[])
            .0,
        0
    );
    let pidfile = env.dir.path().join("sleeper.pid");
    let script = script(&pidfile);
    env.write(
        "memory/config.yaml",
        format!(
            "embeddings:\n  command: [sh, -c, {script:?}]\n  model: fake-64\n  timeout_ms: 1500\n"
        ),
    );
    let (code, err) = run_bounded(&env, &["recall", "--", "deploys"], "");
    assert_eq!(code, 0, "{err}");
    check_gone(&pidfile, what);
    err
}

/// `command: [sh, -c, …]` as the docs show it: at the timeout memoir
/// kills the shell and everything the shell started (its process group),
/// not the shell alone; recall still answers with its keywords.
#[cfg(unix)]
#[test]
fn an_embedder_timeout_kills_the_commands_children() {
    let err = recall_giving_up_on(
        |pid| format!("sleep 300 & echo $! > '{}'; wait", pid.display()),
        "embedder timed out",
    );
    assert!(err.contains("1500"), "a timeout warning: {err}");
}

/// A program that exits leaving a child holding its output: memoir gives
/// up on it within the call's time, and the child goes with it.
#[cfg(unix)]
#[test]
fn an_embedder_that_leaves_a_child_running_takes_it_along() {
    recall_giving_up_on(
        |pid| format!("sleep 300 & echo $! > '{}'", pid.display()),
        "embedder left a child",
    );
}

/// `consolidate --extract-cmd` kills an extractor that prints without end
/// together with what it started.
#[cfg(unix)]
#[test]
fn an_extractor_killed_for_its_output_takes_its_children_along() {
    let env = Env::new();
    env.ok(&["note", "the build takes ten minutes"]);
    let pidfile = env.dir.path().join("sleeper.pid");
    // The sleeper's stderr is not the test's: without the fix, the test
    // would otherwise wait on it rather than fail at once.
    let cmd = format!(
        "sleep 300 2>/dev/null & echo $! > '{}'; yes",
        pidfile.display()
    );
    let (code, err) = run_bounded(&env, &["consolidate", "--yes", "--extract-cmd", &cmd], "");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("more than 64 MiB"), "{err}");
    check_gone(&pidfile, "extractor killed");
}

/// Links planted at the temporary names `export claude-code` used (a fixed
/// `.<file>.memoir-tmp`) and at the ones a write names by its pid (`-<pid>`
/// and `-<pid>-<n>`, for the pids the next processes are likely to get):
/// the export writes its files, and the links' target outside the folder
/// is untouched.
#[cfg(unix)]
#[test]
fn export_never_writes_through_a_link_at_a_temporary_name() {
    let env = Env::new();
    assert_eq!(
        env.remember("project/deploys", "Deploys on weekdays", &[])
            .0,
        0
    );
    let folder = env.dir.path().join("cc");
    std::fs::create_dir_all(&folder).expect("folder");
    let outside = env.dir.path().join("outside.txt");
    std::fs::write(&outside, "not memoir's").expect("outside");
    let plant = |name: String| {
        std::os::unix::fs::symlink(&outside, folder.join(name)).expect("link");
    };
    // The pid the next process gets, near enough on a quiet machine.
    let next = std::process::Command::new("true")
        .spawn()
        .map(|mut c| {
            let _ = c.wait();
            c.id()
        })
        .expect("spawn");
    for file in ["project_deploys.md", "MEMORY.md"] {
        plant(format!(".{file}.memoir-tmp"));
        for pid in next..next + 200 {
            plant(format!(".{file}.memoir-{pid}"));
            for n in 0..4 {
                plant(format!(".{file}.memoir-{pid}-{n}"));
            }
        }
    }
    let out = folder.to_str().expect("utf-8");
    let (code, err) = run_bounded(&env, &["export", "claude-code", out], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "not memoir's"
    );
    for file in ["project_deploys.md", "MEMORY.md"] {
        let meta = std::fs::symlink_metadata(folder.join(file)).expect(file);
        assert!(meta.is_file(), "{file} is a regular file");
    }
    let index = std::fs::read_to_string(folder.join("MEMORY.md")).expect("index");
    assert!(index.contains("project_deploys.md"), "{index}");
}
