//! A scratch repository for the tests beside the code, with the git CLI as
//! the oracle. Everything is pinned: git runs with an empty environment but
//! for `PATH`, a fresh `HOME`, no global or system config and fixed
//! identities and dates; gix opens the repository isolated, reading only
//! its own config. The user's setup cannot change a result.

#![cfg(test)]

use super::Repo;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The pinned author and committer.
pub(super) const NAME: &str = "Ada";
/// The pinned author's and committer's email.
pub(super) const EMAIL: &str = "ada@example.com";
/// The pinned author and commit date, seconds since the epoch.
pub(super) const SECONDS: i64 = 1_767_323_045;

/// A temporary repository (`repo/`, branch `main`) and its home.
pub(super) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A new repository with nothing committed.
    pub(super) fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::fs::create_dir_all(dir.path().join("repo")).expect("repo");
        let scratch = Scratch { dir };
        scratch.git(&["init", "-q", "-b", "main"]);
        scratch
    }

    /// The work tree's root.
    pub(super) fn root(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    /// Writes `rel` (creating its folders).
    pub(super) fn write(&self, rel: &str, contents: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write");
    }

    /// Removes the file `rel`.
    pub(super) fn remove(&self, rel: &str) {
        std::fs::remove_file(self.root().join(rel)).expect("rm");
    }

    /// Makes `rel` executable.
    pub(super) fn make_executable(&self, rel: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.root().join(rel);
        let mut perms = std::fs::metadata(&path).expect("stat").permissions();
        perms.set_mode(0o755);
        std::fs::set_permissions(&path, perms).expect("chmod");
    }

    /// The pinned `git` command, in the work tree.
    pub(super) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        let date = format!("{SECONDS} +0000");
        cmd.current_dir(self.root())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .env("GIT_AUTHOR_NAME", NAME)
            .env("GIT_AUTHOR_EMAIL", EMAIL)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_NAME", NAME)
            .env("GIT_COMMITTER_EMAIL", EMAIL)
            .env("GIT_COMMITTER_DATE", &date)
            .args(args);
        cmd
    }

    /// `git <args>`, whatever its exit.
    pub(super) fn git_output(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("git")
    }

    /// `git <args>`, which must succeed; its stdout.
    pub(super) fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `git <args>` fed `stdin`, which must succeed; its stdout.
    pub(super) fn git_with_input(&self, args: &[&str], stdin: &[u8]) -> String {
        use std::io::Write;
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("feed git");
        let out = child.wait_with_output().expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The repository as memoir opens it, but isolated from the user's
    /// config and environment.
    pub(super) fn repo(&self) -> Repo {
        open_isolated(&self.root())
    }
}

/// The repository at `root`, reading only its own config.
pub(super) fn open_isolated(root: &Path) -> Repo {
    let repo = gix::open_opts(root, gix::open::Options::isolated()).expect("open");
    Repo::from_gix(repo).expect("a work tree")
}
