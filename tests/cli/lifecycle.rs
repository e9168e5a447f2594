//! The store's invariants through whole sessions: remember, replace,
//! forget, hand edits, record, rebuild, check.

use crate::util::{exists, Env};

fn meta_lines(env: &Env) -> Vec<String> {
    env.log_text()
        .lines()
        .filter(|l| l.starts_with("<!-- memoir {"))
        .map(String::from)
        .collect()
}

#[test]
fn init_creates_the_layout_and_is_idempotent() {
    let env = Env::bare();
    env.ok(&["init"]);
    for p in [
        "MEMORY.md",
        "memory/user",
        "memory/project",
        "memory/task",
        "memory/log",
        ".git",
    ] {
        assert!(env.path(p).exists(), "{p}");
    }
    assert!(env.read(".gitattributes").contains("memory/** -text"));
    let before = env.snapshot();
    let out = env.ok(&["init"]);
    assert!(out.contains("already"), "{out}");
    assert_eq!(env.snapshot(), before);
    assert_eq!(
        env.read(".gitattributes")
            .matches("memory/** -text")
            .count(),
        1
    );
    // git sees a normal repository.
    env.git(&["status", "--porcelain"]);
}

#[test]
fn outside_a_store_is_a_clear_error() {
    let env = Env::bare();
    let err = env.fails(&["list"], 1);
    assert!(err.contains("no memoir store"), "{err}");
    let err = env.fails(&["note", "x"], 1);
    assert!(err.contains("memoir init"), "{err}");
}

#[test]
fn store_is_found_from_a_subfolder_and_by_flag_and_env() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "first", &[]).0, 0);
    let mut cmd = env.cmd(&["list"]);
    cmd.current_dir(env.path("memory/project"));
    let out = cmd.output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("project/a"));
    let elsewhere = tempfile::tempdir().expect("tmp");
    let root = env.root();
    let root = root.to_str().expect("utf8");
    let mut cmd = env.cmd(&["--store", root, "list"]);
    cmd.current_dir(elsewhere.path());
    assert!(String::from_utf8_lossy(&cmd.output().expect("run").stdout).contains("project/a"));
    let mut cmd = env.cmd(&["list"]);
    cmd.current_dir(elsewhere.path()).env("MEMOIR_STORE", root);
    assert!(String::from_utf8_lossy(&cmd.output().expect("run").stdout).contains("project/a"));
}

#[test]
fn remember_writes_file_log_and_index_in_english_and_chinese() {
    let env = Env::new();
    // A team that keeps user/ in the repository (the index shows each scope).
    env.write("memory/config.yaml", "user_store: shared\n");
    let (code, _, err) = env.remember(
        "project/Test Command",
        "Run the test suite with `pnpm test`, never `npm test`.",
        &[
            "--tags",
            "tooling,tests",
            "--confidence",
            "0.9",
            "--body",
            "Why: CI uses pnpm.",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let file = env.read("memory/project/test-command.md");
    assert!(file.starts_with("---\nname: Test Command\n"), "{file}");
    assert!(file.contains("confidence: 0.9\n") && file.contains("created: 2026-11-29T10:41:07Z\n"));
    assert!(file.ends_with("\nWhy: CI uses pnpm.\n"));
    assert_eq!(
        env.remember("user/偏好", "用户喜欢简短的回答", &["--type", "user"])
            .0,
        0
    );
    let index = env.read("MEMORY.md");
    assert!(
        index.contains("- [test-command](memory/project/test-command.md) — Run the test suite"),
        "{index}"
    );
    assert!(
        index.contains("- [偏好](memory/user/偏好.md) — 用户喜欢简短的回答"),
        "{index}"
    );
    assert!(
        index.find("## Scope: project").expect("project")
            < index.find("## Scope: user").expect("user")
    );
    let show = env.ok(&["show", "project/test-command"]);
    assert_eq!(show, file);
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["--json", "list"])).expect("json");
    assert_eq!(json["format"], 1);
    let json = &json["memories"];
    assert_eq!(json.as_array().map(Vec::len), Some(2));
    assert_eq!(json[0]["key"], "project/test-command");
    assert_eq!(json[0]["tags"][1], "tests");
    env.ok(&["check"]);
    // Reindexing an index in sync changes nothing.
    let before = env.snapshot();
    env.ok(&["reindex"]);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn collisions_become_proposals_until_replace_or_keep_both() {
    let env = Env::new();
    assert_eq!(
        env.remember("project/db", "Postgres 15 is the database", &[])
            .0,
        0
    );
    // The same memory again changes nothing.
    let (code, out, _) = env.remember("project/db", "Postgres 15 is the database", &[]);
    assert_eq!(code, 0);
    assert!(out.contains("nothing changed"), "{out}");
    // A different version is shown as a diff and kept as a proposal.
    let before = env.read("memory/project/db.md");
    let (code, out, _) = env.remember("project/db", "Postgres 16 is the database", &[]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("-description: Postgres 15") && out.contains("+description: Postgres 16"),
        "{out}"
    );
    assert_eq!(env.read("memory/project/db.md"), before);
    assert!(env.log_text().contains("\"op\":\"propose\""));
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(status["proposals"].as_array().map(Vec::len), Some(1));
    // A near-duplicate under another name is caught too.
    let (code, out, _) = env.remember("project/database", "Postgres 15 is the database", &[]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("project/db says nearly the same"), "{out}");
    assert!(!env.path("memory/project/database.md").exists());
    // --replace overwrites the same key and keeps `created`.
    assert_eq!(
        env.remember("project/db", "Postgres 16 is the database", &["--replace"])
            .0,
        0
    );
    assert!(env.read("memory/project/db.md").contains("Postgres 16"));
    // --replace of a near-duplicate forgets it as superseded.
    let (code, out, _) = env.remember(
        "project/database",
        "Postgres 16 is the database",
        &["--replace"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(!env.path("memory/project/db.md").exists());
    assert!(env.log_text().contains("superseded by project/database"));
    // --keep-both writes beside the old one.
    assert_eq!(
        env.remember(
            "project/database",
            "MySQL 8 is the database",
            &["--keep-both"]
        )
        .0,
        0
    );
    assert!(env.read("memory/project/database-2.md").contains("MySQL 8"));
    env.ok(&["check"]);
}

#[test]
fn expect_is_a_compare_and_swap() {
    let env = Env::new();
    let out = env
        .cmd(&["--json", "remember", "project/x", "-d", "one", "-s", "s"])
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let first = v["id"].as_str().expect("id").to_string();
    assert_eq!(
        env.remember("project/x", "two", &["--replace", "--expect", &first])
            .0,
        0
    );
    // The memory moved on: the same expectation now loses, and nothing is written.
    let before = env.snapshot();
    let (code, _, err) = env.remember("project/x", "three", &["--replace", "--expect", &first]);
    assert_eq!(code, 4);
    assert!(err.contains("moved on"), "{err}");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn forget_removes_the_file_and_logs_the_reason() {
    let env = Env::new();
    assert_eq!(env.remember("task/deploy", "Deploy on Fridays", &[]).0, 0);
    env.ok(&[
        "forget",
        "task/deploy",
        "--reason",
        "we stopped deploying on Fridays",
    ]);
    assert!(!env.path("memory/task/deploy.md").exists());
    assert!(!env.read("MEMORY.md").contains("deploy"));
    assert!(env
        .log_text()
        .contains("\"reason\":\"we stopped deploying on Fridays\""));
    let err = env.fails(&["forget", "task/deploy", "--reason", "again"], 1);
    assert!(err.contains("no memory task/deploy"), "{err}");
    env.ok(&["check"]);
}

#[test]
fn rebuild_after_deleting_every_memory_file_is_byte_exact() {
    let env = Env::new();
    assert_eq!(
        env.remember(
            "project/a",
            "alpha fact",
            &["--body", "## heading\n```\ncode\n```\n---\n"]
        )
        .0,
        0
    );
    assert_eq!(
        env.remember(
            "user/b",
            "beta fact",
            &["--type", "user", "--body", "line\r\nCRLF\r\n"]
        )
        .0,
        0
    );
    assert_eq!(
        env.remember("task/c", "gamma fact", &["--body", "中文正文 trailing  "])
            .0,
        0
    );
    env.ok(&["forget", "task/c", "--reason", "done"]);
    env.ok(&["note", "a note"]);
    env.ok(&["check"]);
    let before = env.snapshot();
    env.delete_memory_files();
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm index");
    std::fs::write(env.path("MEMORY.md"), "").expect("empty index");
    let err = env.fails(&["check"], 1);
    assert!(err.contains("memory/project/a.md"), "{err}");
    env.ok(&["rebuild"]);
    // The team's text around the markers is not in the logs; everything else is back.
    let after: Vec<_> = env
        .snapshot()
        .into_iter()
        .filter(|(p, _)| p != "MEMORY.md")
        .collect();
    let wanted: Vec<_> = before
        .iter()
        .filter(|(p, _)| p != "MEMORY.md")
        .cloned()
        .collect();
    assert_eq!(after, wanted);
    let index = env.read("MEMORY.md");
    let block = |s: &str| s[s.find("<!-- memoir:index:start").expect("start")..].to_string();
    let old_index = String::from_utf8(
        before
            .iter()
            .find(|(p, _)| p == "MEMORY.md")
            .expect("index")
            .1
            .clone(),
    )
    .expect("utf8");
    assert_eq!(block(&index), block(&old_index));
    env.ok(&["check"]);
    env.ok(&["rebuild", "--check"]);
}

#[test]
fn rebuild_restores_memory_md_byte_for_byte() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    let before = env.snapshot();
    env.delete_memory_files();
    env.ok(&["rebuild"]);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn rebuild_after_memory_md_is_deleted_restores_the_text_around_the_list() {
    // Never committed: what init wrote comes back.
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    let before = env.read("MEMORY.md");
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm");
    env.fails(&["check"], 1);
    env.ok(&["rebuild"]);
    assert_eq!(env.read("MEMORY.md"), before);
    // Committed with the team's own text: HEAD's text comes back, and a
    // write (not only rebuild) restores it too.
    let team = before.replace(
        "# Memory\n",
        "# Memory\n\n## Team rules\n- Deploys on Tuesdays.\n",
    );
    env.write("MEMORY.md", &team);
    env.ok(&["consolidate", "--yes"]);
    let committed = env.read("MEMORY.md");
    assert!(committed.contains("Deploys on Tuesdays."), "{committed}");
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm");
    env.ok(&["rebuild"]);
    assert_eq!(env.read("MEMORY.md"), committed);
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm");
    assert_eq!(env.remember("project/b", "beta", &[]).0, 0);
    let after = env.read("MEMORY.md");
    assert!(
        after.starts_with("# Memory\n\n## Team rules\n- Deploys on Tuesdays.\n")
            && after.contains("[b]"),
        "{after}"
    );
}

#[test]
fn a_view_rebuild_cannot_write_stops_it_with_the_file_named() {
    let env = Env::new();
    for key in ["project/a", "project/b", "project/c"] {
        assert_eq!(env.remember(key, &format!("fact {key}"), &[]).0, 0);
    }
    env.delete_memory_files();
    // A folder where a view goes: its write fails on a writer thread.
    std::fs::create_dir_all(env.path("memory/project/b.md/in-the-way")).expect("mkdir");
    let err = env.fails(&["rebuild"], 1);
    assert!(err.contains("memory/project/b.md"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::remove_dir_all(env.path("memory/project/b.md")).expect("rm");
    env.ok(&["rebuild"]);
    env.ok(&["check"]);
}

#[test]
fn causality_ignores_a_pinned_or_backward_clock() {
    for times in [
        vec!["2026-11-29T10:00:00Z"; 6],
        vec![
            "2026-11-29T10:00:00Z",
            "2026-11-29T09:00:00Z",
            "2026-11-28T23:00:00Z",
            "2025-01-01T00:00:00Z",
            "2024-06-01T00:00:00Z",
            "2020-01-01T00:00:00Z",
        ],
    ] {
        let mut env = Env::new();
        for (i, t) in times.iter().enumerate() {
            env.now = t.to_string();
            let (code, _, err) =
                env.remember("project/fact", &format!("version {i}"), &["--replace"]);
            assert_eq!(code, 0, "{err}");
        }
        assert!(env.read("memory/project/fact.md").contains("version 5"));
        env.delete_memory_files();
        env.ok(&["rebuild"]);
        assert!(env
            .read("memory/project/fact.md")
            .contains("description: version 5"));
        env.ok(&["check"]);
    }
}

#[test]
fn record_turns_hand_edits_adds_and_deletes_into_events() {
    let env = Env::new();
    assert_eq!(env.remember("project/edit-me", "before the edit", &[]).0, 0);
    assert_eq!(env.remember("project/delete-me", "to be deleted", &[]).0, 0);
    let edited = env
        .read("memory/project/edit-me.md")
        .replace("before the edit", "after the edit");
    env.write("memory/project/edit-me.md", &edited);
    env.write(
        "memory/user/added.md",
        "---\nname: added\ndescription: written by hand\ntype: user\n---\nBody.\n",
    );
    std::fs::remove_file(env.path("memory/project/delete-me.md")).expect("rm");
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/edit-me.md: error[drift:edited]"),
        "{err}"
    );
    assert!(
        err.contains("memory/user/added.md: error[drift:added]"),
        "{err}"
    );
    assert!(
        err.contains("memory/project/delete-me.md: error[drift:deleted]"),
        "{err}"
    );
    // rebuild would not destroy the hand edit or the hand add.
    let err = env.fails(&["rebuild", "--check"], 1);
    assert!(
        err.contains("memory/project/edit-me.md") && err.contains("memory/user/added.md"),
        "{err}"
    );
    assert!(env
        .read("memory/project/edit-me.md")
        .contains("after the edit"));
    let out = env.ok(&["record"]);
    assert!(out.contains("remember project/edit-me: edited"), "{out}");
    assert!(
        out.contains("remember user/added: added (filled in source, confidence, created, updated)"),
        "{out}"
    );
    assert!(out.contains("forget project/delete-me: deleted"), "{out}");
    let added = env.read("memory/user/added.md");
    assert!(
        added.contains("source: hand edit by Ada <ada@example.com>\n"),
        "{added}"
    );
    assert!(added.ends_with("---\nBody.\n"));
    env.ok(&["check"]);
    assert!(env.read("MEMORY.md").contains("memory/user/added.md"));
    // Recording again finds nothing; rebuild from logs gives the same files.
    assert_eq!(env.ok(&["record"]), "");
    let before = env.snapshot();
    env.delete_memory_files();
    env.ok(&["rebuild"]);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn a_crash_between_log_and_view_is_a_stale_view_that_rebuild_repairs() {
    let env = Env::new();
    assert_eq!(env.remember("project/x", "first version", &[]).0, 0);
    crash_after_log_append(
        &env,
        &[
            "remember",
            "project/x",
            "-d",
            "second version",
            "-s",
            "s",
            "--replace",
        ],
    );
    crash_after_log_append(
        &env,
        &["remember", "project/new", "-d", "brand new", "-s", "s"],
    );
    assert!(env.read("memory/project/x.md").contains("first version"));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/x.md: error[drift:stale]"),
        "{err}"
    );
    assert!(
        err.contains("memory/project/new.md: error[drift:missing]"),
        "{err}"
    );
    // record leaves memoir's own leftovers to rebuild.
    assert_eq!(env.ok(&["record"]), "");
    env.ok(&["rebuild"]);
    assert!(env.read("memory/project/x.md").contains("second version"));
    assert!(env.read("memory/project/new.md").contains("brand new"));
    env.ok(&["check"]);
}

#[test]
fn a_hand_edit_is_kept_from_rebuild_unless_forced() {
    let env = Env::new();
    assert_eq!(env.remember("project/x", "original", &[]).0, 0);
    env.write(
        "memory/project/x.md",
        env.read("memory/project/x.md")
            .replace("original", "my edit"),
    );
    let err = env.fails(&["rebuild"], 1);
    assert!(err.contains("memory/project/x.md"), "{err}");
    assert!(env.read("memory/project/x.md").contains("my edit"));
    env.fails(&["rebuild", "--check"], 1);
    // A write over unrecorded edits is refused too: they would be lost.
    let (code, _, err) = env.remember("project/x", "other", &["--replace"]);
    assert_eq!(code, 4, "{err}");
    assert!(env.read("memory/project/x.md").contains("my edit"));
    env.ok(&["rebuild", "--force"]);
    assert!(env.read("memory/project/x.md").contains("original"));
    env.ok(&["check"]);
}

#[test]
fn a_torn_final_entry_is_skipped_and_repaired_by_the_next_writer() {
    let env = Env::new();
    env.ok(&["note", "first"]);
    let log = env.first_log();
    let mut text = env.read(&log);
    text.push_str(
        "## 10:41:07Z note · 01M8KE9VDRYT8YR076RY78CYNK\n<!-- memoir {\"v\":1,\"id\":\"01M8KE",
    );
    env.write(&log, &text);
    let out = env.ok(&["check"]);
    assert_eq!(out, "");
    env.ok(&["note", "second"]);
    let after = env.read(&log);
    // The repair only appends: the log never shrinks.
    assert!(after.starts_with(&text));
    assert!(after.contains("<!-- memoir:torn -->"));
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("torn"), "{err}");
    assert_eq!(env.log_text().matches("<!-- memoir:end ").count(), 2);
}

#[test]
fn events_seen_twice_apply_once_and_unknown_prev_is_a_root() {
    let env = Env::new();
    assert_eq!(env.remember("project/x", "one", &[]).0, 0);
    let log = env.first_log();
    // A cherry-pick copied the same entries into another writer's log.
    env.write("memory/log/2026-11-30/other-0000000a.md", env.read(&log));
    env.ok(&["check"]);
    // An entry whose prev is unknown is treated as a first version, with a warning.
    let text = env.read(&log).replace(
        "\"key\":\"project/x\"",
        "\"key\":\"project/y\",\"prev\":[\"01M8KE9VDRYT8YR076RY78CYNK\"]",
    );
    let text = text
        .replace("remember project/x", "remember project/y")
        .replace("name: x\n", "name: y\n");
    env.write(
        "memory/log/2026-11-30/third-0000000b.md",
        text.replace(
            &text[text.find("01").expect("id")..text.find("01").expect("id") + 26],
            "01M8KE9VDRYT8YR076RY78CYNZ",
        ),
    );
    env.ok(&["rebuild"]);
    assert!(env.read("memory/project/y.md").contains("name: y"));
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("unknown event"), "{err}");
    let _ = meta_lines(&env);
    assert!(exists(&env.path("memory/project/x.md")));
}

#[test]
fn per_write_commands_read_a_bounded_number_of_memory_files() {
    let env = Env::new();
    for i in 0..60 {
        env.write(
            &format!("memory/project/fact-{i}.md"),
            format!("---\nname: fact-{i}\ndescription: distinct fact number {i} about subsystem {i}\ntype: project\nsource: s\n---\n"),
        );
    }
    env.ok(&["record"]);
    // Let the files' mtimes fall behind the persistent index's, then warm it.
    std::thread::sleep(std::time::Duration::from_millis(20));
    env.ok(&["list"]);
    // Neither reads more than the files it replaces, nor lists the store,
    // however many writes came before it since the index was saved.
    let flat = |args: &[&str]| {
        let s = env.stats(args);
        assert!(
            s.read <= 2 && s.listed == 0 && s.replays == 0,
            "{args:?}: {s:?}"
        );
    };
    for round in 0..3 {
        flat(&["note", "a note"]);
        flat(&[
            "remember",
            &format!("project/new-fact-{round}"),
            "-d",
            &format!("brand new {round}"),
            "-s",
            "s",
        ]);
        flat(&[
            "remember",
            &format!("project/fact-{round}"),
            "-d",
            "a changed fact",
            "-s",
            "s",
            "--replace",
        ]);
        flat(&[
            "forget",
            &format!("project/fact-{}", 10 + round),
            "--reason",
            "obsolete",
        ]);
        // A change kept as a proposal reads the file it would change.
        flat(&[
            "remember",
            &format!("project/fact-{}", 20 + round),
            "-d",
            "changed again",
            "-s",
            "s",
        ]);
        flat(&[
            "remember",
            &format!("project/fact-{}", 30 + round),
            "-d",
            "kept both",
            "-s",
            "s",
            "--keep-both",
        ]);
    }
    // What they wrote is what a full refresh finds: MEMORY.md unchanged by
    // reindex, and check clean.
    let index = env.read("MEMORY.md");
    env.ok(&["reindex"]);
    assert_eq!(env.read("MEMORY.md"), index);
    // Whole-store commands do read everything.
    assert!(env.stats(&["check"]).read >= 60);
    env.ok(&["check"]);
}

#[test]
fn a_fork_from_another_writer_is_a_conflict_until_replaced() {
    let (env, _) = crate::util::forked();
    // The view shows what both sides agreed on: the common ancestor.
    assert!(env
        .read("memory/project/db.md")
        .contains("description: Postgres 15"));
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[conflict]"), "{err}");
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(status["conflicts"][0], "project/db");
    assert!(env.ok(&["list"]).contains("[conflict]"));
    let (code, _, err) = env.run(&["show", "project/db"]);
    assert_eq!(code, 0);
    assert!(err.contains("open conflict"), "{err}");
    // A plain write is kept as a proposal; --replace decides.
    assert_eq!(env.remember("project/db", "Postgres 17", &[]).0, 4);
    assert_eq!(
        env.remember("project/db", "Postgres 17", &["--replace"]).0,
        0
    );
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("conflict"), "{err}");
    assert!(env.read("memory/project/db.md").contains("Postgres 17"));
}

#[test]
fn memory_md_keeps_the_most_valuable_lines_within_its_budget() {
    let env = Env::new();
    env.write(
        "memory/config.yaml",
        "index_budget: 12\nuser_store: shared\n",
    );
    env.write("MEMORY.md", "# Team notes\n\nKeep this line.\n");
    for i in 0..15 {
        let conf = format!("0.{}", i % 10);
        let (code, _, err) = env.remember(
            &format!("project/fact-{i:02}"),
            &format!("project fact {i} about area {i}"),
            &["--confidence", &conf],
        );
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(
        env.remember(
            "user/likes-tea",
            "The user likes tea",
            &["--type", "user", "--confidence", "0.1"]
        )
        .0,
        0
    );
    assert_eq!(
        env.remember(
            "project/no-mocks",
            "Never mock the database",
            &["--type", "feedback", "--confidence", "0.2"]
        )
        .0,
        0
    );
    let index = env.read("MEMORY.md");
    assert!(
        index.starts_with("# Team notes\n\nKeep this line.\n"),
        "{index}"
    );
    let start = index.find("<!-- memoir:index:start -->").expect("start");
    let block: Vec<&str> = index[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("<!-- memoir:index:end"))
        .collect();
    assert!(block.len() <= 12, "{block:#?}");
    // user and feedback memories come first, whatever their confidence.
    assert!(
        index.contains("memory/user/likes-tea.md") && index.contains("memory/project/no-mocks.md"),
        "{index}"
    );
    // Then the most confident project facts.
    assert!(
        index.contains("fact-09") && !index.contains("fact-00"),
        "{index}"
    );
    let last = block.last().expect("a line");
    assert!(
        last.contains("more: find them with `memoir recall"),
        "{last}"
    );
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[budget]"), "{err}");
    // In sync: regenerating changes nothing.
    let before = env.snapshot();
    env.ok(&["reindex"]);
    assert_eq!(env.snapshot(), before);
}

/// `memoir --version` names the release and, built from a git checkout,
/// the commit.
#[test]
fn version_names_the_commit() {
    let env = Env::bare();
    let out = env.ok(&["--version"]);
    assert!(
        out.starts_with(concat!("memoir ", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    if std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".git")
        .exists()
    {
        let rev = out.split("(rev ").nth(1).unwrap_or("");
        assert!(
            rev.len() >= 13 && rev[..12].bytes().all(|b| b.is_ascii_hexdigit()),
            "{out}"
        );
    }
}

/// A writer killed between its log entry and its view leaves memoir's own
/// stale file: the next write to that memory goes on from what the logs
/// say (it is no one's edit), and forget too, instead of refusing them all.
#[test]
fn a_stale_view_does_not_block_the_next_write_to_its_memory() {
    let env = Env::new();
    assert_eq!(env.remember("project/x", "first version", &[]).0, 0);
    let crashed = |args: &[&str]| crash_after_log_append(&env, args);
    crashed(&[
        "remember",
        "project/x",
        "-d",
        "second version",
        "-s",
        "s",
        "--replace",
    ]);
    assert!(env.read("memory/project/x.md").contains("first version"));
    // Saying what the logs already say is unchanged; saying more replaces.
    let out = env.ok(&[
        "remember",
        "project/x",
        "-d",
        "second version",
        "-s",
        "s",
        "--replace",
    ]);
    assert!(out.contains("nothing changed"), "{out}");
    assert!(
        env.read("memory/project/x.md").contains("second version"),
        "brought up to date"
    );
    env.ok(&["check"]);
    let (code, out, err) = env.run(&[
        "remember",
        "project/x",
        "-d",
        "third version",
        "-s",
        "s",
        "--replace",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(env.read("memory/project/x.md").contains("third version"));
    env.ok(&["check"]);
    crashed(&[
        "remember",
        "project/x",
        "-d",
        "fourth version",
        "-s",
        "s",
        "--replace",
    ]);
    env.ok(&["forget", "project/x", "--reason", "done"]);
    assert!(!env.path("memory/project/x.md").exists());
    env.ok(&["check"]);
    // A hand edit is still refused.
    assert_eq!(env.remember("project/y", "mine", &[]).0, 0);
    let text = env.read("memory/project/y.md");
    env.write("memory/project/y.md", text.replace("mine", "edited"));
    let (code, _, err) = env.run(&["forget", "project/y", "--reason", "r"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("memoir record"), "{err}");
}

/// Runs a command that stops (as a crash would) right after its log
/// entry is appended, before any view is written.
fn crash_after_log_append(env: &Env, args: &[&str]) {
    let out = env.at_failpoint("after-log-append", args);
    assert!(!out.status.success(), "{args:?}");
}

/// A view a crash never wrote is memoir's, not a hand deletion: the next
/// write of that key takes what the logs say (and writes the view),
/// whatever it then decides, and check agrees.
#[test]
fn a_view_a_crash_never_wrote_does_not_block_the_next_write() {
    let env = Env::new();
    crash_after_log_append(
        &env,
        &[
            "remember",
            "project/a",
            "-d",
            "alpha",
            "-s",
            "stated by the user",
        ],
    );
    assert!(!env.path("memory/project/a.md").exists());
    let err = env.fails(&["check"], 1);
    assert!(err.contains("drift:missing"), "{err}");
    // The same again: nothing to log, the view written.
    let (code, _, err) = env.remember("project/a", "alpha", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(env.read("memory/project/a.md").contains("alpha"));
    env.ok(&["check"]);
    // Something else: a proposal (exit 4) as for any memory, and the view
    // of what the logs say is written all the same.
    crash_after_log_append(
        &env,
        &[
            "remember",
            "project/b",
            "-d",
            "beta",
            "-s",
            "stated by the user",
        ],
    );
    let (code, out, err) = env.remember("project/b", "beta, changed", &[]);
    assert_eq!(code, 4, "{err}");
    assert!(
        format!("{out}{err}").contains("kept as proposal"),
        "{out}{err}"
    );
    assert!(env
        .read("memory/project/b.md")
        .contains("description: beta\n"));
    env.ok(&["check"]);
    // A forget killed before its view went: the file is memoir's leftover,
    // removed as the logs say, even when the write then only proposes.
    assert_eq!(env.remember("project/c", "gamma", &[]).0, 0);
    crash_after_log_append(&env, &["forget", "project/c", "--reason", "gone"]);
    assert!(env.path("memory/project/c.md").exists());
    let (code, out, err) = env.remember("project/c", "alpha", &[]);
    assert_eq!(code, 4, "a near-duplicate of project/a: {out}{err}");
    assert!(!env.path("memory/project/c.md").exists(), "{out}{err}");
    env.ok(&["check"]);
    // A file memoir wrote as the logs say and someone deleted is still a
    // hand deletion, which the writer must not paper over.
    std::fs::remove_file(env.path("memory/project/a.md")).expect("rm");
    let (code, _, err) = env.remember("project/a", "alpha, again", &[]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("memoir record"), "{err}");
}

/// A consolidation after a write killed between its log entry and its
/// view commits the view the logs give, not the stale one (nor a leftover
/// of a forget).
#[test]
fn consolidate_commits_the_view_a_killed_write_left_behind_brought_up_to_date() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    assert_eq!(env.remember("project/gone", "to forget", &[]).0, 0);
    env.ok(&["consolidate"]);
    let user = "stated by the user";
    crash_after_log_append(
        &env,
        &[
            "remember",
            "project/a",
            "-d",
            "alpha two",
            "-s",
            user,
            "--replace",
        ],
    );
    crash_after_log_append(&env, &["forget", "project/gone", "--reason", "done"]);
    assert!(env
        .read("memory/project/a.md")
        .contains("description: alpha\n"));
    env.ok(&["consolidate"]);
    let committed = env.git(&["show", "HEAD:memory/project/a.md"]);
    assert!(committed.contains("description: alpha two"), "{committed}");
    let tree = env.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!tree.contains("memory/project/gone.md"), "{tree}");
    assert!(!env.git(&["show", "HEAD:MEMORY.md"]).contains("to forget"));
    env.ok(&["check"]);
    env.assert_store_committed("after the consolidation");
}

/// A rollback after a killed write commits no view it left behind.
#[test]
fn rollback_commits_no_view_a_killed_write_left_behind() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    env.ok(&["consolidate"]);
    let first = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(env.remember("project/b", "beta", &[]).0, 0);
    env.ok(&["consolidate"]);
    crash_after_log_append(&env, &["forget", "project/b", "--reason", "gone"]);
    env.ok(&["rollback", &first]);
    let tree = env.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!tree.contains("memory/project/b.md"), "{tree}");
    env.ok(&["check"]);
}

/// The temporary files of writes killed before their rename, beside the
/// views and beside MEMORY.md, are removed by rebuild (and so by the
/// consolidation that finishes an interrupted one); a team's own dotfiles
/// stay.
#[test]
fn rebuild_removes_the_temporary_files_of_killed_writes() {
    let env = Env::new();
    env.remember("project/x", "a fact", &[]);
    // Named as a write names them now (pid, counter) and as it did before.
    env.write("memory/project/.x.md.memoir-4242-0", "half a view");
    env.write("memory/project/.x.md.memoir-4242", "an older half view");
    env.write(".MEMORY.md.memoir-4242-3", "half an index");
    env.write(".editorconfig", "root = true\n");
    env.ok(&["rebuild"]);
    assert!(!env.path("memory/project/.x.md.memoir-4242-0").exists());
    assert!(!env.path("memory/project/.x.md.memoir-4242").exists());
    assert!(!env.path(".MEMORY.md.memoir-4242-3").exists());
    assert!(env.path(".editorconfig").exists());
}

/// What a write killed before its rename left is explained by `check`
/// (a warning naming the file, exit 0) and removed by `rebuild`, in the
/// work tree and in the clone's local state, where a killed save of the
/// persistent index leaves a file as large as the index; a live writer's
/// temporary file in local state (no lock covers it) is left to it.
#[test]
fn check_names_the_temporary_files_of_killed_writes_and_rebuild_removes_them() {
    let env = Env::new();
    env.remember("project/x", "a fact", &[]);
    // A writer that has exited: its pid is no process now.
    let mut gone = std::process::Command::new("true").spawn().expect("true");
    let dead = gone.id();
    gone.wait().expect("wait");
    let view = format!("memory/project/.x.md.memoir-{dead}-0");
    env.write(&view, "half a view");
    let state = env.state_dir();
    let index = state.join(format!(".index.bin.memoir-{dead}-1"));
    let live = state.join(format!(".index.bin.memoir-{}-0", std::process::id()));
    std::fs::write(&index, vec![0u8; 4096]).expect("write");
    std::fs::write(&live, "a save under way").expect("write");
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "{view}: warning[temporary]: the temporary file of a write killed before it finished; `memoir rebuild` removes it"
        )),
        "{err}"
    );
    env.ok(&["rebuild"]);
    assert!(!env.path(&view).exists());
    assert!(!index.exists());
    assert!(live.exists());
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("temporary"), "{err}");
}
