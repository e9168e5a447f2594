//! `memoir watch`: freshness from a resident process. Every change a
//! query must see (a hand edit, a checkout, a pull, a rebase) is seen by
//! the next `recall` and `context` with the watcher running, with it
//! killed halfway, and without it; a lost notification (an overflowed
//! queue) makes the next query scan, and then the watcher recovers.

use crate::util::{path_with_memoir, Env};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `memoir watch` child of the test.
struct Watcher {
    child: Child,
}

impl Watcher {
    /// Starts the store's watcher (with `env` added to its environment)
    /// and waits until queries use it.
    fn start(env: &Env, extra: &[(&str, &str)]) -> Watcher {
        let home = env.dir.path().join("home");
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("memoir"));
        cmd.arg("watch")
            .current_dir(env.root())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("MEMOIR_NOW", &env.now)
            .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let w = Watcher {
            child: cmd.spawn().expect("memoir watch"),
        };
        wait_until(|| query(env, &["recall", "--", "anything"]).1 == 1);
        w
    }

    /// Kills it with SIGKILL: its socket stays behind, no one answering.
    fn kill_9(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// Stops it with SIGTERM and returns its exit code and stderr.
    fn terminate(mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(ok.success());
        let status = self.child.wait().expect("wait");
        let mut err = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            use std::io::Read;
            pipe.read_to_string(&mut err).expect("stderr");
        }
        (status.code(), err)
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `done` for up to 20 s.
fn wait_until(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs a query with MEMOIR_DEBUG_STATS: its stdout, whether the
/// watcher's answer was used (`watched`), and how many memory files were
/// stat'ed (`listed`).
fn query(env: &Env, args: &[&str]) -> (String, usize, usize) {
    let out = env
        .cmd(args)
        .env("MEMOIR_DEBUG_STATS", "1")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {err}");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("memoir: stats: "))
        .unwrap_or_else(|| panic!("no stats in {err}"));
    let count = |name: &str| -> usize {
        line.split(", ")
            .find_map(|p| p.strip_prefix(name))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        count("watched: "),
        count("listed: "),
    )
}

/// A query made just after one edit took the watcher's answer and stat'ed
/// that one file (none, when the machine was so slow that the watcher had
/// already refreshed the index after half a second of quiet).
fn assert_one_stat(edited: Instant, watched: usize, listed: usize) {
    assert_eq!(watched, 1);
    if edited.elapsed() < Duration::from_millis(450) {
        assert_eq!(listed, 1);
    } else {
        assert!(listed <= 1, "{listed}");
    }
}

/// How the watcher runs through a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Without,
    Running,
    KilledMidRun,
}

/// What the next queries see, and how many of them used the watcher.
struct Seer<'a> {
    env: &'a Env,
    watched: usize,
}

impl Seer<'_> {
    /// The keys `recall` finds for `q`; `context` injects the first.
    fn keys(&mut self, q: &str) -> Vec<String> {
        let (out, watched, _) = query(self.env, &["--json", "recall", "--", q]);
        self.watched += watched;
        let v: Value = serde_json::from_str(&out).expect("json");
        let keys: Vec<String> = v["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .filter(|h| h["relevant"] == true)
            .map(|h| h["key"].as_str().expect("key").to_string())
            .collect();
        let (ctx, watched, _) = query(self.env, &["context", "--", q]);
        self.watched += watched;
        match keys.first() {
            Some(k) => assert!(ctx.contains(k.as_str()), "context {q}: {ctx}"),
            None => assert!(ctx.is_empty(), "context {q}: {ctx}"),
        }
        keys
    }
}

/// A hand edit, a checkout, a pull and a rebase, each seen by the next
/// recall and context.
fn freshness(mode: Mode) {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    assert_eq!(env.remember("project/ci", "CI runs on circleci", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "first"]);
    let bob = Bob::clone_of(&env);
    let mut watcher = (mode != Mode::Without).then(|| Watcher::start(&env, &[]));
    let mut see = Seer {
        env: &env,
        watched: 0,
    };
    assert_eq!(see.keys("circleci"), ["project/ci"]);
    // A hand edit.
    let rel = "memory/project/ci.md";
    env.write(rel, env.read(rel).replace("circleci", "travis"));
    assert_eq!(see.keys("travis"), ["project/ci"], "{mode:?}");
    assert!(see.keys("circleci").is_empty(), "{mode:?}");
    env.git(&["checkout", "-q", "--", rel]);
    assert_eq!(see.keys("circleci"), ["project/ci"], "{mode:?}");
    // A checkout of another revision and back.
    assert_eq!(
        env.remember("project/ci", "CI runs on buildkite", &["--replace"])
            .0,
        0
    );
    assert_eq!(env.remember("project/cdn", "The cdn is fastly", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "second"]);
    assert_eq!(see.keys("buildkite"), ["project/ci"], "{mode:?}");
    env.git(&["checkout", "-q", "HEAD~1"]);
    assert!(see.keys("buildkite").is_empty(), "{mode:?}");
    assert_eq!(see.keys("circleci"), ["project/ci"], "{mode:?}");
    assert!(see.keys("fastly").is_empty(), "{mode:?}");
    env.git(&["checkout", "-q", "main"]);
    assert_eq!(see.keys("fastly"), ["project/cdn"], "{mode:?}");
    if mode == Mode::KilledMidRun {
        if let Some(w) = watcher.take() {
            w.kill_9();
        }
    }
    env.git(&["push", "-q", "origin", "main"]);
    // A pull (a fast-forward) of what another clone remembered.
    bob.remember(&env, "project/queue", "The queue is rabbitmq");
    let (ok, out) = git_with_memoir(&env, &["pull", "-q", "--no-rebase"]);
    assert!(ok, "{out}");
    assert_eq!(see.keys("rabbitmq"), ["project/queue"], "{mode:?}");
    // A rebase of a local commit onto another clone's.
    bob.remember(&env, "project/cache", "The cache is redis");
    assert_eq!(env.remember("project/db", "The db is postgres", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "ours"]);
    let (ok, out) = git_with_memoir(&env, &["pull", "-q", "--rebase"]);
    assert!(ok, "{out}");
    assert_eq!(see.keys("redis"), ["project/cache"], "{mode:?}");
    assert_eq!(see.keys("postgres"), ["project/db"], "{mode:?}");
    env.ok(&["check"]);
    match mode {
        Mode::Without => assert_eq!(see.watched, 0),
        // Running, most queries took the watcher's answer (one that timed
        // out on a loaded machine scans, which is as correct).
        Mode::Running => assert!(see.watched >= 18, "{mode:?}: {} answers", see.watched),
        Mode::KilledMidRun => assert!(see.watched > 0, "{mode:?}: never asked"),
    }
    drop(watcher);
}

/// Another clone of the same origin, which remembers and pushes.
struct Bob {
    dir: std::path::PathBuf,
}

impl Bob {
    fn clone_of(env: &Env) -> Bob {
        let origin = env.dir.path().join("origin.git");
        let dir = env.dir.path().join("bob");
        let origin_s = origin.to_str().expect("utf8");
        env.git(&["clone", "-q", "--bare", ".", origin_s]);
        env.git(&["remote", "add", "origin", origin_s]);
        env.git(&["fetch", "-q", "origin"]);
        env.git(&["branch", "-q", "--set-upstream-to", "origin/main"]);
        env.git(&["clone", "-q", origin_s, dir.to_str().expect("utf8")]);
        let bob = Bob { dir };
        bob.memoir(env, &["hooks", "install"]);
        bob
    }

    fn memoir(&self, env: &Env, args: &[&str]) {
        let out = env.cmd(args).current_dir(&self.dir).output().expect("run");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn git(&self, env: &Env, args: &[&str]) {
        let home = env.dir.path().join("home");
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.dir)
            .env("PATH", path_with_memoir())
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .env("MEMOIR_NOW", &env.now)
            .env("MEMOIR_ACTOR", "Bob <bob@example.com>")
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Remembers, commits and pushes (pulling first).
    fn remember(&self, env: &Env, key: &str, description: &str) {
        self.git(env, &["pull", "-q", "--no-rebase"]);
        self.memoir(env, &["remember", key, "-d", description, "-s", "bob"]);
        self.git(env, &["add", "-A"]);
        self.git(env, &["commit", "-qm", key]);
        self.git(env, &["push", "-q", "origin", "main"]);
    }
}

fn git_with_memoir(env: &Env, args: &[&str]) -> (bool, String) {
    let home = env.dir.path().join("home");
    let out = Command::new("git")
        .args(args)
        .current_dir(env.root())
        .env("PATH", path_with_memoir())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
        .env("MEMOIR_NOW", &env.now)
        .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
        .output()
        .expect("git");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn changes_are_seen_without_a_watcher() {
    freshness(Mode::Without);
}

#[test]
fn changes_are_seen_with_the_watcher_running() {
    freshness(Mode::Running);
}

#[test]
fn changes_are_seen_with_the_watcher_killed_mid_run() {
    freshness(Mode::KilledMidRun);
}

#[test]
fn a_query_with_the_watcher_stats_only_what_changed() {
    let env = Env::new();
    for i in 0..30 {
        let d = format!("memory number {i} about the kiln");
        assert_eq!(env.remember(&format!("project/m{i}"), &d, &[]).0, 0);
    }
    let (_, watched, listed) = query(&env, &["recall", "kiln"]);
    assert_eq!((watched, listed), (0, 30), "without it, every file");
    let _w = Watcher::start(&env, &[]);
    // Once the watcher has saved the index with its token: nothing to stat.
    wait_until(|| query(&env, &["recall", "kiln"]).2 == 0);
    let rel = "memory/project/m7.md";
    let edited = Instant::now();
    env.write(rel, env.read(rel).replace("the kiln", "the furnace"));
    let (out, watched, listed) = query(&env, &["recall", "furnace"]);
    assert!(out.contains("project/m7"), "{out}");
    assert_one_stat(edited, watched, listed);
}

#[test]
fn a_dropped_notification_makes_the_next_query_scan_and_the_watcher_recovers() {
    let env = Env::new();
    for i in 0..5 {
        let d = format!("memory number {i} about the kiln");
        assert_eq!(env.remember(&format!("project/m{i}"), &d, &[]).0, 0);
    }
    // The first event under memory/ is lost, as in an overflowed queue.
    let _w = Watcher::start(&env, &[("MEMOIR_WATCH_OVERFLOW", "1")]);
    let rel = "memory/project/m3.md";
    let edited = Instant::now();
    env.write(rel, env.read(rel).replace("the kiln", "the furnace"));
    // The watcher cannot vouch for what changed: the query scans, and
    // sees the edit all the same.
    let (out, watched, listed) = query(&env, &["recall", "furnace"]);
    assert!(out.contains("project/m3"), "{out}");
    // (Unless the machine was so slow that the watcher, after half a
    // second of quiet, had already refreshed the index under its new
    // generation: then the answer is short, and as right.)
    if edited.elapsed() < Duration::from_millis(450) {
        assert_eq!((watched, listed), (0, 5), "the full scan");
    }
    // The watcher refreshes the index under a new generation; queries use
    // it again and still see every edit.
    wait_until(|| query(&env, &["recall", "furnace"]).1 == 1);
    env.write(rel, env.read(rel).replace("the furnace", "the oven"));
    let (out, watched, _) = query(&env, &["recall", "oven"]);
    assert!(out.contains("project/m3"), "{out}");
    assert_eq!(watched, 1);
    let (out, _, _) = query(&env, &["recall", "furnace"]);
    assert!(!out.contains("project/m3"), "{out}");
}

#[test]
fn the_watcher_stops_on_sigterm_refuses_a_second_and_takes_over_a_stale_socket() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha kiln", &[]).0, 0);
    let sock = env.state_dir().join("watch/sock");
    let w = Watcher::start(&env, &[]);
    assert!(sock.exists());
    // A second watcher of the same store is refused (busy).
    let err = env.fails(&["watch"], 5);
    assert!(err.contains("already runs"), "{err}");
    let (code, err) = w.terminate();
    assert_eq!((code, err.as_str()), (Some(0), ""), "quiet, clean");
    assert!(!sock.exists(), "its socket removed");
    // Killed, it leaves its socket; queries scan, and a new watcher
    // takes the socket over.
    let w = Watcher::start(&env, &[]);
    w.kill_9();
    assert!(sock.exists(), "a stale socket");
    let (out, watched, listed) = query(&env, &["recall", "alpha"]);
    assert!(out.contains("project/a"), "{out}");
    assert_eq!((watched, listed), (0, 1));
    let w = Watcher::start(&env, &[]);
    let (code, _) = w.terminate();
    assert_eq!(code, Some(0));
}

/// A watcher whose socket is removed (`rm -rf .git/memoir`) stops by
/// itself, saying why, and never removes the socket a new watcher bound
/// at the same path since; stopping it never hangs.
#[test]
fn a_watcher_whose_socket_is_removed_stops_and_leaves_the_next_ones_alone() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha kiln", &[]).0, 0);
    let sock = env.state_dir().join("watch/sock");
    // SIGTERM after its socket is gone: it hung in accept.
    let w = Watcher::start(&env, &[]);
    std::fs::remove_file(&sock).expect("rm sock");
    let (code, _) = w.terminate();
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    // Left running after its socket is gone, it stops by itself, and a
    // new watcher's socket survives the old one.
    let mut old = Watcher::start(&env, &[]);
    std::fs::remove_dir_all(env.path(".git/memoir")).expect("rm state");
    let _ = query(&env, &["recall", "alpha"]);
    let new = Watcher::start(&env, &[]);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = old.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the old watcher runs on"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1), "{status:?}");
    let mut err = String::new();
    if let Some(mut pipe) = old.child.stderr.take() {
        use std::io::Read;
        pipe.read_to_string(&mut err).expect("stderr");
    }
    assert!(err.contains("socket was removed"), "{err}");
    let sock = env.state_dir().join("watch/sock");
    assert!(
        sock.exists(),
        "the new watcher's socket survives the old one"
    );
    assert_eq!(query(&env, &["recall", "alpha"]).1, 1, "and answers");
    let (code, _) = new.terminate();
    assert_eq!(code, Some(0));
}

#[test]
fn folders_made_moved_and_removed_under_memory_are_seen() {
    let env = Env::new();
    for (k, d) in [("project/a", "alpha kiln"), ("project/b", "beta kiln")] {
        assert_eq!(env.remember(k, d, &[]).0, 0);
    }
    let _w = Watcher::start(&env, &[]);
    let keys = |q: &str| -> Vec<String> {
        let (out, _, _) = query(&env, &["--json", "recall", "--", q]);
        let v: Value = serde_json::from_str(&out).expect("json");
        v["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["key"].as_str().expect("key").to_string())
            .collect()
    };
    // A scope's folder moved away and back: the watcher cannot tell its
    // files one by one, so queries scan until it has refreshed.
    let aside = env.dir.path().join("aside");
    std::fs::rename(env.path("memory/project"), &aside).expect("mv");
    assert!(keys("kiln").is_empty());
    std::fs::rename(&aside, env.path("memory/project")).expect("mv back");
    assert_eq!(keys("kiln"), ["project/a", "project/b"]);
    // A folder made with files already in it (copied in whole).
    std::fs::create_dir(&aside).expect("mkdir");
    std::fs::write(
        aside.join("c.md"),
        env.read("memory/project/a.md")
            .replace("name: a", "name: c")
            .replace("alpha kiln", "gamma furnace"),
    )
    .expect("write");
    std::fs::remove_dir_all(env.path("memory/task")).ok();
    std::fs::rename(&aside, env.path("memory/task")).expect("mv in");
    assert_eq!(keys("furnace"), ["task/c"]);
    wait_until(|| query(&env, &["recall", "kiln"]).1 == 1);
    assert_eq!(keys("furnace"), ["task/c"]);
    // The next day's log folder, made by a write.
    let (code, _, err) = {
        let out = env
            .cmd(&["remember", "project/d", "-d", "delta oven", "-s", "t"])
            .env("MEMOIR_NOW", "2026-11-30T08:00:00Z")
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(keys("oven"), ["project/d"]);
    let (_, watched, _) = query(&env, &["recall", "oven"]);
    assert_eq!(watched, 1, "the new day's folder is watched");
}

#[test]
fn the_mcp_server_watches_the_store_while_it_runs() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha kiln", &[]).0, 0);
    let home = env.dir.path().join("home");
    let mut mcp = Command::new(assert_cmd::cargo::cargo_bin("memoir"))
        .arg("mcp")
        .current_dir(env.root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("MEMOIR_NOW", &env.now)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("memoir mcp");
    // The session's hooks, other processes, take its answers.
    wait_until(|| query(&env, &["recall", "kiln"]).1 == 1);
    let rel = "memory/project/a.md";
    let edited = Instant::now();
    env.write(rel, env.read(rel).replace("alpha kiln", "alpha oven"));
    let (out, watched, listed) = query(&env, &["recall", "oven"]);
    assert!(out.contains("project/a"), "{out}");
    assert_one_stat(edited, watched, listed);
    // The end of its input ends it, and its watcher with it.
    drop(mcp.stdin.take());
    let status = mcp.wait().expect("wait");
    assert!(status.success());
    assert!(!env.state_dir().join("watch/sock").exists());
}
