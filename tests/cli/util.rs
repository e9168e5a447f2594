//! A pinned environment for driving the binary.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A temporary git repository with a memoir store in it.
pub struct Env {
    pub dir: TempDir,
    pub now: String,
}

/// What a command says it read (MEMOIR_DEBUG_STATS).
#[derive(Debug)]
pub struct Stats {
    /// Memory files read.
    pub read: usize,
    /// Memory files listed with their stamps.
    pub listed: usize,
    /// Full replays of the logs.
    pub replays: usize,
}

impl Env {
    /// A fresh repository with `memoir init` run.
    pub fn new() -> Env {
        let env = Env::bare();
        env.ok(&["init"]);
        env
    }

    /// A fresh empty directory (no repository, no store).
    pub fn bare() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::fs::write(
            dir.path().join("home/gitconfig"),
            "[user]\n\tname = Ada\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n",
        )
        .expect("gitconfig");
        std::fs::create_dir_all(dir.path().join("repo")).expect("repo");
        Env {
            dir,
            now: "2026-11-29T10:41:07Z".into(),
        }
    }

    /// The repository's work tree (the store's root).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// A path in the work tree.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// The store's local state folder (`.git/memoir/stores/<hash>`), which
    /// a first write creates.
    pub fn state_dir(&self) -> PathBuf {
        std::fs::read_dir(self.path(".git/memoir/stores"))
            .expect("stores")
            .next()
            .expect("one store")
            .expect("entry")
            .path()
    }

    /// Pins the environment of `cmd` (any program) as for memoir.
    pub fn pin(&self, cmd: &mut Command) {
        let home = self.dir.path().join("home");
        cmd.current_dir(self.root())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("MEMOIR_NOW", &self.now)
            .env("MEMOIR_ACTOR", "Ada <ada@example.com>");
    }

    /// `memoir <args>`, ready to run.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::cargo_bin("memoir").expect("binary");
        self.pin(&mut cmd);
        cmd.args(args);
        cmd
    }

    /// Runs memoir stopped at `failpoint` (a debug build's simulated crash,
    /// `src/store/failpoint.rs`): what it did.
    pub fn at_failpoint(&self, failpoint: &str, args: &[&str]) -> std::process::Output {
        self.cmd(args)
            .env("MEMOIR_FAILPOINT", failpoint)
            .output()
            .expect("run")
    }

    /// Runs memoir (which must succeed, or exit 4) with MEMOIR_DEBUG_STATS
    /// and returns what it says it read.
    pub fn stats(&self, args: &[&str]) -> Stats {
        let out = self
            .cmd(args)
            .env("MEMOIR_DEBUG_STATS", "1")
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success() || out.status.code() == Some(4),
            "{args:?}: {err}"
        );
        let line = err
            .lines()
            .find_map(|l| l.strip_prefix("memoir: stats: "))
            .unwrap_or_else(|| panic!("no stats in {err}"));
        let count = |name: &str| -> usize {
            line.split(", ")
                .find_map(|part| part.strip_prefix(name))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("no `{name}` in {line}"))
        };
        Stats {
            read: count("memory files read: "),
            listed: count("listed: "),
            replays: count("log replays: "),
        }
    }

    /// Runs memoir and returns (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.cmd(args).output().expect("run memoir");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs memoir, asserting exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(
            code, 0,
            "memoir {args:?} failed\nstdout:\n{out}\nstderr:\n{err}"
        );
        out
    }

    /// Runs memoir, asserting the exit code; returns stderr.
    pub fn fails(&self, args: &[&str], expected: i32) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(
            code, expected,
            "memoir {args:?}: expected exit {expected}\nstdout:\n{out}\nstderr:\n{err}"
        );
        assert!(!err.contains("panicked"), "panic: {err}");
        err
    }

    /// `git <args>` in the work tree, whatever its exit.
    pub fn git_output(&self, args: &[&str]) -> std::process::Output {
        let home = self.dir.path().join("home");
        std::process::Command::new("git")
            .current_dir(self.root())
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(args)
            .output()
            .expect("git")
    }

    /// `git <args>` in the work tree, which must succeed; returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `memoir remember <key>` with a description and a source.
    pub fn remember(&self, key: &str, description: &str, extra: &[&str]) -> (i32, String, String) {
        let description = format!("--description={description}");
        let mut args = vec![
            "remember",
            key,
            &description,
            "--source",
            "stated by the user",
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// How many proposals wait, per `memoir status`.
    pub fn pending_proposals(&self) -> usize {
        let status: serde_json::Value =
            serde_json::from_str(&self.ok(&["--json", "status"])).expect("json");
        status["proposals"].as_array().map_or(0, Vec::len)
    }

    /// Asserts that `git status` shows nothing of the store.
    pub fn assert_store_committed(&self, context: &str) {
        let status = self.git(&["status", "--porcelain"]);
        assert!(
            !status
                .lines()
                .any(|l| l.contains("memory/") || l.contains("MEMORY.md")),
            "{context}: {status}"
        );
    }

    /// Reads a work-tree file.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Writes a work-tree file.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }

    /// Every file under the store (relative path, bytes), sorted.
    pub fn snapshot(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let root = self.root();
        for e in walkdir::WalkDir::new(root.join("memory")).sort_by_file_name() {
            let e = e.expect("walk");
            if e.file_type().is_file() {
                let rel = e
                    .path()
                    .strip_prefix(&root)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read(e.path()).expect("read")));
            }
        }
        out.push((
            "MEMORY.md".into(),
            std::fs::read(root.join("MEMORY.md")).unwrap_or_default(),
        ));
        out
    }

    /// Every event line (metadata) of every log.
    pub fn log_text(&self) -> String {
        let mut text = String::new();
        for (rel, bytes) in self.snapshot() {
            if rel.starts_with("memory/log/") && rel.ends_with(".md") {
                text.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
        text
    }

    /// Deletes every memory file (not the logs).
    pub fn delete_memory_files(&self) {
        for f in self.memory_files() {
            std::fs::remove_file(self.path(&f)).expect("rm");
        }
    }

    /// The path of this writer's first log file.
    pub fn first_log(&self) -> String {
        self.snapshot()
            .into_iter()
            .map(|(p, _)| p)
            .find(|p| p.starts_with("memory/log/2") && p.ends_with(".md"))
            .expect("a log file")
    }

    /// Starts `program args` in the work tree with the pinned environment
    /// (without pinning the clock), stdout discarded.
    pub fn spawn(
        &self,
        program: &Path,
        args: &[&str],
        vars: &[(&str, String)],
    ) -> std::process::Child {
        let home = self.dir.path().join("home");
        let mut c = std::process::Command::new(program);
        c.args(args)
            .current_dir(self.root())
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
            .stdout(std::process::Stdio::null());
        for (k, v) in vars {
            c.env(k, v);
        }
        c.spawn().expect("spawn")
    }

    /// Memory files (not logs), relative paths.
    pub fn memory_files(&self) -> Vec<String> {
        self.snapshot()
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| {
                p.starts_with("memory/") && !p.starts_with("memory/log/") && p.ends_with(".md")
            })
            .collect()
    }
}

/// Does the path exist (without following a link)?
pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// An event by Bob, another writer, at 2026-11-29T11:00:00Z.
pub fn bobs_event(
    op: memoir::model::event::Op,
    key: &str,
    prev: Vec<String>,
    body: String,
) -> memoir::model::event::Event {
    let time = memoir::model::time::Timestamp::parse("2026-11-29T11:00:00Z").expect("time");
    memoir::model::event::Event {
        id: memoir::model::event::new_id(time).expect("id"),
        op,
        time,
        actor: "Bob <bob@example.com>".into(),
        key: Some(memoir::model::key::Key::parse(key).expect("key").0),
        prev,
        reason: None,
        consumed: vec![],
        redacted: None,
        body,
    }
}

/// A store where project/db forked: ours says "Postgres 16 here", Bob's
/// branch said "MySQL 8 there" (source: bob), both made from "Postgres 15".
/// Returns the store and Bob's event id.
pub fn forked() -> (Env, String) {
    let env = Env::new();
    let out = env
        .cmd(&[
            "--json",
            "remember",
            "project/db",
            "-d",
            "Postgres 15",
            "-s",
            "s",
        ])
        .output()
        .expect("run");
    let base: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let base = base["id"].as_str().expect("id").to_string();
    assert_eq!(
        env.remember("project/db", "Postgres 16 here", &["--replace"])
            .0,
        0
    );
    let theirs = env
        .read("memory/project/db.md")
        .replace("Postgres 16 here", "MySQL 8 there")
        .replace("source: stated by the user", "source: bob");
    let event = bobs_event(
        memoir::model::event::Op::Remember,
        "project/db",
        vec![base],
        theirs,
    );
    env.write("memory/log/2026-11-29/bob-0badc0de.md", event.render());
    env.ok(&["rebuild"]);
    (env, event.id)
}

/// PATH with the memoir under test first, as hooks and scripts find it.
pub fn path_with_memoir() -> String {
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let dir = exe
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}
