//! The optional reader for injection (`rerank:` in `memory/config.yaml`),
//! driven with the deterministic fake reranker
//! (`tests/fixtures/fake_reranker.py`: a document's score is the share of
//! the query's words of three letters or more that it has).

use crate::util::Env;
use serde_json::Value;

fn fake_reranker() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_reranker.py")
        .to_string_lossy()
        .into_owned()
}

/// A store of three memories whose config runs the fake reranker with
/// `options`, logging each request in `rerank.log`.
fn store_with(options: &[&str]) -> Env {
    let env = Env::new();
    env.ok(&["init"]);
    for (key, description) in [
        (
            "project/database",
            "The database is Postgres 16, version pinned",
        ),
        (
            "project/migrations",
            "Database migrations run with sqlx migrate",
        ),
        ("project/deploys", "Deploys go out on Tuesdays only"),
    ] {
        assert_eq!(env.remember(key, description, &[]).0, 0, "{key}");
    }
    let log = env.path("rerank.log").to_string_lossy().into_owned();
    let mut argv = vec!["python3".to_string(), fake_reranker(), "--log".into(), log];
    argv.extend(options.iter().map(|o| o.to_string()));
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    env.write(
        "memory/config.yaml",
        format!(
            "rerank:\n  command: [{}]\n  timeout_ms: 5000\n  min_score: 0.6\n",
            argv.join(", ")
        ),
    );
    env
}

fn requests(env: &Env) -> Vec<Value> {
    std::fs::read_to_string(env.path("rerank.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn injected(env: &Env, query: &str) -> (Vec<String>, String) {
    let (code, out, err) = env.run(&["--json", "context", "--", query]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let keys = v["memories"]
        .as_array()
        .expect("memories")
        .iter()
        .map(|k| k.as_str().expect("key").to_string())
        .collect();
    (keys, err)
}

#[test]
fn context_injects_what_the_reranker_scores_high_in_one_call() {
    let env = store_with(&[]);
    // Both database memories match the words; the reader scores the one
    // about the version 2/3 and the migrations 1/3 (below 0.6).
    let (keys, err) = injected(&env, "postgres database version");
    assert!(err.is_empty(), "{err}");
    assert_eq!(keys, ["project/database"]);
    let sent = requests(&env);
    assert_eq!(sent.len(), 1, "one call per context: {sent:?}");
    assert_eq!(sent[0]["query"], "postgres database version");
    // Nothing the reader scores high enough: nothing injected.
    assert_eq!(
        injected(&env, "the database of my weekend project").0,
        Vec::<String>::new()
    );
    // recall is for a reader already: it never calls the reranker.
    env.ok(&["recall", "postgres database"]);
    assert_eq!(requests(&env).len(), 2);
}

#[test]
fn a_failing_reranker_is_one_warning_and_the_decision_without_it() {
    let plain = store_with(&[]);
    std::fs::remove_file(plain.path("memory/config.yaml")).expect("no reranker");
    let (without, _) = injected(&plain, "postgres database version");
    for failure in [
        &["--fail"][..],
        &["--answer", "bad-json"],
        &["--answer", "missing"],
    ] {
        let env = store_with(failure);
        let (keys, err) = injected(&env, "postgres database version");
        assert_eq!(keys, without, "{failure:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("reranking unavailable"), "{err}");
    }
}
