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
