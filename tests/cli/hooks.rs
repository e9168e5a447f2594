//! The Claude Code hook scripts under examples/, fed sample payloads.

use crate::util::Env;

fn run_hook(env: &Env, script: &str, payload: &str) -> (i32, String, String) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude-code");
    let payload = std::fs::read_to_string(root.join("payloads").join(payload))
        .expect("payload")
        .replace("CWD", env.root().to_str().expect("utf8"));
    let path = crate::util::path_with_memoir();
    let mut cmd = assert_cmd::Command::new(root.join(script));
    // The hook runs from anywhere: the payload's cwd finds the store.
    cmd.current_dir(env.dir.path())
        .env("PATH", path)
        .env("HOME", env.dir.path().join("home"))
        .env("GIT_CONFIG_GLOBAL", env.dir.path().join("home/gitconfig"))
        .env("MEMOIR_NOW", &env.now)
        .env_remove("MEMOIR_STORE")
        .write_stdin(payload);
    let out = cmd.output().expect("run hook");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn session_start_prints_the_hot_memory() {
    let env = Env::new();
    assert_eq!(
        env.remember(
            "project/test-command",
            "Run the tests with `pnpm test`",
            &[]
        )
        .0,
        0
    );
    env.ok(&["note", "CI was red this morning"]);
    let (code, out, err) = run_hook(&env, "session-start.sh", "session-start.json");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("<hot_memory>\n<memory_index>\n"), "{out}");
    assert!(
        out.contains("memory/project/test-command.md") && out.contains("CI was red this morning"),
        "{out}"
    );
}

#[test]
fn user_prompt_submit_prints_relevant_memories_or_nothing() {
    let env = Env::new();
    assert_eq!(
        env.remember(
            "project/test-command",
            "Run the tests with `pnpm test`",
            &[]
        )
        .0,
        0
    );
    let (code, out, err) = run_hook(&env, "user-prompt-submit.sh", "user-prompt-submit.json");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("<relevant_memories>\n<memory key=\"project/test-command\""),
        "{out}"
    );
    let (code, out, _) = run_hook(&env, "user-prompt-submit.sh", "user-prompt-unrelated.json");
    assert_eq!((code, out.as_str()), (0, ""));
}

/// An image-only prompt has no words: nothing is injected (the hot memory
/// belongs to the session's start, not to every prompt).
#[test]
fn an_empty_prompt_injects_nothing() {
    let env = Env::new();
    env.remember(
        "project/test-command",
        "Run the tests with `pnpm test`",
        &[],
    );
    let payload = |json: &str| {
        let json = json.replace("CWD", env.root().to_str().expect("utf8"));
        let out = env
            .cmd(&["context", "--from-hook"])
            .write_stdin(json)
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for json in [
        r#"{"hook_event_name":"UserPromptSubmit","cwd":"CWD","prompt":""}"#,
        r#"{"hook_event_name":"UserPromptSubmit","cwd":"CWD","prompt":"  \n "}"#,
        r#"{"hook_event_name":"UserPromptSubmit","cwd":"CWD"}"#,
        r#"{"cwd":"CWD","prompt":""}"#,
    ] {
        assert_eq!(payload(json), (Some(0), String::new()), "{json}");
    }
    let (code, out) = payload(r#"{"hook_event_name":"SessionStart","cwd":"CWD"}"#);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("<hot_memory>"), "{out}");
}

#[test]
fn a_hook_never_fails_the_prompt() {
    let env = Env::bare();
    // No store at the payload's cwd: a warning, no output, exit 0.
    let (code, out, err) = run_hook(&env, "user-prompt-submit.sh", "user-prompt-submit.json");
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("no memory injected"), "{err}");
    // Not JSON at all.
    let mut cmd = env.cmd(&["context", "--from-hook"]);
    cmd.write_stdin("not json");
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}
