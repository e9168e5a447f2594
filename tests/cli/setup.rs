//! `memoir setup claude-code` and the hooks it registers, run as Claude
//! Code runs them: each command from the written settings.json, fed the
//! documented hook payloads (and a transcript in Claude Code's JSONL).

use crate::util::{path_with_memoir, Env};
use serde_json::Value;

/// The fixture folder of Claude Code's formats.
fn fixture(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code");
    std::fs::read_to_string(dir.join(name)).expect("fixture")
}

/// Runs a hook command from settings.json as Claude Code does (`sh -c`,
/// the payload on stdin), with the memoir under test on PATH.
fn run_hook(env: &Env, command: &str, payload: &str) -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::new("sh");
    env.pin(&mut cmd);
    let out = cmd
        .env("PATH", path_with_memoir())
        .args(["-c", command])
        .write_stdin(payload.to_string())
        .output()
        .expect("sh");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The command settings.json registers for `event`.
fn hook_command(env: &Env, event: &str) -> String {
    let settings: Value =
        serde_json::from_str(&env.read(".claude/settings.json")).expect("settings");
    settings["hooks"][event]
        .as_array()
        .and_then(|groups| {
            groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
                .last()
        })
        .and_then(|h| h["command"].as_str())
        .unwrap_or_else(|| panic!("no {event} hook in {settings}"))
        .to_string()
}

/// Setup merges into the user's files, a second run changes nothing, and
/// --dry-run shows the diff and writes nothing.
#[test]
fn setup_merges_into_the_users_files_once() {
    let env = Env::new();
    env.write(
        ".claude/settings.json",
        "{\n  \"model\": \"opus\",\n  \"permissions\": { \"allow\": [\"Bash(pnpm test:*)\"] }\n}\n",
    );
    env.write("CLAUDE.md", "# Shop\n\nUse pnpm.\n");
    let dry = env.ok(&["setup", "claude-code", "--dry-run"]);
    assert!(
        dry.contains("would update .claude/settings.json")
            && dry.contains("would create .mcp.json"),
        "{dry}"
    );
    assert!(dry.contains("+    \"SessionEnd\": ["), "{dry}");
    assert!(!env.path(".mcp.json").exists());

    let out = env.ok(&["setup", "claude-code"]);
    assert_eq!(
        out,
        "updated .claude/settings.json\ncreated .mcp.json\nupdated CLAUDE.md\nnote: \
         `enabledMcpjsonServers` in .claude/settings.json approves the memoir server for a \
         teammate only once they trust this workspace in Claude Code (it asks on their first \
         session in a new clone)\n"
    );
    let settings: Value = serde_json::from_str(&env.read(".claude/settings.json")).expect("json");
    assert_eq!(settings["model"], "opus");
    assert_eq!(
        settings["permissions"]["allow"],
        serde_json::json!(["Bash(pnpm test:*)", "mcp__memoir"])
    );
    assert_eq!(
        settings["enabledMcpjsonServers"],
        serde_json::json!(["memoir"])
    );
    let mcp: Value = serde_json::from_str(&env.read(".mcp.json")).expect("json");
    assert_eq!(mcp["mcpServers"]["memoir"]["command"], "memoir");
    assert_eq!(
        mcp["mcpServers"]["memoir"]["args"],
        serde_json::json!(["mcp"])
    );
    let claude_md = env.read("CLAUDE.md");
    assert!(
        claude_md.starts_with("# Shop\n\nUse pnpm.\n\n<!-- memoir:start"),
        "{claude_md}"
    );

    let before = env.snapshot();
    assert_eq!(
        env.ok(&["setup", "claude-code"]),
        "Claude Code is set up already; nothing to change\n"
    );
    assert_eq!(env.snapshot(), before);
    let json: Value =
        serde_json::from_str(&env.ok(&["--json", "setup", "claude-code"])).expect("json");
    assert_eq!(json["files"], serde_json::json!([]));
}

/// Settings Claude Code could not read are refused with their line; nothing is written.
#[test]
fn setup_refuses_broken_settings_and_writes_nothing() {
    let env = Env::new();
    env.write(".claude/settings.json", "{\n  \"hooks\": {,}\n}\n");
    let before = env.snapshot();
    let err = env.fails(&["setup", "claude-code"], 1);
    assert!(err.contains(".claude/settings.json:2: not JSON"), "{err}");
    assert_eq!(env.snapshot(), before);
}

/// The registered hooks work as Claude Code runs them: SessionStart and
/// UserPromptSubmit inject memory, SessionEnd notes what the user asked
/// (and only that), for consolidation to propose memories from.
#[test]
fn the_registered_hooks_inject_memory_and_note_the_session() {
    let env = Env::new();
    env.ok(&["setup", "claude-code"]);
    env.remember(
        "project/test-command",
        "Run the test suite with `pnpm test`, never `npm test`",
        &[],
    );
    let cwd = env.root().display().to_string();

    let start = format!(
        r#"{{"session_id":"s1","transcript_path":"/nonexistent","cwd":"{cwd}","hook_event_name":"SessionStart","source":"startup"}}"#
    );
    let (code, out, err) = run_hook(&env, &hook_command(&env, "SessionStart"), &start);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("<hot_memory>") && out.contains("project/test-command"),
        "{out}"
    );

    let prompt = format!(
        r#"{{"session_id":"s1","cwd":"{cwd}","hook_event_name":"UserPromptSubmit","prompt":"which command runs the test suite?"}}"#
    );
    let (code, out, err) = run_hook(&env, &hook_command(&env, "UserPromptSubmit"), &prompt);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("<relevant_memories>") && out.contains("pnpm test"),
        "{out}"
    );

    let transcript = env.dir.path().join("transcript.jsonl");
    std::fs::write(&transcript, fixture("transcript.jsonl")).expect("transcript");
    let end = fixture("session-end.json")
        .replace("TRANSCRIPT", &transcript.display().to_string())
        .replace("CWD", &cwd);
    let (code, _, err) = run_hook(&env, &hook_command(&env, "SessionEnd"), &end);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let log = env.log_text();
    // Where the note came from is beside its text, not its first line.
    assert!(
        log.contains(r#""reason":"Claude Code session 8f0c2a4e ended (prompt_input_exit)""#),
        "{log}"
    );
    assert!(!log.contains("the user asked:"), "{log}");
    let found: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "recall", "pnpm test suite"])).expect("json");
    let note = found["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .find(|h| h["type"] == "note")
        .expect("the session's note");
    assert!(
        note["text"].as_str().unwrap_or("").starts_with("- "),
        "{note}"
    );
    assert!(
        log.contains("we run the suite with pnpm test, never npm test"),
        "{log}"
    );
    assert!(
        log.contains("Use fake timers in that test from now on"),
        "{log}"
    );
    for not_asked in ["/clear", "Caveat:", "expected 1 call", "The retry wrapper"] {
        assert!(!log.contains(not_asked), "{not_asked} in {log}");
    }
}

/// A SessionEnd hook never fails the session: a missing transcript or a
/// payload that is not JSON is a warning, exit 0, nothing written.
#[test]
fn the_session_end_hook_never_fails() {
    let env = Env::new();
    let before = env.snapshot();
    for payload in [
        "not json",
        r#"{"session_id":"s","transcript_path":"/nonexistent/t.jsonl","hook_event_name":"SessionEnd"}"#,
    ] {
        let (code, _, err) = run_hook(&env, "memoir note --from-hook", payload);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("no note recorded"), "{err}");
    }
    // JSON, but not of the payload's types: said so, not "not JSON".
    let (code, _, err) = run_hook(&env, "memoir note --from-hook", r#"{"transcript_path": 3}"#);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("is not a hook payload (invalid type"), "{err}");
    assert_eq!(env.snapshot(), before);
}

/// Setup keeps the style of the files it merges into: a compact
/// settings.json stays one line, a four-space one keeps four spaces.
#[test]
fn setup_keeps_a_compact_settings_file_compact() {
    let env = Env::new();
    env.write(
        ".claude/settings.json",
        r#"{"model":"opus","permissions":{"allow":["Bash(pnpm test:*)"]}}"#.to_string() + "\n",
    );
    env.write(".mcp.json", "{\n    \"mcpServers\": {}\n}");
    env.ok(&["setup", "claude-code"]);
    let settings = env.read(".claude/settings.json");
    assert!(
        settings.starts_with(
            r#"{"model":"opus","permissions":{"allow":["Bash(pnpm test:*)","mcp__memoir"]},"#
        ),
        "{settings}"
    );
    assert_eq!(settings.lines().count(), 1, "still compact: {settings}");
    assert!(settings.ends_with("}\n"), "{settings}");
    let v: Value = serde_json::from_str(&settings).expect("json");
    assert_eq!(v["enabledMcpjsonServers"], serde_json::json!(["memoir"]));
    let mcp = env.read(".mcp.json");
    assert!(
        mcp.starts_with("{\n    \"mcpServers\": {\n        \"memoir\": {\n"),
        "four spaces kept: {mcp}"
    );
    assert!(mcp.ends_with('}'), "no newline added: {mcp:?}");
}

/// Setup says that the checked-in server approval holds only once a
/// teammate trusts the workspace; and when `memoir` is not on PATH, its
/// advice installs memoir from memoir's checkout, never the user's
/// project (`--path .`).
#[test]
fn setup_says_what_approval_needs_and_how_to_install_memoir() {
    let env = Env::new();
    let out = env
        .cmd(&["setup", "claude-code"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("run");
    assert!(out.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stdout.contains(
            "approves the memoir server for a teammate only once they trust this workspace"
        ),
        "{stdout}"
    );
    let advice = format!(
        "`cargo install --locked --path {}`",
        env!("CARGO_MANIFEST_DIR")
    );
    assert!(stderr.contains(&advice), "{stderr}");
    assert!(!stderr.contains("--path .`"), "{stderr}");
}

/// Files written on Windows (CRLF line ends) keep them: setup's lines are
/// CRLF too, never LF beside CRLF, and a second run changes nothing.
#[test]
fn setup_keeps_crlf_files_crlf() {
    let env = Env::new();
    env.write(
        ".claude/settings.json",
        "{\r\n  \"model\": \"opus\"\r\n}\r\n",
    );
    env.write("CLAUDE.md", "# Project\r\n\r\nUse pnpm.\r\n");
    env.ok(&["setup", "claude-code"]);
    for file in [".claude/settings.json", "CLAUDE.md"] {
        let text = env.read(file);
        let bare = text.replace("\r\n", "");
        assert!(
            !bare.contains('\n'),
            "{file}: an LF line beside CRLF: {text:?}"
        );
    }
    let v: Value = serde_json::from_str(&env.read(".claude/settings.json")).expect("json");
    assert_eq!(v["model"], "opus");
    let again = env.ok(&["setup", "claude-code"]);
    assert!(again.contains("nothing to change"), "{again}");
}
