//! Consolidation into git commits, with the real git as the oracle.

use crate::util::Env;

/// A store in a repository with a first (empty) commit.
fn rooted() -> Env {
    let env = Env::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    env
}

/// A repository with code, one staged and one unstaged unrelated change,
/// and a store with pending work.
fn scenario() -> Env {
    let env = Env::new();
    env.write("src/app.rs", "fn main() {}\n");
    env.git(&["add", "src/app.rs"]);
    env.git(&["commit", "-qm", "code"]);
    env.write("src/app.rs", "fn main() { println!(\"wip\"); }\n");
    env.write("staged.txt", "staged by the user\n");
    env.git(&["add", "staged.txt"]);
    assert_eq!(env.remember("project/a", "alpha fact", &[]).0, 0);
    assert_eq!(env.remember("project/b", "beta fact", &["--propose"]).0, 0);
    assert_eq!(
        env.remember("project/old", "an old fact", &["--expires", "2020-01-01"])
            .0,
        0
    );
    env.ok(&["note", "a session note"]);
    env
}

#[test]
fn a_consolidation_commits_only_the_store_and_leaves_the_rest_alone() {
    let env = scenario();
    let out = env.ok(&["consolidate"]);
    assert!(
        out.contains("add project/b") && out.contains("expire project/old"),
        "{out}"
    );
    let files = env.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert!(!files.is_empty());
    for f in files.lines() {
        // .gitattributes: the lines init wrote, which a clone needs.
        assert!(
            f == "MEMORY.md" || f.starts_with("memory/") || f == ".gitattributes",
            "committed {f}\n{files}"
        );
    }
    assert!(
        files.contains("memory/project/b.md") && files.contains("memory/log/"),
        "{files}"
    );
    // The store is clean; the user's staged and unstaged work is as it was.
    env.assert_store_committed("after");
    let status = env.git(&["status", "--porcelain"]);
    assert!(status.lines().any(|l| l == "A  staged.txt"), "{status}");
    assert!(status.lines().any(|l| l == " M src/app.rs"), "{status}");
    assert_eq!(env.read("src/app.rs"), "fn main() { println!(\"wip\"); }\n");
    env.git(&["fsck", "--strict"]);
    // The next plain `git commit` takes the staged file and reverts nothing of memoir's.
    env.git(&["commit", "-qm", "user commit"]);
    let user = env.git(&["show", "--name-status", "--format=", "HEAD"]);
    assert_eq!(user.trim(), "A\tstaged.txt", "{user}");
    env.ok(&["check"]);
    let message = env.git(&["log", "-1", "--format=%B", "HEAD~1"]);
    assert!(
        message.contains("Memoir-Consolidation: ") && message.contains("+ project/b"),
        "{message}"
    );
    let versions = env.ok(&["versions"]);
    assert!(
        // b proposed and added, a written directly, old expired.
        versions.contains("2 added, 0 changed, 1 forgotten, 0 conflicts"),
        "{versions}"
    );
    // Nothing pending: a second consolidation plans nothing and commits nothing new.
    let head = env.git(&["rev-parse", "HEAD"]);
    env.ok(&["consolidate"]);
    let log = env.git(&["log", "--format=%s", &format!("{}..HEAD", head.trim())]);
    assert!(log.lines().count() <= 1, "{log}");
}

#[test]
fn dry_run_changes_nothing() {
    let env = scenario();
    let before = env.snapshot();
    let head = env.git(&["rev-parse", "HEAD"]);
    let out = env.ok(&["consolidate", "--dry-run"]);
    // b proposed and added, a written directly, old expired: as the run says.
    assert!(
        out.contains("would consolidate: 2 added, 0 changed, 1 forgotten"),
        "{out}"
    );
    assert_eq!(env.snapshot(), before);
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
}

#[test]
fn each_git_refusal_appends_nothing() {
    // No identity.
    let env = scenario();
    std::fs::write(
        env.dir.path().join("home/gitconfig"),
        "[init]\n\tdefaultBranch = main\n",
    )
    .expect("config");
    let logs = env.log_text();
    let err = env.fails(&["consolidate"], 1);
    assert!(err.contains("no git identity"), "{err}");
    assert_eq!(env.log_text(), logs);
    // MEMOIR_AUTHOR supplies one.
    let mut cmd = env.cmd(&["consolidate"]);
    cmd.env("MEMOIR_AUTHOR", "Memo Bot <bot@example.com>");
    assert!(cmd.output().expect("run").status.success());
    assert_eq!(
        env.git(&["log", "-1", "--format=%an <%ae>"]).trim(),
        "Memo Bot <bot@example.com>"
    );

    // Detached HEAD, a merge in progress, git's index lock held.
    for case in ["detached", "merge", "index-lock"] {
        let env = scenario();
        match case {
            "detached" => {
                let head = env.git(&["rev-parse", "HEAD"]);
                env.git(&["checkout", "-q", head.trim()]);
            }
            "merge" => {
                let head = env.git(&["rev-parse", "HEAD"]);
                std::fs::write(env.path(".git/MERGE_HEAD"), head).expect("merge head");
            }
            // Held by another (live) process: memoir does not know whose it is.
            _ => std::fs::write(env.path(".git/index.lock"), "").expect("lock"),
        }
        let logs = env.log_text();
        let err = env.fails(&["consolidate"], 1);
        let expected = match case {
            "detached" => "detached",
            "merge" => "merge is in progress",
            _ => "index is locked",
        };
        assert!(err.contains(expected), "{case}: {err}");
        assert_eq!(env.log_text(), logs, "{case}: something was appended");
    }
}

#[test]
fn a_conflicting_proposal_is_never_applied_without_a_decision() {
    let env = rooted();
    assert_eq!(
        env.remember("project/db", "Postgres 15 is the database", &[])
            .0,
        0
    );
    let (code, _, _) = env.remember("project/db", "MySQL 8 is the database", &[]);
    assert_eq!(code, 4);
    let before = env.read("memory/project/db.md");
    let (code, out, _) = env.run(&["consolidate"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("conflict project/db: differs from the current version"),
        "{out}"
    );
    assert_eq!(env.read("memory/project/db.md"), before);
    assert_eq!(env.pending_proposals(), 1, "still pending");
    env.ok(&["check"]);
}

/// A proposal to change a memory that is forgotten afterwards (by
/// `forget`, or superseded by `remember --replace`) never brings it back
/// without a decision; one made after the forget adds it as new.
#[test]
fn a_proposal_for_a_memory_forgotten_since_waits_for_a_human() {
    let env = rooted();
    env.remember("project/branching", "Branches are feature/<ticket>", &[]);
    let (code, _, _) = env.remember("project/branching", "Branches are feat/<ticket>", &[]);
    assert_eq!(code, 4, "kept as a proposal");
    env.ok(&[
        "forget",
        "project/branching",
        "--reason",
        "no longer a rule",
    ]);
    env.remember("project/test-command", "Run the tests with make", &[]);
    let (code, _, _) = env.remember("project/test-command", "Run the tests with just", &[]);
    assert_eq!(code, 4);
    // A near-duplicate under another key, replacing the old memory.
    let (_, out, _) = env.remember(
        "project/run-tests",
        "Run the tests with make",
        &["--replace"],
    );
    assert!(out.contains("superseded by project/run-tests"), "{out}");
    let (code, out, _) = env.run(&["consolidate", "--yes"]);
    assert_eq!(code, 4, "{out}");
    for key in ["project/branching", "project/test-command"] {
        assert!(
            out.contains(&format!(
                "conflict {key}: its memory was forgotten after it was proposed"
            )),
            "{out}"
        );
        assert!(!env.path(&format!("memory/{key}.md")).exists(), "{key}");
    }
    for key in ["project/branching", "project/test-command"] {
        // A proposal, not a fork: nothing about branches to say.
        let out = env.ok(&["resolve", key, "--keep"]);
        assert!(!out.contains("branches"), "{out}");
        assert!(!env.path(&format!("memory/{key}.md")).exists(), "{key}");
    }
    // Proposed again after the forget: new knowledge, added.
    env.remember(
        "project/branching",
        "Branches are topic/<name>",
        &["--propose"],
    );
    let out = env.ok(&["consolidate", "--yes"]);
    assert!(out.contains("add project/branching"), "{out}");
    assert!(env
        .read("memory/project/branching.md")
        .contains("topic/<name>"));
}

#[test]
fn concurrent_consolidations_serialize() {
    let env = scenario();
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let children: Vec<_> = (0..2)
        .map(|_| env.spawn(&exe, &["consolidate"], &[("MEMOIR_NOW", env.now.clone())]))
        .collect();
    for mut c in children {
        let status = c.wait().expect("wait");
        assert!(matches!(status.code(), Some(0) | Some(5)), "{status:?}");
    }
    env.ok(&["check"]);
    env.git(&["fsck", "--strict"]);
    env.assert_store_committed("after");
    assert_eq!(
        env.log_text().matches("\"op\":\"consolidate\"").count(),
        1,
        "one consolidation did the work"
    );
}

#[test]
fn an_interrupted_consolidation_is_finished_by_the_next_one() {
    // The uninterrupted result, for comparison.
    let clean = scenario();
    clean.ok(&["consolidate"]);
    let views = |env: &Env| -> Vec<(String, Vec<u8>)> {
        env.snapshot()
            .into_iter()
            .filter(|(p, _)| !p.starts_with("memory/log/"))
            .collect()
    };
    for failpoint in [
        "after-log-append",
        "mid-view-update",
        "before-commit",
        "after-index",
    ] {
        let env = scenario();
        let out = env.at_failpoint(failpoint, &["consolidate"]);
        assert!(!out.status.success(), "{failpoint}");
        env.ok(&["consolidate"]);
        assert_eq!(views(&env), views(&clean), "{failpoint}");
        env.assert_store_committed(failpoint);
        assert_eq!(
            env.log_text().matches("\"op\":\"consolidate\"").count(),
            1,
            "{failpoint}"
        );
        env.ok(&["check"]);
        env.git(&["fsck", "--strict"]);
        assert_eq!(env.ok(&["versions"]).lines().count(), 1, "{failpoint}");
    }
}

#[test]
fn rollback_over_three_consolidations_restores_the_target_exactly() {
    let env = rooted();
    let views = |env: &Env| -> Vec<(String, Vec<u8>)> {
        env.snapshot()
            .into_iter()
            .filter(|(p, _)| !p.starts_with("memory/log/"))
            .collect()
    };
    assert_eq!(env.remember("project/a", "alpha v1", &[]).0, 0);
    assert_eq!(env.remember("project/b", "beta v1", &[]).0, 0);
    env.ok(&["consolidate"]);
    let first = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    let at_first = views(&env);
    assert_eq!(env.remember("project/a", "alpha v2", &["--replace"]).0, 0);
    assert_eq!(env.remember("project/c", "gamma v1", &[]).0, 0);
    env.ok(&["consolidate"]);
    env.ok(&["forget", "project/b", "--reason", "obsolete"]);
    assert_eq!(
        env.remember("project/d", "delta v1", &["--expires", "2020-01-01"])
            .0,
        0
    );
    env.ok(&["consolidate"]);
    let logs_before: Vec<(String, Vec<u8>)> = env
        .snapshot()
        .into_iter()
        .filter(|(p, _)| p.starts_with("memory/log/"))
        .collect();

    // A hand edit stops it; nothing is written.
    env.write(
        "memory/project/a.md",
        env.read("memory/project/a.md")
            .replace("alpha v2", "alpha by hand"),
    );
    let before = env.snapshot();
    let err = env.fails(&["rollback", &first], 4);
    assert!(err.contains("memory/project/a.md"), "{err}");
    assert_eq!(env.snapshot(), before);
    let out = env.ok(&["rollback", "--dry-run", "--force", &first]);
    assert!(
        out.contains("would restore project/a") && out.contains("would forget project/c"),
        "{out}"
    );
    assert_eq!(env.snapshot(), before);

    env.ok(&["rollback", "--force", &first]);
    assert_eq!(views(&env), at_first);
    // Logs only grew.
    for (path, old) in logs_before {
        let now = std::fs::read(env.path(&path)).expect("log still there");
        assert!(now.starts_with(&old), "{path} was rewritten");
    }
    env.assert_store_committed("after");
    env.git(&["fsck", "--strict"]);
    env.ok(&["check"]);
    assert!(env
        .git(&["log", "-1", "--format=%B"])
        .contains(&format!("Memoir-Rollback: {first}")));
    // Rolling back to where we are changes nothing more; HEAD~ names work.
    env.ok(&["rollback", "HEAD"]);
    env.ok(&["rollback", "HEAD~1"]);
    env.fails(&["rollback", "no-such-revision"], 1);
}

#[test]
fn history_lists_every_version_with_its_commit() {
    let mut env = Env::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    assert_eq!(env.remember("project/db", "Postgres 15", &[]).0, 0);
    env.ok(&["consolidate"]);
    let first = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    env.now = "2026-11-30T09:00:00Z".into();
    assert_eq!(
        env.remember("project/db", "Postgres 16", &["--replace"]).0,
        0
    );
    let out = env.ok(&["history", "project/db"]);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("01")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains("remember") && lines[0].contains(&first[..12]),
        "{out}"
    );
    assert!(lines[1].contains("(not committed)"), "{out}");
    assert!(out.contains("source: stated by the user"), "{out}");
    env.ok(&["consolidate"]);
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "history", "--patch", "project/db"]))
            .expect("json");
    let v = v["versions"].clone();
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(v[1]["commit"], head.as_str());
    assert!(v[1]["diff"]
        .as_str()
        .expect("diff")
        .contains("+description: Postgres 16"));
    assert_eq!(v[1]["time"], "2026-11-30T09:00:00Z");
    env.fails(&["history", "project/nothing"], 1);
}

#[test]
fn an_extractor_turns_pending_notes_into_memories_through_the_policy() {
    let env = rooted();
    env.ok(&["note", "the build took 12 minutes"]);
    env.ok(&["note", "the build took 14 minutes"]);
    let script = env.dir.path().join("extract.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nn=0; ids=\nwhile IFS= read -r line; do n=$((n+1));\n\
         id=$(printf '%s' \"$line\" | sed 's/.*\"id\":\"\\([^\"]*\\)\".*/\\1/'); ids=\"$ids${ids:+,}\\\"$id\\\"\"; done\n\
         [ \"$n\" -gt 0 ] || exit 0\n\
         echo '{\"key\":\"project/build-time\",\"description\":\"The build takes about '$n'0 minutes\",\"source\":\"extracted from '$n' notes\",\"tags\":[\"ci\"],\"notes\":['$ids']}'\n",
    )
    .expect("script");
    let cmd = format!("sh {}", script.display());
    let out = env.ok(&["consolidate", "--extract-cmd", &cmd]);
    assert!(out.contains("add project/build-time"), "{out}");
    let file = env.read("memory/project/build-time.md");
    assert!(
        file.contains("The build takes about 20 minutes")
            && file.contains("source: extracted from 2 notes"),
        "{file}"
    );
    // The notes were consumed: the extractor sees none the next time.
    env.ok(&["consolidate", "--extract-cmd", &cmd]);
    assert_eq!(env.log_text().matches("\"op\":\"propose\"").count(), 1);
    env.ok(&["check"]);

    // Output that breaks the policy or the protocol writes nothing.
    env.ok(&["note", "another note"]);
    for (output, code, needle) in [
        (format!("{{\"key\":\"project/token\",\"description\":\"d\",\"source\":\"s\",\"body\":\"{}\"}}", ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat()), 3, "secret:github-pat"),
        ("not json".to_string(), 1, "extractor output line 1"),
        ("{\"key\":\"../x\",\"description\":\"d\",\"source\":\"s\"}".to_string(), 3, "../x"),
    ] {
        std::fs::write(&script, format!("#!/bin/sh\ncat >/dev/null\necho '{output}'\n")).expect("script");
        let before = env.snapshot();
        let err = env.fails(&["consolidate", "--extract-cmd", &cmd], code);
        assert!(err.contains(needle), "{err}");
        assert!(!err.contains("a1B2c3D4e5F6g7H8i9J0"), "the secret was echoed: {err}");
        assert_eq!(env.snapshot(), before);
    }
    std::fs::write(&script, "#!/bin/sh\nexit 3\n").expect("script");
    let err = env.fails(&["consolidate", "--extract-cmd", &cmd], 1);
    assert!(err.contains("failed"), "{err}");
}

#[test]
fn a_scope_over_its_capacity_evicts_its_least_valuable_memories() {
    let env = rooted();
    env.write("memory/config.yaml", "capacity:\n  project: 3\n");
    for (i, c) in ["0.9", "0.2", "0.8", "0.5"].iter().enumerate() {
        let (code, _, err) = env.remember(
            &format!("project/fact-{i}"),
            &format!("distinct fact {i} about zone {i}"),
            &["--confidence", c],
        );
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(
        env.remember(
            "project/rule",
            "A feedback rule",
            &["--type", "feedback", "--confidence", "0.1"]
        )
        .0,
        0
    );
    let out = env.ok(&["consolidate", "--dry-run"]);
    assert!(
        out.contains("evict project/fact-1") && out.contains("evict project/fact-3"),
        "{out}"
    );
    assert!(
        !out.contains("evict project/rule"),
        "feedback outranks confidence: {out}"
    );
    env.ok(&["consolidate"]);
    assert!(
        !env.path("memory/project/fact-1.md").exists()
            && env.path("memory/project/fact-0.md").exists()
    );
    assert!(env
        .log_text()
        .contains("evicted: project is over its capacity"));
    env.write("memory/config.yaml", "capacity:\n  nowhere: 3\n");
    let err = env.fails(&["list"], 1);
    assert!(
        err.contains("memory/config.yaml") && err.contains("nowhere"),
        "{err}"
    );
}

#[test]
fn on_a_terminal_consolidate_asks_about_each_conflict() {
    let env = rooted();
    assert_eq!(
        env.remember("project/db", "Postgres 15 is the database", &[])
            .0,
        0
    );
    assert_eq!(
        env.remember("project/db", "MySQL 8 is the database", &[]).0,
        4
    );
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let home = env.dir.path().join("home");
    // `script` gives memoir a terminal; the answer "t" takes the proposal.
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} consolidate", exe.display()),
            "/dev/null",
        ])
        .current_dir(env.root())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
        .env("MEMOIR_NOW", &env.now)
        .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(b"t\n")?;
            c.wait_with_output()
        })
        .expect("script");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[k]eep current, [t]ake new, keep [b]oth, [s]kip?"),
        "{text}"
    );
    assert!(out.status.success(), "{text}");
    assert!(env.read("memory/project/db.md").contains("MySQL 8"));
    env.assert_store_committed("after");
    env.ok(&["check"]);
    assert!(env
        .git(&["log", "-1", "--format=%B"])
        .contains("~ project/db"));
}

#[test]
fn check_recognizes_a_git_revert_of_a_consolidation() {
    let env = rooted();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    env.ok(&["consolidate"]);
    assert_eq!(env.remember("project/b", "beta", &[]).0, 0);
    env.ok(&["consolidate"]);
    env.git(&["revert", "--no-edit", "HEAD"]);
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("error[git-revert]") && err.contains("memoir rollback"),
        "{err}"
    );
}

#[test]
fn duplicates_merge_and_near_duplicates_wait() {
    let env = rooted();
    assert_eq!(
        env.remember("project/ci", "CI runs on GitHub Actions", &["--tags", "ci"])
            .0,
        0
    );
    // The same memory, proposed again from another source with another tag.
    let (code, _, err) = env.run(&[
        "remember",
        "project/ci",
        "--description=CI runs on GitHub Actions",
        "--source",
        "seen in .github/",
        "--tags",
        "ci,github",
        "--propose",
    ]);
    assert_eq!(code, 0, "{err}");
    // Word for word the same, only with no new source or tag: consumed, no change.
    let (code, _, err) = env.run(&[
        "remember",
        "project/ci",
        "--description=CI runs on GitHub Actions",
        "--source",
        "stated by the user",
        "--propose",
    ]);
    assert_eq!(code, 0, "{err}");
    // A new key saying nearly the same as another memory.
    assert_eq!(
        env.remember(
            "project/pipeline",
            "CI runs on GitHub Actions runners",
            &["--propose"]
        )
        .0,
        0
    );
    let (code, out, _) = env.run(&["consolidate"]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("merge project/ci"), "{out}");
    assert!(
        out.contains("conflict project/pipeline: nearly duplicates project/ci"),
        "{out}"
    );
    let file = env.read("memory/project/ci.md");
    assert!(
        file.contains("source: stated by the user; seen in .github/"),
        "{file}"
    );
    assert!(file.contains("- ci\n- github\n"), "{file}");
    assert!(!env.path("memory/project/pipeline.md").exists());
    assert_eq!(env.pending_proposals(), 1, "only the near-duplicate waits");
    env.ok(&["check"]);
}

/// `n` proposals of new memories `project/fact-<i>` in another writer's
/// log, written directly for speed.
fn write_proposals(env: &Env, n: usize) {
    let mut log = String::new();
    for i in 0..n {
        let memory = format!(
            "---\nname: fact-{i}\ndescription: fact {i} about subsystem {} and {}\ntype: project\nsource: s\n---\n",
            i * 7,
            i * 13
        );
        let event = crate::util::bobs_event(
            memoir::model::event::Op::Propose,
            &format!("project/fact-{i}"),
            vec![],
            memory,
        );
        log.push_str(&event.render());
    }
    env.write("memory/log/2026-11-29/bob-00000001.md", log);
}

#[test]
fn a_consolidation_of_hundreds_writes_each_view_as_the_logs_have_it() {
    // Enough views that they are written on several threads.
    let env = rooted();
    write_proposals(&env, 300);
    env.ok(&["consolidate"]);
    env.assert_store_committed("after");
    let written = env.snapshot();
    let facts = |files: &[(String, Vec<u8>)]| {
        files
            .iter()
            .filter(|(p, _)| p.starts_with("memory/project/fact-"))
            .count()
    };
    assert_eq!(facts(&written), 300);
    env.ok(&["check"]);
    // What a rebuild writes from the logs alone, byte for byte.
    env.delete_memory_files();
    env.ok(&["rebuild"]);
    assert_eq!(env.snapshot(), written);
}

#[test]
fn kill_9_during_a_large_consolidation_then_rebuild_and_consolidate_recovers() {
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    for delay_ms in [5u64, 30, 80] {
        let env = rooted();
        write_proposals(&env, 150);
        let mut child = env.spawn(&exe, &["consolidate"], &[("MEMOIR_NOW", env.now.clone())]);
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // A killed memoir leaves git's index lock behind; the next one sees that its owner died.
        env.ok(&["rebuild"]);
        let (code, out, err) = env.run(&["consolidate"]);
        assert_eq!(code, 0, "delay {delay_ms}: {out}{err}");
        env.ok(&["check"]);
        env.git(&["fsck", "--strict"]);
        env.assert_store_committed(&format!("delay {delay_ms}"));
        assert_eq!(
            env.memory_files()
                .iter()
                .filter(|p| p.starts_with("memory/project/fact-"))
                .count(),
            150,
            "delay {delay_ms}"
        );
    }
}

#[test]
fn an_index_lock_left_by_a_dead_memoir_is_removed() {
    let env = scenario();
    env.ok(&["note", "make the state dir"]);
    let mut dead = std::process::Command::new("true").spawn().expect("true");
    let pid = dead.id();
    dead.wait().expect("wait");
    let state = env.state_dir();
    std::fs::write(state.join("git-index-lock-owner"), pid.to_string()).expect("owner");
    std::fs::write(env.path(".git/index.lock"), "").expect("lock");
    env.ok(&["consolidate"]);
    assert!(!env.path(".git/index.lock").exists());
    assert!(!state.join("git-index-lock-owner").exists());
    env.assert_store_committed("after");
}

#[test]
fn with_nothing_to_consolidate_only_direct_writes_are_committed_without_a_replay() {
    let env = rooted();
    assert_eq!(env.remember("project/a", "a fact", &[]).0, 0);
    env.ok(&["consolidate"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    // Nothing written since: no commit, and no log replayed to find out.
    let stats = env.stats(&["consolidate"]);
    assert_eq!(stats.replays, 0, "{stats:?}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    // A note since: committed as a version of its own, still without a replay.
    env.ok(&["note", "the deploy needs a warm cache"]);
    let stats = env.stats(&["consolidate"]);
    assert_eq!(stats.replays, 0, "{stats:?}");
    assert_ne!(env.git(&["rev-parse", "HEAD"]), head);
    env.assert_store_committed("after the note");
    env.ok(&["check"]);
}

#[test]
fn store_files_staged_by_hand_are_committed_as_the_work_tree_has_them() {
    let env = rooted();
    assert_eq!(env.remember("project/a", "a fact", &[]).0, 0);
    env.ok(&["consolidate"]);
    // Staged by hand: git's index no longer says what HEAD has, and b's
    // entry vouches for the file as it is.
    assert_eq!(env.remember("project/b", "another fact", &[]).0, 0);
    env.git(&["add", "memory", "MEMORY.md"]);
    assert_eq!(env.remember("project/c", "a third fact", &[]).0, 0);
    env.ok(&["consolidate"]);
    env.assert_store_committed("after");
    for key in ["b", "c"] {
        env.git(&["cat-file", "-e", &format!("HEAD:memory/project/{key}.md")]);
    }
    env.ok(&["check"]);
}

#[test]
fn a_store_in_a_folder_of_the_repository_commits_its_own_paths() {
    let env = Env::bare();
    env.git(&["init", "-q"]);
    env.write("README", "the project\n");
    env.git(&["add", "README"]);
    env.git(&["commit", "-qm", "root"]);
    env.ok(&["init", "agents"]);
    let store = ["--store", "agents"];
    let remember = |key: &str, description: &str| {
        let args = [
            &store[..],
            &["remember", key, "-d", description, "-s", "me"],
        ]
        .concat();
        env.ok(&args);
    };
    remember("project/a", "the deploy needs a warm cache");
    env.ok(&[&store[..], &["consolidate"]].concat());
    // Staged by hand, then another write: both under the folder.
    remember("project/b", "invoices are sent on Mondays");
    env.git(&["add", "agents/memory"]);
    remember("project/c", "the staging database is read only");
    env.ok(&[&store[..], &["consolidate"]].concat());
    let files = env.git(&["show", "--name-only", "--format=", "HEAD"]);
    for key in ["b", "c"] {
        let path = format!("agents/memory/project/{key}.md");
        assert!(files.lines().any(|f| f == path), "{files}");
    }
    let status = env.git(&[
        "status",
        "--porcelain",
        "--",
        "agents/memory",
        "agents/MEMORY.md",
    ]);
    assert!(status.trim().is_empty(), "{status}");
    env.ok(&[&store[..], &["check"]].concat());
}

#[test]
fn a_rewritten_log_stops_consolidate_with_its_file_and_line_and_no_commit() {
    let env = rooted();
    env.ok(&["note", "one"]);
    env.ok(&["consolidate"]);
    env.ok(&["note", "two"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    let log = env.first_log();
    let text = env.read(&log);
    // A committed log edited in place: never committed (logs only grow).
    env.write(&log, text.replacen("\"op\":\"note\"", "\"op\":\"nope\"", 1));
    let err = env.fails(&["consolidate"], 1);
    assert!(err.contains(&format!("{log}:2:")), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    // A malformed entry appended (a teammate's tool) is quarantined:
    // committed only once the team accepts it, as check --base asks.
    env.write(&log, format!("{text}## 10:00:00Z note · bogus\n\n"));
    let err = env.fails(&["consolidate"], 3);
    assert!(err.contains("accepted_entries"), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    let id = err
        .split("listed: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("id")
        .to_string();
    env.write("memory/config.yaml", format!("accepted_entries: [{id}]\n"));
    env.ok(&["consolidate"]);
    assert_ne!(env.git(&["rev-parse", "HEAD"]), head);
    env.assert_store_committed("after the consolidation");
}

#[test]
fn consolidation_plans_from_the_index_and_reads_only_what_it_changes() {
    let env = rooted();
    for i in 0..30 {
        let (code, _, err) = env.remember(
            &format!("project/fact-{i}"),
            &format!("distinct fact {i} about zone {i}"),
            &["--tags", "t"],
        );
        assert_eq!(code, 0, "{err}");
    }
    env.ok(&["consolidate"]);
    let old = &["--expires", "2020-01-01"];
    assert_eq!(env.remember("project/old", "an old fact", old).0, 0);
    let review = &["--review-by", "2020-01-01"];
    assert_eq!(env.remember("project/stale", "a stale fact", review).0, 0);
    env.ok(&["list"]);
    let propose = |key: &str, description: &str, tags: &str| {
        let (code, _, err) = env.remember(key, description, &["--tags", tags, "--propose"]);
        assert_eq!(code, 0, "{err}");
    };
    propose("project/new", "a brand new fact", "t");
    propose("project/fact-1", "distinct fact 1 about zone 1", "t,more");
    propose("project/fact-2", "a different fact two", "t");
    propose("project/zone", "distinct fact 3 about zone 3 again", "t");
    let stats = env.stats(&["consolidate"]);
    assert_eq!(stats.replays, 0, "{stats:?}");
    assert_eq!(stats.listed, 0, "{stats:?}");
    // The merged, the conflicting and the expired memory; nothing else.
    assert!(stats.read <= 3, "{stats:?}");
    let log = env.git(&["log", "-1", "--format=%B"]);
    for line in ["+ project/new", "~ project/fact-1", "- project/old"] {
        assert!(log.contains(line), "{line}: {log}");
    }
    assert!(env
        .read("memory/project/fact-1.md")
        .contains("- t\n- more\n"));
    assert_eq!(env.pending_proposals(), 2, "the two conflicts wait");
    env.assert_store_committed("after consolidate");
    env.ok(&["check"]);
    let (_, out, _) = env.run(&["consolidate", "--dry-run"]);
    assert!(
        out.contains("project/fact-2: differs from the current version"),
        "{out}"
    );
    assert!(
        out.contains("project/zone: nearly duplicates project/fact-3"),
        "{out}"
    );
    assert!(out.contains("project/stale"), "past review_by: {out}");

    // A file edited by hand is not what the logs say: the plan is made
    // from a replay, which merges into the logged version.
    propose("project/fact-5", "distinct fact 5 about zone 5", "t,again");
    let edited = env
        .read("memory/project/fact-5.md")
        .replace("zone 5", "zone five");
    env.write("memory/project/fact-5.md", &edited);
    let stats = env.stats(&["consolidate", "--dry-run"]);
    assert!(stats.replays >= 1, "{stats:?}");
    let (_, out, _) = env.run(&["consolidate", "--dry-run"]);
    assert!(out.contains("merge project/fact-5"), "{out}");
}

/// A change first kept as a proposal, then written with `--replace`, is
/// counted as the change it is, though the proposal is consumed as a
/// duplicate.
#[test]
fn a_replace_after_its_own_proposal_counts_as_changed() {
    let env = rooted();
    env.remember("project/x", "X one", &[]);
    env.ok(&["consolidate", "--yes"]);
    assert_eq!(env.remember("project/x", "X two", &[]).0, 4);
    assert_eq!(env.remember("project/x", "X two", &["--replace"]).0, 0);
    let out = env.ok(&["consolidate", "--yes"]);
    assert!(out.contains("0 added, 1 changed"), "{out}");
    let message = env.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.contains("project/x (written directly)"),
        "{message}"
    );
}

/// The first consolidation of a new store commits what `init` made: it
/// says so, rather than only "0 added, 0 changed, 0 forgotten"; later
/// ones do not.
#[test]
fn the_first_consolidation_says_it_commits_the_stores_set_up() {
    let env = Env::new();
    let out = env.ok(&["consolidate"]);
    assert!(
        out.contains(": the store's first version, with its set-up (.gitattributes, MEMORY.md, memory/log/.gitkeep"),
        "{out}"
    );
    let subject = env.git(&["log", "-1", "--format=%s"]);
    assert_eq!(
        subject.trim(),
        "memoir: the store's first version (0 added, 0 changed, 0 forgotten)"
    );
    let body = env.git(&["log", "-1", "--format=%b"]);
    assert!(
        body.contains("The store's set-up: .gitattributes, MEMORY.md"),
        "{body}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "consolidate"])).expect("json");
    assert_eq!(j["setup"], serde_json::json!([]), "nothing new: {j}");
    let (code, _, err) = env.remember("project/db", "Postgres 16", &[]);
    assert_eq!(code, 0, "{err}");
    let out = env.ok(&["consolidate"]);
    assert!(
        out.contains("committed ") && !out.contains("first version"),
        "{out}"
    );
    let subject = env.git(&["log", "-1", "--format=%s"]);
    assert!(
        subject.starts_with("memoir: consolidate (1 added"),
        "{subject}"
    );
}

/// A rollback to a commit from before the store existed is a clear error
/// (exit 1), whether the store holds memories or none, and changes nothing.
#[test]
fn rollback_to_before_the_store_existed_is_an_error() {
    let env = rooted();
    let root = env.git(&["rev-parse", "HEAD"]);
    let root = root.trim();
    env.ok(&["consolidate"]);
    let err = env.fails(&["rollback", root], 1);
    assert!(
        err.contains(&format!(
            "rollback: commit {} is from before this store existed",
            &root[..12]
        )),
        "{err}"
    );
    let (code, _, err) = env.remember("project/db", "Postgres 16", &[]);
    assert_eq!(code, 0, "{err}");
    env.ok(&["consolidate"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    for args in [vec!["rollback", root], vec!["rollback", root, "--dry-run"]] {
        let err = env.fails(&args, 1);
        assert!(err.contains("from before this store existed"), "{err}");
    }
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "nothing committed");
    assert!(env.ok(&["list"]).contains("project/db"));
}

/// A version holds what the logs say: an unrecorded hand edit of a memory
/// file is refused by `consolidate` (exit 1, naming it and both ways out)
/// rather than committed as a version no log holds, and `rollback
/// --force` discards it, as it says, even in a memory the rollback does
/// not otherwise change.
#[test]
fn no_version_commits_an_unrecorded_hand_edit() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "a fact", &[]).0, 0);
    env.ok(&["consolidate", "--yes"]);
    let first = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(env.remember("project/b", "b fact", &[]).0, 0);
    env.ok(&["consolidate", "--yes"]);
    let clean = env.read("memory/project/a.md");
    env.write("memory/project/a.md", format!("{clean}hand note\n"));
    let head = env.git(&["rev-parse", "HEAD"]);
    assert_eq!(env.remember("project/c", "c fact", &[]).0, 0);
    let err = env.fails(&["consolidate", "--yes"], 1);
    assert!(
        err.contains("memory/project/a.md: edited by hand and not recorded")
            && err.contains("memoir record"),
        "{err}"
    );
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "nothing committed");
    env.ok(&["rollback", "--force", &first]);
    let committed = env.git(&["show", "HEAD:memory/project/a.md"]);
    assert!(!committed.contains("hand note"), "{committed}");
    env.ok(&["check"]);
}

/// A dry run says what the run then does: the memories `remember` and
/// `forget` wrote since the last version are counted, not only the
/// proposals it decides.
#[test]
fn a_dry_run_counts_what_the_run_commits() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "a fact", &[]).0, 0);
    env.ok(&["consolidate", "--yes"]);
    assert_eq!(env.remember("project/b", "b fact", &[]).0, 0);
    env.ok(&["forget", "project/a", "-r", "gone"]);
    let dry = env.ok(&["consolidate", "--dry-run"]);
    let done = env.ok(&["consolidate", "--yes"]);
    let counts = |out: &str| {
        out.lines()
            .find_map(|l| l.split_once("consolidate").map(|(_, r)| r.to_string()))
            .and_then(|r| r.split_once(": ").map(|(_, c)| c.to_string()))
            .unwrap_or_default()
    };
    assert_eq!(
        counts(&dry),
        "1 added, 0 changed, 1 forgotten, 0 conflicts",
        "{dry}"
    );
    assert_eq!(counts(&dry), counts(&done), "{dry} / {done}");
}
