//! Conflicts shown as diffs, and each way to resolve them.

use crate::util::{forked, Env};
use serde_json::Value;

fn conflicts(env: &Env) -> Value {
    let v: Value = serde_json::from_str(&env.ok(&["--json", "conflicts"])).expect("json");
    v["conflicts"].clone()
}

#[test]
fn conflicts_show_each_version_as_a_diff_with_who_when_and_source() {
    let (env, bob) = forked();
    let text = env.ok(&["conflicts"]);
    assert!(
        text.contains("conflict project/db (2 versions to choose from)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "remember {bob} by Bob <bob@example.com> at 2026-11-29T11:00:00Z, source: bob"
        )),
        "{text}"
    );
    assert!(
        text.contains("-description: Postgres 15") && text.contains("+description: MySQL 8 there"),
        "{text}"
    );
    let v = conflicts(&env);
    assert_eq!(v[0]["candidates"].as_array().map(Vec::len), Some(2));
}

#[test]
fn keep_take_both_and_edit_each_give_the_expected_files() {
    let (env, _) = forked();
    // After a fork the file shows the version both started from: --keep
    // says it keeps neither side's.
    let out = env.ok(&["resolve", "project/db", "--keep"]);
    assert!(
        out.contains("kept the version both branches started from"),
        "{out}"
    );
    assert!(env
        .read("memory/project/db.md")
        .contains("description: Postgres 15"));
    assert_eq!(conflicts(&env), serde_json::json!([]));
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("conflict"), "{err}");

    let (env, bob) = forked();
    env.ok(&["resolve", "project/db", "--take", &bob[..10]]);
    assert!(env
        .read("memory/project/db.md")
        .contains("description: MySQL 8 there"));
    env.ok(&["check"]);

    // --both keeps the two sides, not the ancestor as a third memory.
    let (env, _) = forked();
    let out = env.ok(&["resolve", "project/db", "--both"]);
    assert!(
        out.contains("kept the other version as project/db-2") && !out.contains("db-3"),
        "{out}"
    );
    let sides = [
        env.read("memory/project/db.md"),
        env.read("memory/project/db-2.md"),
    ]
    .concat();
    assert!(
        sides.contains("Postgres 16 here") && sides.contains("MySQL 8 there"),
        "{sides}"
    );
    assert!(!sides.contains("Postgres 15"), "{sides}");
    assert!(!crate::util::exists(&env.path("memory/project/db-3.md")));
    assert!(!env.read("MEMORY.md").contains("Postgres 15"));
    env.ok(&["check"]);

    // --keep-ancestor keeps the one both started from too.
    let (env, _) = forked();
    let out = env.ok(&["resolve", "project/db", "--both", "--keep-ancestor"]);
    assert!(
        out.contains("project/db-2") && out.contains("project/db-3"),
        "{out}"
    );
    assert!(env
        .read("memory/project/db.md")
        .contains("description: Postgres 15"));
    let others = [
        env.read("memory/project/db-2.md"),
        env.read("memory/project/db-3.md"),
    ]
    .concat();
    assert!(
        others.contains("Postgres 16 here") && others.contains("MySQL 8 there"),
        "{others}"
    );
    assert!(env.read("memory/project/db-2.md").contains("name: db-2\n"));
    env.ok(&["check"]);

    let (env, _) = forked();
    let mut cmd = env.cmd(&["resolve", "project/db", "--edit"]);
    cmd.env("EDITOR", "sed -i s/Postgres.15/CockroachDB/");
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let edited = env.read("memory/project/db.md");
    assert!(edited.contains("description: CockroachDB"));
    // A decision made now, by whom and how, not the ancestor's.
    assert!(
        edited.contains("source: decided by Ada on 2026-11-29 (memoir resolve --edit)"),
        "{edited}"
    );
    assert!(
        edited.contains(&format!("updated: {}", env.now)),
        "{edited}"
    );
    env.ok(&["check"]);
    // Nothing left to resolve.
    env.fails(&["resolve", "project/db", "--keep"], 1);

    // git's order: GIT_EDITOR before core.editor before VISUAL and EDITOR.
    let edited_by = |core_editor: &str, vars: &[(&str, &str)]| {
        let (env, _) = forked();
        env.git(&["config", "core.editor", core_editor]);
        let mut cmd = env.cmd(&["resolve", "project/db", "--edit"]);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        env.read("memory/project/db.md")
    };
    let core = edited_by(
        "sed -i s/Postgres.15/FromCoreEditor/",
        &[("EDITOR", "false"), ("VISUAL", "false")],
    );
    assert!(core.contains("FromCoreEditor"), "{core}");
    let git = edited_by(
        "false",
        &[("GIT_EDITOR", "sed -i s/Postgres.15/FromGitEditor/")],
    );
    assert!(git.contains("FromGitEditor"), "{git}");

    // Quitting the editor without a change decides nothing.
    let (env, _) = forked();
    let before = env.read("memory/project/db.md");
    let out = env
        .cmd(&["resolve", "project/db", "--edit"])
        .env("GIT_EDITOR", "true")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing was changed in the editor"), "{err}");
    assert_eq!(env.read("memory/project/db.md"), before);
    assert_eq!(
        conflicts(&env).as_array().map(Vec::len),
        Some(1),
        "still open"
    );
}

#[test]
fn a_pending_proposal_that_differs_is_a_conflict_resolved_by_taking_it() {
    let env = Env::new();
    assert_eq!(env.remember("project/ci", "CI runs on Jenkins", &[]).0, 0);
    let out = env
        .cmd(&[
            "--json",
            "remember",
            "project/ci",
            "-d",
            "CI runs on GitHub Actions",
            "-s",
            "s",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    let proposal: Value = serde_json::from_slice(&out.stdout).expect("json");
    let id = proposal["id"].as_str().expect("id").to_string();
    let v = conflicts(&env);
    assert_eq!(v[0]["candidates"][0]["op"], "propose");
    env.ok(&["resolve", "project/ci", "--take", &id]);
    assert!(env.read("memory/project/ci.md").contains("GitHub Actions"));
    let status: Value = serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(status["proposals"], serde_json::json!([]));
    // A bad choice names the candidates and changes nothing.
    let (env2, _) = forked();
    let before = env2.snapshot();
    let err = env2.fails(
        &[
            "resolve",
            "project/db",
            "--take",
            "01NOTANIDATALL00000000000",
        ],
        1,
    );
    assert!(err.contains("is not a version of project/db"), "{err}");
    assert_eq!(env2.snapshot(), before);
    env2.fails(&["resolve", "project/db"], 2);
}
