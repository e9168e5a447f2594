//! One way to replace a file (`fs::replace`, issue 27 point 5): what a
//! replacement killed before its rename leaves is cleaned where memoir
//! wrote it, so `git add -A` picks up nothing of it; and two processes
//! replacing the same file never share a temporary file.

use crate::util::{bobs_event, Env};
use std::collections::BTreeSet;

/// A store whose committed log holds a password Bob's tool wrote around
/// the policy: what `redact` is for.
fn leaked() -> Env {
    let env = Env::new();
    let secret = ["Tr0ub4dor3x", "Kq9zW"].concat();
    let body = format!(
        "---\nname: db\ndescription: the db\ntype: project\nsource: bob\n---\n\npassword = {secret}\n"
    );
    let event = bobs_event(
        memoir::model::event::Op::Remember,
        "project/db",
        vec![],
        body,
    );
    env.write("memory/log/2026-11-29/bob-0badc0de.md", event.render());
    env.ok(&["rebuild"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "leaked"]);
    env
}

/// The paths `git add -A` stages now, as git names them, this clone's
/// writer id in its log's name as `<writer>` (each clone has its own).
fn staged_by_add_all(env: &Env) -> BTreeSet<String> {
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    let writer = status["writer"].as_str().expect("writer").to_string();
    env.git(&["add", "-A"]);
    env.git(&["diff", "--cached", "--name-only", "-z"])
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(|p| p.replace(&writer, "<writer>"))
        .collect()
}

/// Files whose name is a temporary file's of `fs::replace`, anywhere
/// under `dir`.
fn temporaries(dir: &std::path::Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".memoir-"))
        .map(|e| e.path().display().to_string())
        .collect()
}

/// Runs `redact` in `env`, killed (SIGKILL, by its own failpoint) after it
/// wrote the log's temporary file and before its rename.
#[cfg(unix)]
fn redact_killed_before_its_rename(env: &Env) {
    use std::os::unix::process::ExitStatusExt;
    let out = env.at_failpoint("killed-before-rename", &["redact"]);
    assert_eq!(out.status.signal(), Some(9), "{out:?}");
}

#[cfg(unix)]
#[test]
fn a_redact_killed_before_its_rename_leaves_nothing_git_add_all_picks_up() {
    // What a redaction never interrupted leaves for `git add -A`.
    let clean = leaked();
    clean.ok(&["redact"]);
    let expected = staged_by_add_all(&clean);
    assert!(
        expected.contains("memory/log/2026-11-29/bob-0badc0de.md"),
        "{expected:?}"
    );

    let env = leaked();
    redact_killed_before_its_rename(&env);
    // The kill left the log's temporary file beside it, whole.
    let left = temporaries(&env.path("memory/log"));
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].contains("/memory/log/2026-11-29/.bob-0badc0de.md.memoir-"),
        "{left:?}"
    );
    // Straight after the kill, before memoir runs again, git ignores it
    // (the clone's `info/exclude`): `git add -A` stages nothing of it.
    env.git(&["add", "-A"]);
    let staged = env.git(&["diff", "--cached", "--name-only"]);
    assert!(!staged.contains(".memoir-"), "{staged}");
    env.git(&["reset", "-q"]);
    // The next redaction finishes it, and cleans what the kill left.
    env.ok(&["redact"]);
    assert_eq!(staged_by_add_all(&env), expected);
    assert_eq!(temporaries(&env.path("memory")), Vec::<String>::new());
    env.ok(&["check"]);
}

#[cfg(unix)]
#[test]
fn rebuild_cleans_what_a_killed_redact_left_beside_a_log() {
    let env = leaked();
    redact_killed_before_its_rename(&env);
    assert_eq!(temporaries(&env.path("memory/log")).len(), 1);
    env.ok(&["rebuild"]);
    let staged = staged_by_add_all(&env);
    assert!(staged.iter().all(|p| !p.contains(".memoir-")), "{staged:?}");
    assert_eq!(temporaries(&env.path("memory")), Vec::<String>::new());
}

#[test]
fn concurrent_hooks_installs_never_share_a_temporary_file() {
    let env = Env::new();
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    // Each install replaces three hooks and, twice, git's config: 16 at
    // once overlap in every one of them.
    let children: Vec<_> = (0..16)
        .map(|_| env.spawn(&exe, &["hooks", "install"], &[]))
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    for (driver, command) in [
        ("memoir", "memoir merge-driver memory %O %A %B %P"),
        ("memoir-index", "memoir merge-driver index %O %A %B %P"),
    ] {
        let key = format!("merge.{driver}.driver");
        assert_eq!(env.git(&["config", "--get-all", &key]).trim(), command);
    }
    for hook in ["pre-commit", "post-merge", "post-rewrite"] {
        let text = env.read(&format!(".git/hooks/{hook}"));
        assert_eq!(text.matches("# memoir:start").count(), 1, "{hook}: {text}");
    }
    assert_eq!(temporaries(&env.path(".git")), Vec::<String>::new());
    // And the installs agree with one alone: nothing to do.
    let again = env.ok(&["hooks", "install"]);
    assert!(!again.contains(": installed"), "{again}");
}

/// `--replace` changes what it is given: the memory's type and tags stay
/// unless the replacement names its own.
#[test]
fn a_replacement_keeps_the_type_and_tags_it_does_not_give() {
    let env = Env::new();
    let style = |description: &str, extra: &[&str]| {
        let mut args = vec!["remember", "project/style", "-d", description, "-s", "s"];
        args.extend_from_slice(extra);
        env.ok(&args);
        env.read("memory/project/style.md")
    };
    style("Prefer small diffs", &["-t", "feedback", "--tag", "review"]);
    let text = style("Prefer small focused diffs", &["--replace"]);
    assert!(
        text.contains("type: feedback") && text.contains("- review"),
        "{text}"
    );
    assert!(text.contains("Prefer small focused diffs"), "{text}");
    let text = style(
        "Prefer small diffs",
        &["--replace", "-t", "project", "--tag", "style"],
    );
    assert!(
        text.contains("type: project") && text.contains("- style") && !text.contains("- review"),
        "{text}"
    );
}
