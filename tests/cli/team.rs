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
    // Nor truncating it, reordering its entries, or deleting one entry.
    let entries: Vec<&str> = text.split_inclusive("<!-- memoir:end ").collect();
    assert!(entries.len() >= 3, "two entries and a tail");
    for (what, broken) in [
        ("truncated", text[..text.len() / 2].to_string()),
        (
            "reordered",
            format!(
                "{}{}{}",
                entries[1].trim_start_matches(|c| c != '\n'),
                entries[0],
                entries[2..].concat()
            ),
        ),
        ("entry deleted", entries[1..].concat()),
    ] {
        env.write(&log, &broken);
        let err = env.fails(&["check", "--base", "HEAD"], 1);
        assert!(
            err.contains("error[append-only]") || err.contains("error[format]"),
            "{what}: {err}"
        );
    }
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
        memoir::model::event::Op::Note,
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
    std::fs::remove_file(env.path("memory/log/2026-11-29/bob-0badc0de.md")).expect("rm");
    // A secret added in a memory file.
    env.write(
        "memory/project/a.md",
        env.read("memory/project/a.md")
            .replace("alpha", &format!("alpha {secret}")),
    );
    let err = env.fails(&["check", "--base", "HEAD"], 1);
    assert!(
        err.contains("memory/project/a.md") && err.contains("secret:github-pat"),
        "{err}"
    );
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
        out.contains("1 added, 1 changed, 1 forgotten; 0 conflicts opened, 0 resolved; 0 proposals pending; 1 note"),
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
    let keys: Vec<&str> = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["key"].as_str().expect("key"))
        .collect();
    assert_eq!(keys, ["project/a", "project/b", "project/c"]);
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

#[test]
fn diff_a_triple_dot_b_compares_from_the_merge_base_as_git_does() {
    let env = Env::new();
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    env.git(&["checkout", "-qb", "feature"]);
    assert_eq!(env.remember("project/b", "beta", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "feature"]);
    // main moves on: it forgets project/a, which the branch never touched.
    env.git(&["checkout", "-q", "main"]);
    env.ok(&["forget", "project/a", "--reason", "gone"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "main forgets a"]);
    let keys = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["--json", "diff"];
        all.extend_from_slice(args);
        let v: serde_json::Value = serde_json::from_str(&env.ok(&all)).expect("json");
        v["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .map(|c| {
                (
                    c["key"].as_str().unwrap_or("").to_string(),
                    c["kind"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let pair = |k: &str, kind: &str| (k.to_string(), kind.to_string());
    // What the branch did since it left main: only project/b.
    assert_eq!(keys(&["main...feature"]), [pair("project/b", "added")]);
    let base = env.git(&["merge-base", "main", "feature"]);
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "diff", "main...feature"])).expect("json");
    assert_eq!(v["from"], base.trim(), "from git's merge base");
    // An empty side is HEAD (main here), as in git.
    env.git(&["checkout", "-q", "feature"]);
    assert_eq!(keys(&["main..."]), [pair("project/b", "added")]);
    env.git(&["checkout", "-q", "main"]);
    // `A B` and `A..B` stay two exact revisions: the tips differ in both.
    let tips = [pair("project/a", "added"), pair("project/b", "added")];
    assert_eq!(keys(&["main", "feature"]), tips);
    assert_eq!(keys(&["main..feature"]), tips);
    // A range and a second revision together is refused.
    let err = env.fails(&["diff", "main...feature", "HEAD"], 1);
    assert!(err.contains("a range names both revisions"), "{err}");
    let md = env.ok(&["diff", "main...feature", "--format", "markdown"]);
    assert!(md.contains("1 added, 0 changed, 0 forgotten"), "{md}");
    // Two histories that never met have no merge base: said, with the
    // command that compares their tips (git diff A...B fails there too).
    env.git(&["checkout", "-q", "--orphan", "elsewhere"]);
    env.git(&["commit", "-q", "--allow-empty", "-m", "unrelated"]);
    env.git(&["checkout", "-q", "main"]);
    let err = env.fails(&["diff", "main...elsewhere"], 1);
    assert!(
        err.contains("`main` and `elsewhere` share no history: compare them with `memoir diff main elsewhere`"),
        "{err}"
    );
    let (code, _, _) = env.run(&["--json", "diff", "main...elsewhere"]);
    assert_eq!(code, 1);
}

/// Two branches that both changed project/db and each added a memory,
/// committed on `main` and `other`.
fn branches() -> Env {
    let env = Env::new();
    let ok = |key: &str, d: &str, extra: &[&str]| {
        let (code, _, err) = env.remember(key, d, extra);
        assert_eq!(code, 0, "{key}: {err}");
    };
    ok("project/db", "Postgres 15", &[]);
    ok("project/style", "Use rustfmt defaults", &[]);
    ok("project/deploy", "Deploy with make release", &[]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    env.git(&["checkout", "-qb", "other"]);
    ok("project/db", "MySQL 8", &["--replace"]);
    ok(
        "project/style",
        "Use rustfmt with max_width 120",
        &["--replace"],
    );
    ok("project/cache", "Redis caches sessions", &[]);
    env.ok(&["note", "standup: the same line on both branches"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "theirs"]);
    env.git(&["checkout", "-q", "main"]);
    ok("project/db", "Postgres 16", &["--replace"]);
    ok(
        "project/deploy",
        "Deploy with the release workflow",
        &["--replace"],
    );
    ok("project/queue", "Kafka carries events", &[]);
    env.ok(&["note", "standup: the same line on both branches"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "ours"]);
    env
}

/// Every store file but the logs, and whether any store file holds conflict markers.
fn views_and_markers(env: &Env) -> (Vec<(String, Vec<u8>)>, bool) {
    let all = env.snapshot();
    let markers = all
        .iter()
        .any(|(_, b)| memoir::model::text::has_conflict_markers(&String::from_utf8_lossy(b)));
    (
        all.into_iter()
            .filter(|(p, _)| !p.starts_with("memory/log/"))
            .collect(),
        markers,
    )
}

#[test]
fn with_the_drivers_a_branch_merge_has_no_text_conflict_and_the_fork_is_a_conflict() {
    let env = branches();
    env.ok(&["hooks", "install"]);
    let (ok, out) = git_with_memoir(&env, &["merge", "-q", "--no-edit", "other"]);
    assert!(ok, "{out}");
    let (views, markers) = views_and_markers(&env);
    assert!(!markers, "no conflict markers anywhere");
    assert!(
        env.read("memory/project/db.md")
            .contains("description: Postgres 15"),
        "the ancestor"
    );
    assert!(
        env.read("memory/project/style.md")
            .contains("max_width 120"),
        "their change"
    );
    assert!(
        env.read("memory/project/deploy.md")
            .contains("release workflow"),
        "our change"
    );
    let index = env.read("MEMORY.md");
    assert!(
        index.contains("memory/project/cache.md") && index.contains("memory/project/queue.md"),
        "{index}"
    );
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(status["conflicts"], serde_json::json!(["project/db"]));
    let conflicts: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "conflicts"])).expect("json");
    let conflicts = &conflicts["conflicts"];
    assert!(conflicts[0]["candidates"][0]["diff"]
        .as_str()
        .expect("diff")
        .contains("+description:"));
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    // The other direction gives the same memory files and index.
    let env2 = branches();
    env2.ok(&["hooks", "install"]);
    env2.git(&["checkout", "-q", "other"]);
    let (ok, out) = git_with_memoir(&env2, &["merge", "-q", "--no-edit", "main"]);
    assert!(ok, "{out}");
    assert_eq!(views_and_markers(&env2).0, views, "both directions agree");
    // resolve clears it.
    env.ok(&["resolve", "project/db", "--keep"]);
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(status["conflicts"], serde_json::json!([]));
    env.ok(&["check"]);
}

/// `git merge other` as a clone without memoir's drivers runs it: the
/// memory files conflict as text.
fn merge_without_drivers(env: &Env) {
    let home = env.dir.path().join("home");
    let merge = std::process::Command::new("git")
        .args(["merge", "-q", "--no-edit", "other"])
        .current_dir(env.root())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
        .output()
        .expect("git merge");
    assert!(!merge.status.success(), "git's text merge should conflict");
}

#[test]
fn without_the_drivers_check_recognizes_the_text_conflict_and_rebuild_settles_it() {
    let env = branches();
    merge_without_drivers(&env);
    assert!(memoir::model::text::has_conflict_markers(
        &env.read("memory/project/db.md")
    ));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/db.md: error[drift:merged]"),
        "{err}"
    );
    env.ok(&["rebuild"]);
    assert!(env
        .read("memory/project/db.md")
        .contains("description: Postgres 15"));
    assert!(!memoir::model::text::has_conflict_markers(
        &env.read("MEMORY.md")
    ));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "merge"]);
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[conflict]"), "{err}");
}

#[test]
fn a_merge_without_the_drivers_gets_one_next_step_from_every_command() {
    let env = branches();
    merge_without_drivers(&env);
    let step = "run `memoir rebuild`, then `git add -A memory MEMORY.md && git commit` to finish the merge";
    let finish = "the memory files are settled: `git add -A memory MEMORY.md && git commit` finishes the merge";
    // Every command names the same step, and none another.
    let status = env.ok(&["status"]);
    assert!(status.contains(step), "{status}");
    let contradicting = ["fix them by hand", "memoir reindex", "memoir record"];
    for c in contradicting {
        assert!(!status.contains(c), "status says {c}: {status}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(json["merge"]["settled"], false);
    assert_eq!(
        json["merge"]["unmerged"],
        serde_json::json!(["MEMORY.md", "memory/project/db.md"])
    );
    let err = env.fails(&["check"], 1);
    assert!(err.contains(step), "{err}");
    assert!(!err.contains("memoir reindex"), "{err}");
    let err = env.fails(&["consolidate"], 1);
    assert!(err.contains(step), "{err}");
    // rebuild settles it and says what comes next.
    let (code, _, err) = env.run(&["rebuild"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(finish), "{err}");
    let status = env.ok(&["status"]);
    assert!(status.contains(finish), "{status}");
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(finish), "{err}");
    assert!(env.fails(&["consolidate"], 1).contains(finish));
    // The step as said finishes the merge.
    env.git(&["add", "-A", "memory", "MEMORY.md"]);
    env.git(&["commit", "-qm", "merge"]);
    assert!(!env.path(".git/MERGE_HEAD").exists());
    let status = env.ok(&["status"]);
    assert!(!status.contains("merge is in progress"), "{status}");
    env.ok(&["check"]);
    env.ok(&["consolidate"]);
}

/// `git <args>` with memoir on PATH, so that installed hooks find it;
/// returns (success, stdout + stderr).
fn git_with_memoir(env: &Env, args: &[&str]) -> (bool, String) {
    let home = env.dir.path().join("home");
    let path = crate::util::path_with_memoir();
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(env.root())
        .env("PATH", path)
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
        .env("MEMOIR_NOW", &env.now)
        .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
        .output()
        .expect("git");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn hooks_install_chains_existing_hooks_and_uninstall_restores_them() {
    let env = Env::new();
    let user_hook = "#!/bin/sh\necho user-hook-ran\nexit 0\n";
    env.write(".git/hooks/pre-commit", user_hook);
    std::process::Command::new("chmod")
        .args([
            "+x",
            env.path(".git/hooks/pre-commit").to_str().expect("utf8"),
        ])
        .status()
        .expect("chmod");
    let out = env.ok(&["hooks", "install"]);
    assert!(
        out.contains("pre-commit: chained before the existing hook")
            && out.contains("post-merge: installed"),
        "{out}"
    );
    let hook = env.read(".git/hooks/pre-commit");
    assert!(
        hook.starts_with("#!/bin/sh\n# memoir:start")
            && hook.ends_with("echo user-hook-ran\nexit 0\n"),
        "{hook}"
    );
    assert_eq!(
        env.git(&["config", "--get", "merge.memoir.driver"]).trim(),
        "memoir merge-driver memory %O %A %B %P"
    );
    // Idempotent.
    let before = env.snapshot();
    let again = env.ok(&["hooks", "install"]);
    assert!(again.contains("already installed"), "{again}");
    assert_eq!(env.read(".git/hooks/pre-commit"), hook);
    assert_eq!(env.snapshot(), before);
    // Both run on a commit; the user's hook still decides too.
    env.write("src.txt", "code\n");
    env.git(&["add", "src.txt"]);
    let (ok, out) = git_with_memoir(&env, &["commit", "-qm", "code"]);
    assert!(ok && out.contains("user-hook-ran"), "{out}");
    // The user's hook still decides: its failure blocks the commit.
    env.write(
        ".git/hooks/pre-commit",
        env.read(".git/hooks/pre-commit")
            .replace("exit 0", "exit 1"),
    );
    env.write("more.txt", "more\n");
    env.git(&["add", "more.txt"]);
    let (ok, _) = git_with_memoir(&env, &["commit", "-qm", "blocked"]);
    assert!(!ok, "the user's failing hook blocks the commit");
    env.write(
        ".git/hooks/pre-commit",
        env.read(".git/hooks/pre-commit")
            .replace("exit 1", "exit 0"),
    );
    // Without memoir on PATH the hook steps aside instead of blocking commits.
    env.git(&["commit", "-q", "--allow-empty", "-m", "no memoir on PATH"]);
    env.ok(&["hooks", "uninstall"]);
    assert_eq!(env.read(".git/hooks/pre-commit"), user_hook);
    assert!(!env.path(".git/hooks/post-merge").exists());
    let (found, _) = git_with_memoir(&env, &["config", "--get", "merge.memoir.driver"]);
    assert!(!found);
    // core.hooksPath is honoured.
    env.git(&["config", "core.hooksPath", "githooks"]);
    env.ok(&["hooks", "install"]);
    assert!(env
        .read("githooks/post-rewrite")
        .contains("memoir hook post-rewrite"));
}

#[test]
fn the_pre_commit_hook_records_staged_hand_edits_and_nothing_else() {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    assert_eq!(env.remember("project/b", "beta", &[]).0, 0);
    env.git(&["add", "-A"]);
    let (ok, out) = git_with_memoir(&env, &["commit", "-qm", "memory"]);
    assert!(ok, "{out}");
    // A commit with no store path staged is not the hook's business.
    env.write(
        "memory/project/a.md",
        env.read("memory/project/a.md")
            .replace("alpha", "alpha by hand"),
    );
    env.write(
        "memory/project/b.md",
        env.read("memory/project/b.md")
            .replace("beta", "beta by hand"),
    );
    env.write("src.txt", "code\n");
    env.git(&["add", "src.txt"]);
    let (ok, out) = git_with_memoir(&env, &["commit", "-qm", "code"]);
    assert!(ok, "{out}");
    assert!(!out.contains("recorded"), "{out}");
    // Staging one hand edit records that one (and only it) into the commit.
    env.git(&["add", "memory/project/a.md"]);
    let (ok, out) = git_with_memoir(&env, &["commit", "-qm", "hand edit"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("recorded remember project/a (edited) and staged it"),
        "{out}"
    );
    let files = env.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert!(
        files.contains("memory/project/a.md")
            && files.contains("memory/log/")
            && !files.contains("memory/project/b.md"),
        "{files}"
    );
    let committed_log: String = files
        .lines()
        .filter(|f| f.starts_with("memory/log/"))
        .map(|f| env.git(&["show", &format!("HEAD:{f}")]))
        .collect();
    assert!(
        committed_log.contains("alpha by hand") && !committed_log.contains("beta by hand"),
        "the unstaged edit stays out"
    );
    // b is still an unrecorded, unstaged hand edit: git status shows just it.
    let status = env.git(&["status", "--porcelain", "--", "memory", "MEMORY.md"]);
    assert_eq!(status.trim(), "M memory/project/b.md", "{status}");
    // A partly staged memory file is refused.
    env.git(&["add", "memory/project/b.md"]);
    env.write(
        "memory/project/b.md",
        env.read("memory/project/b.md")
            .replace("beta by hand", "beta twice"),
    );
    let (ok, out) = git_with_memoir(&env, &["commit", "-qm", "partial"]);
    assert!(
        !ok && out.contains("staged differently from the work tree"),
        "{out}"
    );
    // git commit -a: git holds the index lock and names the index.
    let (ok, out) = git_with_memoir(&env, &["commit", "-qam", "all"]);
    assert!(ok, "{out}");
    env.ok(&["check"]);
    env.assert_store_committed("after commit -a");
    // git commit <paths>: git builds the commit from a temporary index.
    env.write(
        "memory/project/a.md",
        env.read("memory/project/a.md")
            .replace("alpha by hand", "alpha again"),
    );
    let (ok, out) = git_with_memoir(
        &env,
        &["commit", "-qm", "only a", "--", "memory/project/a.md"],
    );
    assert!(ok, "{out}");
    let files = env.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert!(
        files.contains("memory/project/a.md") && files.contains("memory/log/"),
        "{files}"
    );
    env.ok(&["check"]);
}

/// The merge driver is configured under git's own lock on `.git/config`:
/// while a git command holds `config.lock` (past a short wait),
/// `hooks install` refuses (exit 1, naming the lock) and leaves the config
/// and the lock as they were, as `git config` does; once the lock is gone
/// it configures.
#[test]
fn hooks_install_never_writes_a_config_git_holds_locked() {
    let env = Env::new();
    let config = env.read(".git/config");
    env.write(".git/config.lock", "git is writing this\n");
    let err = env.fails(&["hooks", "install"], 1);
    assert!(err.contains("config.lock"), "{err}");
    assert_eq!(env.read(".git/config"), config);
    assert_eq!(env.read(".git/config.lock"), "git is writing this\n");
    // Nothing half done: no hook without its merge drivers.
    for hook in ["pre-commit", "post-merge", "post-rewrite"] {
        assert!(!env.path(&format!(".git/hooks/{hook}")).exists(), "{hook}");
    }
    std::fs::remove_file(env.path(".git/config.lock")).expect("rm");
    env.ok(&["hooks", "install"]);
    assert_eq!(
        env.git(&["config", "--get", "merge.memoir.driver"]).trim(),
        "memoir merge-driver memory %O %A %B %P"
    );
    assert!(!env.path(".git/config.lock").exists());
    let fsck = env.git(&["config", "--list"]);
    assert!(fsck.contains("merge.memoir.name="), "{fsck}");
    // An uninstall the lock stops leaves the drivers, never hooks alone.
    env.write(".git/config.lock", "git is writing this\n");
    env.fails(&["hooks", "uninstall"], 1);
    assert!(!env.path(".git/hooks/pre-commit").exists());
    assert!(env
        .git(&["config", "--list"])
        .contains("merge.memoir.driver="));
    std::fs::remove_file(env.path(".git/config.lock")).expect("rm");
    env.ok(&["hooks", "uninstall"]);
    assert!(!env.git(&["config", "--list"]).contains("merge.memoir"));
}

#[test]
fn with_hooks_installed_a_merge_needs_nothing_more() {
    let env = branches();
    env.ok(&["hooks", "install"]);
    let (ok, out) = git_with_memoir(&env, &["merge", "-q", "--no-edit", "other"]);
    assert!(ok, "{out}");
    assert!(out.contains("see `memoir conflicts`"), "{out}");
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[conflict]"), "{err}");
}

#[test]
fn rebase_and_cherry_pick_give_the_same_result_as_a_merge() {
    for how in ["rebase", "cherry-pick"] {
        let env = branches();
        env.ok(&["hooks", "install"]);
        let (ok, out) = match how {
            "rebase" => {
                env.git(&["checkout", "-q", "other"]);
                git_with_memoir(&env, &["rebase", "-q", "main"])
            }
            _ => git_with_memoir(&env, &["cherry-pick", "other"]),
        };
        assert!(ok, "{how}: {out}");
        assert!(
            env.read("memory/project/db.md")
                .contains("description: Postgres 15"),
            "{how}: the ancestor"
        );
        let (code, _, err) = env.run(&["check"]);
        assert_eq!(code, 0, "{how}: {err}");
        assert!(
            err.contains("memory/project/db.md: warning[conflict]"),
            "{how}: {err}"
        );
        let index = env.read("MEMORY.md");
        assert!(
            index.contains("memory/project/cache.md") && index.contains("memory/project/queue.md"),
            "{how}: {index}"
        );
    }
}

#[test]
fn pull_rebase_settles_both_the_rebase_and_the_fast_forward_path() {
    let env = Env::new();
    assert_eq!(env.remember("project/db", "Postgres 15", &[]).0, 0);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    let origin = env.dir.path().join("origin.git");
    let bob = env.dir.path().join("bob");
    env.git(&["clone", "-q", "--bare", ".", origin.to_str().expect("utf8")]);
    env.git(&["remote", "add", "origin", origin.to_str().expect("utf8")]);
    env.git(&["fetch", "-q", "origin"]);
    env.git(&["branch", "-q", "--set-upstream-to", "origin/main"]);
    env.git(&[
        "clone",
        "-q",
        origin.to_str().expect("utf8"),
        bob.to_str().expect("utf8"),
    ]);
    // Bob, in his own clone (his own writer), changes the memory and pushes.
    let in_bob = |args: &[&str]| {
        let out = env.cmd(args).current_dir(&bob).output().expect("run");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    in_bob(&[
        "remember",
        "project/db",
        "-d",
        "MySQL 8",
        "-s",
        "bob",
        "--replace",
    ]);
    let git_bob = |args: &[&str]| {
        let home = env.dir.path().join("home");
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&bob)
            .env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git_bob(&["add", "-A"]);
    git_bob(&["commit", "-qm", "bob"]);
    git_bob(&["push", "-q", "origin", "main"]);
    env.ok(&["hooks", "install"]);
    // Fast-forward path: nothing local, so pull --rebase fast-forwards.
    let (ok, out) = git_with_memoir(&env, &["pull", "-q", "--rebase"]);
    assert!(ok, "{out}");
    assert!(env.read("memory/project/db.md").contains("MySQL 8"));
    env.ok(&["check"]);
    // Rebase path: both sides change it again.
    assert_eq!(
        env.remember("project/db", "Postgres 16", &["--replace"]).0,
        0
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "ours"]);
    in_bob(&[
        "remember",
        "project/db",
        "-d",
        "SQLite 3",
        "-s",
        "bob",
        "--replace",
    ]);
    git_bob(&["add", "-A"]);
    git_bob(&["commit", "-qm", "bob again"]);
    git_bob(&["push", "-q", "origin", "main"]);
    let (ok, out) = git_with_memoir(&env, &["pull", "-q", "--rebase"]);
    assert!(ok, "{out}");
    assert!(
        env.read("memory/project/db.md")
            .contains("description: MySQL 8"),
        "the common ancestor"
    );
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("memory/project/db.md: warning[conflict]"),
        "{err}"
    );
}

/// A committed log edited in place is named by plain `check` (against
/// HEAD) as what it is, and the pre-commit hook refuses to commit it; a
/// log that only grew passes both.
#[test]
fn a_committed_log_edited_in_place_is_caught_by_check_and_the_pre_commit_hook() {
    let env = Env::new();
    env.remember("project/db", "Postgres 16 is the database", &[]);
    env.ok(&["consolidate", "--yes"]);
    env.ok(&["hooks", "install"]);
    env.ok(&["note", "grown, not rewritten"]);
    env.ok(&["check"]);
    let log = env.first_log();
    let text = env.read(&log);
    env.write(&log, text.replace("Postgres 16", "Postgres 15"));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains(&format!("{log}:"))
            && err.contains("error[append-only]: rewritten since HEAD"),
        "{err}"
    );
    let (committed, out) = git_with_memoir(&env, &["commit", "-qam", "tamper"]);
    assert!(!committed, "the hook let it through: {out}");
    assert!(out.contains("rewritten since HEAD"), "{out}");
    env.write(&log, &text);
    env.ok(&["check"]);
    // Text appended by hand is held to the secret rules before it is
    // committed, not only by CI afterwards.
    let token = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    env.write(&log, format!("{text}junk {token} junk\n"));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("error[policy:secret:github-pat]") && !err.contains(&token),
        "{err}"
    );
    let (committed, out) = git_with_memoir(&env, &["commit", "-qam", "secret"]);
    assert!(!committed, "the hook let it through: {out}");
}

#[test]
fn a_memory_forgotten_on_one_branch_and_changed_on_another_is_a_conflict_not_a_crash() {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    assert_eq!(env.remember("project/a", "alpha", &[]).0, 0);
    env.ok(&["consolidate"]);
    env.git(&["checkout", "-qb", "other"]);
    env.ok(&["forget", "project/a", "--reason", "gone"]);
    env.ok(&["consolidate"]);
    env.git(&["checkout", "-q", "main"]);
    assert_eq!(
        env.remember("project/a", "alpha changed", &["--replace"]).0,
        0
    );
    env.ok(&["consolidate"]);
    // git's modify/delete conflict: the merge driver never runs for it.
    let (ok, out) = git_with_memoir(&env, &["merge", "-q", "--no-edit", "other"]);
    assert!(!ok && out.contains("modify/delete"), "{out}");
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/a.md: error[drift:merged]")
            && err.contains("modify/delete")
            && !err.contains("drift:stale"),
        "{err}"
    );
    assert!(err.contains("memoir resolve project/a"), "{err}");
    // Settled as any merge: rebuild, then the decision.
    env.ok(&["rebuild"]);
    env.ok(&["resolve", "--keep", "project/a"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "merge"]);
    env.ok(&["check"]);
}

/// What the journal says memoir wrote is a crash's leftover only if the
/// logs know it as a version: after a branch switch, taking the other
/// branch's file by hand is an edit `record` keeps, not a stale view
/// `rebuild` would silently put back; and a committed file deleted by
/// hand (in a clone with no journal too) is a deletion, not a write a
/// crash never finished.
#[test]
fn a_file_from_another_branch_is_an_edit_and_a_deleted_committed_file_a_deletion() {
    let env = Env::new();
    env.remember("project/m", "orig", &[]);
    env.ok(&["consolidate", "--yes"]);
    env.git(&["checkout", "-qb", "a"]);
    env.remember("project/m", "changed on a", &["--replace"]);
    env.ok(&["consolidate", "--yes"]);
    env.git(&["checkout", "-q", "main"]);
    env.git(&["checkout", "a", "--", "memory/project/m.md"]);
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/m.md: error[drift:edited]"),
        "{err}"
    );
    env.fails(&["rebuild"], 1);
    assert!(
        env.read("memory/project/m.md").contains("changed on a"),
        "kept"
    );
    let out = env.ok(&["record"]);
    assert!(out.contains("remember project/m: edited"), "{out}");
    env.ok(&["check"]);
    env.ok(&["consolidate", "--yes"]);
    // Deleted by hand after the switch back: a deletion.
    std::fs::remove_file(env.path("memory/project/m.md")).expect("rm");
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/m.md: error[drift:deleted]"),
        "{err}"
    );
    // And in a clone with no journal at all.
    env.git(&["checkout", "-q", "--", "memory/project/m.md"]);
    std::fs::remove_dir_all(env.state_dir()).expect("no journal");
    std::fs::remove_file(env.path("memory/project/m.md")).expect("rm");
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("memory/project/m.md: error[drift:deleted]"),
        "{err}"
    );
    let out = env.ok(&["record"]);
    assert!(out.contains("forget project/m"), "{out}");
}

/// One writer appended to one log on two histories (a consolidation reset
/// away after it was pushed, then merged back): git leaves the log with
/// conflict markers. `rebuild` joins both sides' entries, nothing is lost,
/// and the merge commits through the pre-commit hook; no advice on the
/// way restores one side over the other.
#[test]
fn a_log_both_sides_of_a_merge_appended_to_is_joined_by_rebuild() {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    assert_eq!(env.remember("project/x", "x", &[]).0, 0);
    env.ok(&["consolidate", "--yes"]);
    env.ok(&["note", "seen on the kept side"]);
    env.ok(&["consolidate", "--yes"]);
    env.git(&["branch", "keep"]);
    env.git(&["reset", "-q", "--hard", "HEAD~1"]);
    env.ok(&["note", "seen after the reset"]);
    env.ok(&["consolidate", "--yes"]);
    let (merged, _) = git_with_memoir(&env, &["merge", "-q", "--no-edit", "keep"]);
    assert!(!merged, "git leaves the log unmerged");
    let err = env.fails(&["check"], 1);
    assert!(!err.contains("git checkout HEAD"), "{err}");
    assert!(!err.contains("accepted_entries"), "{err}");
    assert!(err.contains("both sides appended to one log"), "{err}");
    let status = env.ok(&["status"]);
    assert!(!status.contains("Logs rewritten since HEAD"), "{status}");
    let out = env.ok(&["rebuild"]);
    assert!(out.contains("both sides' entries kept"), "{out}");
    env.git(&["add", "-A", "memory", "MEMORY.md"]);
    let (committed, out) = git_with_memoir(&env, &["commit", "-qm", "merged"]);
    assert!(committed, "{out}");
    env.ok(&["check"]);
    let log = env.log_text();
    assert!(
        log.contains("seen on the kept side") && log.contains("seen after the reset"),
        "{log}"
    );
    assert!(!log.contains("<<<<<<<"), "{log}");
}

/// Two teammates changed the same sentence of MEMORY.md's own text on two
/// branches: memoir never picks one. `rebuild` regenerates the block and
/// leaves the sentence's conflict (exit 1, naming its line), `check` and
/// `status` say so, and once a person settles it the merge commits.
#[test]
fn a_conflict_in_memory_mds_own_text_is_left_for_a_person() {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    assert_eq!(env.remember("project/x", "x", &[]).0, 0);
    let text = env.read("MEMORY.md");
    env.write("MEMORY.md", format!("{text}\nWe deploy on Fridays.\n"));
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "team text"]);
    env.git(&["checkout", "-qb", "x"]);
    let text = env.read("MEMORY.md");
    env.write("MEMORY.md", text.replace("Fridays", "Mondays"));
    env.git(&["commit", "-qam", "mondays"]);
    env.git(&["checkout", "-q", "main"]);
    env.write("MEMORY.md", text.replace("Fridays", "Tuesdays"));
    env.git(&["commit", "-qam", "tuesdays"]);
    let (merged, _) = git_with_memoir(&env, &["merge", "-q", "--no-edit", "x"]);
    assert!(!merged, "the sentence conflicts");
    let status = env.ok(&["status"]);
    assert!(
        status.contains("both branches changed MEMORY.md's own text"),
        "{status}"
    );
    let err = env.fails(&["rebuild"], 1);
    assert!(
        err.contains("MEMORY.md:") && err.contains("left as git left it"),
        "{err}"
    );
    let after = env.read("MEMORY.md");
    assert!(
        after.contains("Mondays") && after.contains("Tuesdays"),
        "nothing dropped: {after}"
    );
    let err = env.fails(&["check"], 1);
    assert!(err.contains("error[conflict]"), "{err}");
    // A person settles it.
    let settled: String = after
        .lines()
        .filter(|l| {
            !l.starts_with("<<<<<<<") && !l.starts_with("=======") && !l.starts_with(">>>>>>>")
        })
        .filter(|l| !l.contains("Mondays"))
        .map(|l| format!("{l}\n"))
        .collect();
    env.write("MEMORY.md", settled);
    env.ok(&["check"]);
    env.git(&["add", "-A", "memory", "MEMORY.md"]);
    let (committed, out) = git_with_memoir(&env, &["commit", "-qm", "merged"]);
    assert!(committed, "{out}");
    assert!(env.read("MEMORY.md").contains("We deploy on Tuesdays."));
}
