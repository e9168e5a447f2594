//! `memoir import` and `memoir export` against realistic fixtures of
//! Claude Code's auto memory (tests/fixtures/claude-code/memory) and an
//! OpenClaw workspace (tests/fixtures/openclaw/workspace).

use crate::util::Env;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// A copy of a fixture folder in the test's own directory.
fn copy_of(env: &Env, rel: &str, to: &str) -> PathBuf {
    let dest = env.dir.path().join(to);
    for entry in walkdir::WalkDir::new(fixture(rel)) {
        let entry = entry.expect("entry");
        let target = dest.join(entry.path().strip_prefix(fixture(rel)).expect("prefix"));
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("dir");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
    dest
}

fn json(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (_, out, err) = env.run(&all);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"))
}

/// Topic files of both shapes become memories with their provenance; a
/// second import adds nothing.
#[test]
fn claude_code_topic_files_become_memories_once() {
    let env = Env::new();
    let dir = fixture("claude-code/memory");
    let dir = dir.to_str().expect("utf-8");
    let out = env.ok(&["import", "claude-code", dir]);
    assert!(
        out.ends_with(": 4 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    let keys: Vec<String> = json(&env, &["list"])["memories"]
        .as_array()
        .expect("list")
        .iter()
        .map(|m| m["key"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "project/feedback-commits",
            "project/reference-dashboards",
            "project/release",
            "user/role"
        ]
    );
    let commits = env.read("memory/project/feedback-commits.md");
    assert!(commits.contains("type: feedback\n"), "{commits}");
    assert!(
        commits
            .contains("source: imported from Claude Code feedback_commits.md (\"Commit style\")"),
        "{commits}"
    );
    assert!(
        commits.contains("created: 2026-10-02T09:14:22Z"),
        "the file's own date: {commits}"
    );
    assert!(
        commits.contains("[[project_release]]") && commits.contains("**How to apply:**"),
        "{commits}"
    );
    let role = json(&env, &["show", "user/role"]);
    assert_eq!(role["type"], "user");
    assert!(
        env.path("memory/log/2026-10-02").is_dir(),
        "the event is logged at its own date"
    );
    env.ok(&["check"]);

    let before = env.snapshot();
    let out = env.ok(&["import", "claude-code", dir]);
    assert!(
        out.ends_with(": 0 added, 4 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert_eq!(env.snapshot(), before);
}

/// Every bad file is reported in one run, the good ones imported all the
/// same; a secret is refused and never echoed; exit 3.
#[test]
fn every_bad_file_is_reported_in_one_run() {
    let env = Env::new();
    let dir = copy_of(&env, "claude-code/memory", "cc");
    let secret = concat!("ghp_", "0123456789abcdefghijABCDEFGHIJ012345");
    std::fs::write(
        dir.join("broken.md"),
        "---\nname: x\ndescription: [unclosed\n---\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("opinion.md"),
        "---\ndescription: d\ntype: opinion\n---\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("token.md"),
        format!("---\nname: token\ndescription: the deploy token\ntype: project\n---\n{secret}\n"),
    )
    .expect("write");
    let (code, out, err) = env.run(&["import", "claude-code", dir.to_str().expect("utf-8")]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("invalid (broken.md): line 4: frontmatter is not YAML"),
        "{out}"
    );
    assert!(
        out.contains("invalid (opinion.md): line 2: unknown type `opinion`"),
        "{out}"
    );
    assert!(
        out.contains("refused project/token (token.md): secret:github-pat: looks like a secret"),
        "{out}"
    );
    assert!(!out.contains(secret) && !err.contains(secret));
    assert!(
        out.ends_with(": 4 added, 0 unchanged, 0 proposed, 1 refused, 2 invalid\n"),
        "{out}"
    );
    assert!(!env.path("memory/project/token.md").exists());
}

/// Without a folder, import finds Claude Code's own for the project:
/// `~/.claude/projects/<root as a name>/memory`, or the override variable.
#[test]
fn claude_codes_folder_is_found_as_claude_code_finds_it() {
    let env = Env::new();
    let root = std::fs::canonicalize(env.root()).expect("root");
    let name: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    copy_of(
        &env,
        "claude-code/memory",
        &format!("home/.claude/projects/{name}/memory"),
    );
    let out = env.ok(&["import", "claude-code", "--dry-run"]);
    assert!(
        out.ends_with(": 4 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert!(out.starts_with("would be added"), "{out}");
    assert!(env.memory_files().is_empty(), "a dry run writes nothing");

    let other = copy_of(&env, "claude-code/memory", "elsewhere");
    std::fs::remove_file(other.join("user_role.md")).expect("rm");
    let out = env
        .cmd(&["import", "claude-code"])
        .env("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", &other)
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.ends_with(": 3 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
}

/// Import, export, import again: nothing changes. Export keeps Claude
/// Code's own files, indexes them after memoir's, and removes the file of
/// a memory memoir forgot.
#[test]
fn export_round_trips_and_keeps_claude_codes_own_files() {
    let env = Env::new();
    env.ok(&[
        "import",
        "claude-code",
        fixture("claude-code/memory").to_str().expect("utf-8"),
    ]);
    env.remember("project/deploy-day", "Deploys go out on weekdays only", &[]);
    let out_dir = env.dir.path().join("cc");
    let out = out_dir.to_str().expect("utf-8");
    // The repository's memories: user/role went to the personal store.
    env.ok(&["export", "claude-code", out]);
    let before = env.snapshot();
    let again = env.ok(&["import", "claude-code", out]);
    assert!(
        again.ends_with(": 0 added, 4 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{again}"
    );
    assert_eq!(
        env.snapshot(),
        before,
        "import after export changes nothing"
    );
    let same = env.ok(&["export", "claude-code", out]);
    assert!(
        same.ends_with(": 0 written, 0 removed, 4 unchanged\n"),
        "{same}"
    );

    std::fs::write(out_dir.join("project_own.md"), "---\nname: Own note\ndescription: Claude Code wrote this one\nmetadata:\n  type: project\n---\nMine.\n").expect("write");
    env.ok(&["export", "claude-code", out]);
    let index = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines.len(), 5, "{index}");
    assert!(lines.contains(&"- [Commit style](feedback_commits.md) — Small commits, imperative subjects, no WIP on main"), "{index}");
    assert!(
        lines.contains(&"- [deploy-day](project_deploy-day.md) — Deploys go out on weekdays only"),
        "{index}"
    );
    assert_eq!(
        lines[4], "- [Own note](project_own.md) — Claude Code wrote this one",
        "{index}"
    );

    env.ok(&[
        "forget",
        "project/deploy-day",
        "--reason",
        "moved to Wednesdays",
    ]);
    let out2 = env.ok(&["export", "claude-code", out]);
    assert!(out2.contains("remove project_deploy-day.md"), "{out2}");
    assert!(out_dir.join("project_own.md").exists());
    assert!(!out_dir.join("project_deploy-day.md").exists());
}

/// The index stays within what Claude Code loads, most valuable first.
#[test]
fn the_exported_index_fits_claude_codes_load_limit() {
    let env = Env::new();
    for i in 0..210 {
        let confidence = if i == 209 { "1" } else { "0.5" };
        env.remember(
            &format!("project/fact-{i:03}"),
            &format!("Fact number {i} about the shop"),
            &["--confidence", confidence],
        );
    }
    let out_dir = env.dir.path().join("cc");
    let e = json(
        &env,
        &["export", "claude-code", out_dir.to_str().expect("utf-8")],
    );
    assert_eq!(e["left_out"], 11, "{e}");
    let index = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    assert!(index.lines().count() <= 200 && index.len() <= 25_000);
    assert!(
        index.starts_with("- [fact-209]"),
        "the most valuable first: {}",
        &index[..80]
    );
    assert!(index.ends_with("- 11 more memories are in memoir (`memoir list`)\n"));
}

/// OpenClaw: daily notes become notes at their own dates, curated
/// sections and active directives proposals; a second import adds nothing.
#[test]
fn an_openclaw_workspace_imports_notes_and_proposals_once() {
    let env = Env::new();
    let dir = fixture("openclaw/workspace");
    let dir = dir.to_str().expect("utf-8");
    let out = env.ok(&["import", "openclaw", dir]);
    assert!(
        out.ends_with(": 2 added, 0 unchanged, 4 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert!(
        out.contains("proposed user/call-me-ada (USER.md § Call me Ada)"),
        "{out}"
    );
    assert!(
        !out.contains("long explanations"),
        "a superseded directive is left out: {out}"
    );
    let day: Vec<_> = std::fs::read_dir(env.path("memory/log/2026-11-27"))
        .expect("the note's own day")
        .collect();
    assert_eq!(day.len(), 1);
    assert!(env
        .log_text()
        .contains("imported from OpenClaw memory/2026-11-27.md:"));
    // The repository's two; USER.md's wait in the personal store.
    assert_eq!(env.pending_proposals(), 2);
    env.ok(&["check"]);
    let found = json(&env, &["recall", "why did the checkout test flake on CI"]);
    assert_eq!(found["hits"][0]["type"], "note", "{found}");

    let before = env.snapshot();
    let again = env.ok(&["import", "openclaw", dir]);
    assert!(
        again.ends_with(": 0 added, 6 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{again}"
    );
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_name_that_holds_a_secret_is_refused_without_a_trace_of_it() {
    let env = Env::new();
    let token = ["ghp_", "Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9"].concat();
    let tail = token[8..].to_lowercase();
    // An OpenClaw section titled with it ...
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("MEMORY.md"),
        format!(
            "# MEMORY\n\n## Always use {token}\nFor the deploy bot.\n\n## Stack\nPostgres 16.\n"
        ),
    )
    .expect("write");
    let ws = ws.to_str().expect("utf-8");
    for args in [
        vec!["import", "openclaw", ws],
        vec!["--json", "import", "openclaw", ws],
    ] {
        let (code, out, err) = env.run(&args);
        assert_ne!(code, 0, "{out}{err}");
        let all = format!("{out}{err}").to_lowercase();
        assert!(!all.contains(&tail), "{all}");
        assert!(all.contains("secret:github-pat"), "{all}");
    }
    // ... and a Claude Code topic file named with it.
    let cc = env.dir.path().join("cc");
    std::fs::create_dir_all(&cc).expect("cc");
    std::fs::write(
        cc.join(format!("project_{token}.md")),
        "---\nname: deploy bot\ndescription: the bot's token\ntype: project\n---\nbody\n",
    )
    .expect("write");
    let cc = cc.to_str().expect("utf-8");
    let (code, out, err) = env.run(&["--json", "import", "claude-code", cc]);
    assert_ne!(code, 0, "{out}{err}");
    let all = format!("{out}{err}").to_lowercase();
    assert!(!all.contains(&tail), "{all}");
    let everything: String = env
        .snapshot()
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).to_lowercase())
        .collect();
    assert!(!everything.contains(&tail));
}
