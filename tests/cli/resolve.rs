//! Conflicts shown as diffs, and each way to resolve them.

use crate::util::Env;
use memoir::event::{new_id, Event, Op};
use memoir::time::Timestamp;
use serde_json::Value;

/// A store where project/db forked: ours says Postgres 16, Bob's branch
/// said MySQL 8, both made from Postgres 15. Returns (env, Bob's event id).
fn forked() -> (Env, String) {
    let env = Env::new();
    let out = env
        .cmd(&[
            "--json",
            "remember",
            "project/db",
            "-d",
            "Postgres 15",
            "-s",
            "s",
        ])
        .output()
        .expect("run");
    let base: Value = serde_json::from_slice(&out.stdout).expect("json");
    let base = base["id"].as_str().expect("id").to_string();
    assert_eq!(
        env.remember("project/db", "Postgres 16 here", &["--replace"])
            .0,
        0
    );
    let time = Timestamp::parse("2026-11-29T11:00:00Z").expect("time");
    let theirs = env
        .read("memory/project/db.md")
        .replace("Postgres 16 here", "MySQL 8 there")
        .replace("source: stated by the user", "source: bob");
    let event = Event {
        id: new_id(time).expect("id"),
        op: Op::Remember,
        time,
        actor: "Bob <bob@example.com>".into(),
        key: Some(memoir::key::Key::parse("project/db").expect("key").0),
        prev: vec![base],
        reason: None,
        consumed: vec![],
        redacted: None,
        body: theirs,
    };
    env.write("memory/log/2026-11-29/bob-0badc0de.md", event.render());
    env.ok(&["rebuild"]);
    (env, event.id)
}

fn conflicts(env: &Env) -> Value {
    serde_json::from_str(&env.ok(&["--json", "conflicts"])).expect("json")
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
    env.ok(&["resolve", "project/db", "--keep"]);
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

    let (env, _) = forked();
    let out = env.ok(&["resolve", "project/db", "--both"]);
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
    assert!(env
        .read("memory/project/db.md")
        .contains("description: CockroachDB"));
    env.ok(&["check"]);
    // Nothing left to resolve.
    env.fails(&["resolve", "project/db", "--keep"], 1);
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
