//! Puts the git revision into `memoir --version` (`0.1.0 (rev 1a2b3c4d5e6f)`).
//!
//! Reads `.git` as files instead of running `git`: the build needs no git
//! binary, and a source tree without `.git` (a crates.io package, a
//! tarball) still builds, as plain `0.1.0`.

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let shown = match revision(&manifest.join(".git")) {
        Some(rev) => format!("{version} (rev {rev})"),
        None => version,
    };
    println!("cargo:rustc-env=MEMOIR_VERSION={shown}");
}

/// The commit HEAD names, 12 hex digits, telling cargo to build again when it moves.
fn revision(dot_git: &Path) -> Option<String> {
    // A worktree's `.git` is a file naming the real git directory.
    let git_dir = if dot_git.is_file() {
        let text = fs::read_to_string(dot_git).ok()?;
        let dir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
        if dir.is_absolute() {
            dir
        } else {
            dot_git.parent()?.join(dir)
        }
    } else {
        dot_git.to_path_buf()
    };
    let head_path = git_dir.join("HEAD");
    println!("cargo:rerun-if-changed={}", head_path.display());
    let head = fs::read_to_string(&head_path).ok()?;
    let head = head.trim();
    let hash = match head.strip_prefix("ref:") {
        None => head.to_string(),
        Some(name) => resolve(&git_dir, name.trim())?,
    };
    let ok = hash.len() >= 12 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| hash[..12].to_string())
}

/// A branch's commit: its loose ref file, else its line in packed-refs. A
/// worktree keeps its branches in the common git directory.
fn resolve(git_dir: &Path, name: &str) -> Option<String> {
    let common = fs::read_to_string(git_dir.join("commondir"))
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|_| git_dir.to_path_buf());
    for dir in [git_dir, common.as_path()] {
        let loose = dir.join(name);
        println!("cargo:rerun-if-changed={}", loose.display());
        if let Ok(text) = fs::read_to_string(&loose) {
            return Some(text.trim().to_string());
        }
    }
    let packed = common.join("packed-refs");
    println!("cargo:rerun-if-changed={}", packed.display());
    let text = fs::read_to_string(packed).ok()?;
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(_, n)| *n == name)
        .map(|(hash, _)| hash.to_string())
}
