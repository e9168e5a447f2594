//! Trust, third pass: identity and the person's own memory. A write says
//! who made it or is refused; the personal store is private and holds
//! every user memory, imported ones too; a tag is what the client sent.

use crate::util::Env;
use serde_json::Value;
use std::path::PathBuf;

/// The fixtures folder's `rel`.
fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Takes git's identity away: the global config keeps only the branch name.
fn no_git_identity(env: &Env) {
    std::fs::write(
        env.dir.path().join("home/gitconfig"),
        "[init]\n\tdefaultBranch = main\n",
    )
    .expect("gitconfig");
}

/// Runs `args` with no git identity and no MEMOIR_ACTOR.
fn anonymous(env: &Env, args: &[&str]) -> (i32, String, String) {
    no_git_identity(env);
    let out = env
        .cmd(args)
        .env_remove("MEMOIR_ACTOR")
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What git says when it does not know who commits.
fn gives_gits_advice(err: &str) {
    for line in [
        "git config --global user.email \"you@example.com\"",
        "git config --global user.name \"Your Name\"",
        "MEMOIR_ACTOR",
    ] {
        assert!(err.contains(line), "no `{line}` in: {err}");
    }
}

/// With no git identity and no MEMOIR_ACTOR, every command that appends a
/// log entry refuses (exit 2, git's advice) and writes nothing: no
/// `unknown <unknown>` in the logs for good, no personal store made.
#[test]
fn a_write_without_an_identity_is_refused_with_gits_advice() {
    let env = Env::new();
    assert_eq!(env.remember("project/db", "Postgres 16", &[]).0, 0);
    let before = env.snapshot();
    let claude = fixture("claude-code/memory");
    let openclaw = fixture("openclaw/workspace");
    let writes: [&[&str]; 8] = [
        &["note", "the CI cache misses on Mondays"],
        &[
            "remember",
            "project/test-command",
            "-d",
            "Run the tests with make",
            "-s",
            "stated by the user",
        ],
        &[
            "remember",
            "user/terse",
            "-d",
            "Prefers short answers",
            "-s",
            "stated by the user",
        ],
        &["forget", "project/db", "--reason", "moved to MySQL"],
        &["import", "claude-code", claude.to_str().expect("utf-8")],
        &["import", "openclaw", openclaw.to_str().expect("utf-8")],
        &["record"],
        &["consolidate"],
    ];
    for args in writes {
        let (code, out, err) = anonymous(&env, args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        gives_gits_advice(&err);
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(env.snapshot(), before, "nothing was written");
    assert!(!env.log_text().contains("unknown"), "{}", env.log_text());
    assert!(
        !env.dir.path().join("home/.local/share/memoir").exists(),
        "a refused write makes no personal store"
    );
    // As data, with the advice in the one-line message.
    let (_, out, _) = anonymous(&env, &["--json", "note", "x"]);
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(doc["error"]["code"], "usage", "{doc}");
    gives_gits_advice(doc["error"]["message"].as_str().unwrap_or(""));
    // A dry run writes nothing: it needs no identity.
    let (code, _, err) = anonymous(&env, &["consolidate", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
}

/// MEMOIR_ACTOR alone is enough, and is who the log names; MEMOIR_AUTHOR
/// alone lets consolidate write its entry as who commits.
#[test]
fn memoir_actor_or_author_names_the_writer() {
    let env = Env::new();
    no_git_identity(&env);
    let mut cmd = env.cmd(&["note", "the CI cache misses on Mondays"]);
    cmd.env("MEMOIR_ACTOR", "Cy <cy@example.com>");
    assert!(cmd.output().expect("run").status.success());
    assert!(env.log_text().contains("Cy <cy@example.com>"));
    let mut cmd = env.cmd(&["consolidate"]);
    cmd.env_remove("MEMOIR_ACTOR")
        .env("MEMOIR_AUTHOR", "Memo Bot <bot@example.com>");
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.log_text().contains("Memo Bot <bot@example.com>"));
}

/// The SessionEnd hook never fails the agent: without an identity it
/// warns (with the advice), exits 0 and notes nothing.
#[test]
fn the_session_end_hook_without_an_identity_warns_and_notes_nothing() {
    let env = Env::new();
    let before = env.snapshot();
    let transcript = env.dir.path().join("transcript.jsonl");
    std::fs::copy(fixture("claude-code/transcript.jsonl"), &transcript).expect("transcript");
    let payload = std::fs::read_to_string(fixture("claude-code/session-end.json"))
        .expect("payload")
        .replace("TRANSCRIPT", &transcript.display().to_string())
        .replace("CWD", &env.root().display().to_string());
    no_git_identity(&env);
    let out = env
        .cmd(&["note", "--from-hook"])
        .env_remove("MEMOIR_ACTOR")
        .write_stdin(payload)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("no note recorded"), "{err}");
    gives_gits_advice(&err);
    assert_eq!(env.snapshot(), before);
}

/// `doctor` says who writes are logged as, and how to set it when no one.
#[test]
fn doctor_checks_the_identity() {
    let env = Env::new();
    let identity = |doc: &Value| {
        doc["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["what"] == "identity").cloned())
            .unwrap_or_else(|| panic!("no identity check: {doc}"))
    };
    let doc: Value = serde_json::from_str(&env.run(&["--json", "doctor"]).1).expect("json");
    let found = identity(&doc);
    assert_eq!(found["ok"], true, "{found}");
    assert!(
        found["detail"]
            .as_str()
            .is_some_and(|d| d.contains("Ada <ada@example.com>")),
        "{found}"
    );
    let (code, out, _) = anonymous(&env, &["--json", "doctor"]);
    assert_eq!(code, 1, "{out}");
    let doc: Value = serde_json::from_str(&out).expect("json");
    let missing = identity(&doc);
    assert_eq!(missing["ok"], false, "{missing}");
    gives_gits_advice(missing["fix"].as_str().unwrap_or(""));
}

/// `doctor` checks the git identity commits need apart from the writer:
/// MEMOIR_ACTOR alone lets writes through, and consolidate still cannot
/// commit. An advice-only finding (no MCP entry) is a `note`, never an
/// `ok` line followed by `run:`.
#[test]
fn doctor_checks_the_git_identity_commits_need_and_notes_are_not_ok() {
    let env = Env::new();
    let out = env.run(&["doctor"]).1;
    assert!(
        out.contains("ok   git identity (commits): Ada <ada@example.com> (from git)"),
        "{out}"
    );
    assert!(
        out.contains("note agents (MCP): no .mcp.json entry\n     run: memoir setup claude-code"),
        "{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    for pair in lines.windows(2) {
        assert!(
            !(pair[0].starts_with("ok ") && pair[1].trim_start().starts_with("run:")),
            "an ok line carries advice: {out}"
        );
    }
    // The writer is known (MEMOIR_ACTOR), git's identity is not.
    no_git_identity(&env);
    let (code, out, _) = env.run(&["doctor"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("ok   identity: Ada <ada@example.com> (from MEMOIR_ACTOR)"),
        "{out}"
    );
    assert!(
        out.contains("FIX  git identity (commits): none: git has no user.name and user.email, and MEMOIR_AUTHOR is not set"),
        "{out}"
    );
    assert!(out.contains("MEMOIR_AUTHOR=\"Name <email>\""), "{out}");
    // What doctor foresaw.
    env.fails(&["consolidate"], 1);
    let out = env
        .cmd(&["doctor"])
        .env("MEMOIR_AUTHOR", "CI <ci@example.com>")
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains("ok   git identity (commits): CI <ci@example.com> (from MEMOIR_AUTHOR)"),
        "{out}"
    );
}

/// The answers `memoir mcp` gives to one `remember` call with `tags`.
fn mcp_remember(env: &Env, id: u64, name: &str, tags: Value) -> Value {
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "remember", "arguments": {
            "scope": "project", "name": name, "description": format!("The {name} pipeline"),
            "source": "stated by the user", "tags": tags,
        } },
    });
    let out = env
        .cmd(&["mcp"])
        .write_stdin(format!("{call}\n"))
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON answer")
}

/// Over the real MCP server, a tag is what the client sent: "ci,cd" is
/// one tag, not two; a tag the policy refuses (empty, two lines) is a
/// tool error naming the rule, and nothing is written.
#[test]
fn an_mcp_tag_is_what_the_client_sent() {
    let env = Env::new();
    let answer = mcp_remember(&env, 1, "deploy", serde_json::json!(["ci,cd", "release"]));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let show: Value =
        serde_json::from_str(&env.ok(&["--json", "show", "project/deploy"])).expect("json");
    assert_eq!(
        show["tags"],
        serde_json::json!(["ci,cd", "release"]),
        "{show}"
    );
    env.ok(&["check"]);
    for bad in [serde_json::json!([""]), serde_json::json!(["ci\ncd"])] {
        let answer = mcp_remember(&env, 2, "build", bad.clone());
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{bad}: {answer}");
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["code"], "refused", "{bad}: {answer}");
        assert_eq!(error["rule"], "tags", "{bad}: {answer}");
    }
    assert!(!crate::util::exists(&env.path("memory/project/build.md")));
}

/// The personal store under the default location (HOME is pinned).
fn personal_root(env: &Env) -> PathBuf {
    env.dir.path().join("home/.local/share/memoir/user")
}

/// Runs memoir under the usual umask (022) through a shell, as a person's
/// terminal would; asserts it succeeds.
fn under_umask_022(env: &Env, args: &[&str]) {
    let mut cmd = assert_cmd::Command::new("sh");
    env.pin(&mut cmd);
    let memoir = assert_cmd::cargo::cargo_bin("memoir");
    let out = cmd
        .arg("-c")
        .arg("umask 022 && exec \"$0\" \"$@\"")
        .arg(memoir)
        .args(args)
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A file's permission bits.
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Under umask 022 the personal store is still its owner's alone: every
/// folder 0700 (those made above it too), every file memoir writes 0600,
/// by the write that makes it and by every later one (a recall's
/// receipts, a consolidation's git objects); the repository's own files
/// keep the umask's 0644.
#[test]
fn the_personal_store_is_private_under_the_usual_umask() {
    let env = Env::new();
    let remember = |key: &str, description: &str| {
        under_umask_022(
            &env,
            &[
                "remember",
                key,
                "-d",
                description,
                "-s",
                "stated by the user",
            ],
        );
    };
    remember("user/terse", "Prefers short answers");
    remember("project/test-command", "Run the tests with make");
    remember("user/tea", "Drinks tea, not coffee");
    under_umask_022(&env, &["recall", "short answers"]);
    under_umask_022(&env, &["context", "answers"]);
    // An import writes both stores: the repository's first, as the umask says.
    let claude = fixture("claude-code/memory");
    under_umask_022(
        &env,
        &["import", "claude-code", claude.to_str().expect("utf-8")],
    );
    let root = personal_root(&env);
    under_umask_022(
        &env,
        &["--store", root.to_str().expect("utf-8"), "consolidate"],
    );
    assert_eq!(mode(&root), 0o700);
    for made in [
        "home/.local",
        "home/.local/share",
        "home/.local/share/memoir",
    ] {
        assert_eq!(mode(&env.dir.path().join(made)), 0o700, "{made}");
    }
    let mut files = 0;
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.expect("walk");
        let m = mode(entry.path());
        if entry.file_type().is_dir() {
            assert_eq!(m, 0o700, "{}", entry.path().display());
        } else {
            // git's objects are read-only (0400); nothing is anyone else's.
            assert_eq!(m & 0o077, 0, "{:o} {}", m, entry.path().display());
            files += 1;
        }
    }
    assert!(files > 10, "only {files} files");
    for own in [
        "MEMORY.md",
        "memory/user/terse.md",
        "memory/user/tea.md",
        "memory/user/role.md",
    ] {
        assert_eq!(mode(&root.join(own)), 0o600, "{own}");
    }
    for shared in [
        "memory/project/test-command.md",
        "memory/project/release.md",
        "MEMORY.md",
    ] {
        assert_eq!(mode(&env.path(shared)), 0o644, "{shared}");
    }
    // One opened up by hand is named by doctor, with the fix.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let doc: Value = serde_json::from_str(&env.run(&["--json", "doctor"]).1).expect("json");
    let personal = doc["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["what"] == "personal store").cloned())
        .unwrap_or_default();
    assert_eq!(personal["ok"], false, "{doc}");
    assert!(
        personal["fix"].as_str().unwrap_or("").contains("chmod"),
        "{personal}"
    );
}

/// A relative MEMOIR_USER_STORE would put a personal store inside each
/// project: it is refused (exit 2) by every command that would use it,
/// and nothing is made.
#[test]
fn a_relative_user_store_is_refused() {
    let env = Env::new();
    for args in [
        &[
            "remember",
            "user/terse",
            "-d",
            "Prefers short answers",
            "-s",
            "stated",
        ][..],
        &["recall", "answers"],
        &["list"],
    ] {
        let out = env
            .cmd(args)
            .env("MEMOIR_USER_STORE", "personal")
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("MEMOIR_USER_STORE must be an absolute path"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!crate::util::exists(&env.path("personal")));
    assert!(!crate::util::exists(&env.path("memory/user/terse.md")));
}

/// Every log entry's text under a store's `memory/log/`.
fn logs_under(root: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in walkdir::WalkDir::new(root.join("memory/log")).sort_by_file_name() {
        let entry = entry.expect("walk");
        if entry.file_type().is_file() {
            text.push_str(&std::fs::read_to_string(entry.path()).expect("log"));
        }
    }
    text
}

/// An import's items as JSON: (key, outcome, store).
fn import_items(env: &Env, args: &[&str]) -> Vec<(String, String, String)> {
    let out = env.cmd(args).output().expect("run");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    doc["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {doc}"))
        .iter()
        .map(|i| {
            let s = |f: &str| i[f].as_str().unwrap_or("").to_string();
            (s("key"), s("outcome"), s("store"))
        })
        .collect()
}

/// Claude Code's user memories and OpenClaw's USER.md directives are the
/// person's own: an import writes them to the personal store (made by the
/// first one; a dry run makes nothing), never to the repository's
/// `memory/user/` that consolidate commits for the team; a second import
/// finds them there and adds nothing.
#[test]
fn imported_user_memories_go_to_the_personal_store() {
    let env = Env::new();
    let root = personal_root(&env);
    let claude = fixture("claude-code/memory");
    let claude = claude.to_str().expect("utf-8");
    let dry = env.ok(&["import", "claude-code", claude, "--dry-run"]);
    assert!(
        dry.contains("would be added user/role (user_role.md) in your personal store"),
        "{dry}"
    );
    assert!(!crate::util::exists(&root), "a dry run makes no store");

    let items = import_items(&env, &["--json", "import", "claude-code", claude]);
    assert!(
        items.contains(&("user/role".into(), "added".into(), "personal".into())),
        "{items:?}"
    );
    assert!(
        items.contains(&("project/release".into(), "added".into(), "repo".into())),
        "{items:?}"
    );
    assert!(!crate::util::exists(&env.path("memory/user/role.md")));
    assert!(!env.log_text().contains("user/role"), "{}", env.log_text());
    assert!(root.join("memory/user/role.md").is_file());
    assert!(logs_under(&root).contains("user/role"));
    let show: Value =
        serde_json::from_str(&env.ok(&["--json", "show", "user/role"])).expect("json");
    assert_eq!(show["store"], "personal", "{show}");

    let openclaw = fixture("openclaw/workspace");
    let openclaw = openclaw.to_str().expect("utf-8");
    let out = env.ok(&["import", "openclaw", openclaw]);
    assert!(
        out.contains("proposed user/call-me-ada (USER.md § Call me Ada) in your personal store"),
        "{out}"
    );
    assert!(!env.log_text().contains("user/call-me-ada"));
    assert!(logs_under(&root).contains("user/call-me-ada"));

    // What the team commits holds nothing of the person.
    env.ok(&["consolidate", "--accept-all"]);
    let committed = env.git(&["ls-files", "memory/user"]);
    assert_eq!(committed.trim(), "memory/user/.gitkeep", "{committed}");

    // Found where they went: a second import adds nothing anywhere.
    let personal_before = logs_under(&root);
    let before = env.snapshot();
    for (from, dir) in [("claude-code", claude), ("openclaw", openclaw)] {
        let again = env.ok(&["import", from, dir]);
        assert!(
            again.contains(": 0 added,") && again.contains(" 0 proposed,"),
            "{again}"
        );
    }
    assert_eq!(env.snapshot(), before);
    assert_eq!(logs_under(&root), personal_before);
}

/// The pre-commit hook records hand edits as events: with no identity it
/// refuses a commit of the store (exit 2, the advice, nothing recorded),
/// and lets any other commit be git's business.
#[test]
fn the_pre_commit_hook_without_an_identity_refuses_only_a_commit_of_the_store() {
    let env = Env::new();
    assert_eq!(env.remember("project/db", "Postgres 16", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "memory"]);
    no_git_identity(&env);
    env.write("notes.txt", "unrelated");
    env.git(&["add", "notes.txt"]);
    let (code, _, err) = anonymous(&env, &["hook", "pre-commit"]);
    assert_eq!(code, 0, "{err}");
    let logs = env.log_text();
    let edited = env
        .read("memory/project/db.md")
        .replace("Postgres 16", "Postgres 17");
    env.write("memory/project/db.md", edited);
    env.git(&["add", "memory/project/db.md"]);
    let (code, _, err) = anonymous(&env, &["hook", "pre-commit"]);
    assert_eq!(code, 2, "{err}");
    gives_gits_advice(&err);
    assert_eq!(env.log_text(), logs, "nothing recorded");
}

/// An identity set for the repository only (`git config user.name`, no
/// global one) names the writer of the personal store too, whose own
/// repository has none.
#[test]
fn a_per_repository_identity_names_personal_writes_too() {
    let env = Env::new();
    env.git(&["config", "user.name", "Lin Repo"]);
    env.git(&["config", "user.email", "lin@example.com"]);
    let (code, out, err) = anonymous(
        &env,
        &[
            "remember",
            "user/terse",
            "-d",
            "Prefers short answers",
            "-s",
            "stated",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let logs: String = walkdir::WalkDir::new(personal_root(&env).join("memory/log"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(logs.contains("Lin Repo <lin@example.com>"), "{logs}");
}
