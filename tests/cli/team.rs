//! Team workflow: checks for CI on a pull request.

use crate::util::{bobs_event, Env};

#[test]
fn check_base_requires_logs_to_only_grow_and_stay_free_of_secrets() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    env.ok(&["note", "first note"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    // Appending is fine.
    env.ok(&["note", "second note"]);
    env.ok(&["check", "--base", "HEAD"]);
    let log = env.first_log();
    // Rewriting a committed line is not.
    let text = env.read(&log);
    env.write(&log, text.replacen("first note", "FIRST NOTE", 1));
    let err = env.fails(&["check", "--base", "HEAD"], 1);
    assert!(
        err.contains(&format!("{log}:")) && err.contains("error[append-only]"),
        "{err}"
    );
    env.write(&log, &text);
    env.ok(&["check", "--base", "HEAD"]);
    // Deleting a log is not either.
    std::fs::remove_file(env.path(&log)).expect("rm");
    let err = env.fails(&["check", "--base", "HEAD"], 1);
    assert!(err.contains("deleted since"), "{err}");
    env.write(&log, &text);
    // A secret that slipped into a log in the change (written around the policy).
    let secret = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    let mut e = bobs_event(
        memoir::event::Op::Note,
        "project/a",
        vec![],
        format!("token {secret}\n"),
    );
    e.key = None;
    env.write("memory/log/2026-11-29/bob-0badc0de.md", e.render());
    let err = env.fails(&["check", "--base", "HEAD"], 1);
    assert!(
        err.contains("memory/log/2026-11-29/bob-0badc0de.md:") && err.contains("secret:github-pat"),
        "{err}"
    );
    assert!(!err.contains("a1B2c3D4e5F6"), "{err}");
    env.fails(&["check", "--base", "no-such-rev"], 1);
}

#[test]
fn diff_shows_what_an_agent_will_believe_differently() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha v1", &[]).0, 0);
    assert_eq!(env.remember("project/b", "beta", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    assert_eq!(env.remember("project/a", "alpha v2", &["--replace"]).0, 0);
    env.ok(&["forget", "project/b", "--reason", "we dropped beta"]);
    assert_eq!(env.remember("project/c", "gamma", &[]).0, 0);
    env.ok(&["note", "decided to drop beta"]);
    let out = env.ok(&["diff"]);
    assert!(
        out.contains("1 added, 1 changed, 1 forgotten; 0 conflicts opened, 0 resolved; 1 notes"),
        "{out}"
    );
    assert!(
        out.contains("changed project/a (by Ada <ada@example.com>)"),
        "{out}"
    );
    assert!(
        out.contains("-description: alpha v1") && out.contains("+description: alpha v2"),
        "{out}"
    );
    assert!(
        out.contains("forgotten project/b (by Ada <ada@example.com>): we dropped beta"),
        "{out}"
    );
    assert!(
        out.contains("note 2026-11-29T10:41:07Z Ada <ada@example.com>: decided to drop beta"),
        "{out}"
    );
    let md = env.ok(&["diff", "--format", "markdown"]);
    assert!(
        md.starts_with("### memoir: memory changes\n\n1 added, 1 changed, 1 forgotten"),
        "{md}"
    );
    assert!(
        md.contains("<details><summary><b>added</b> <code>project/c</code>"),
        "{md}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["diff", "--format", "json"])).expect("json");
    assert_eq!(v["changes"].as_array().map(Vec::len), Some(3));
    assert_eq!(v["to"], "work tree");
    // Between two revisions.
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "change"]);
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "diff", "HEAD~1", "HEAD"])).expect("json");
    assert_eq!(v["changes"].as_array().map(Vec::len), Some(3));
    let none = env.ok(&["diff", "HEAD", "HEAD"]);
    assert!(none.contains("0 added, 0 changed, 0 forgotten"), "{none}");
    env.fails(&["diff", "nope"], 1);
}
