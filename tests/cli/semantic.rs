//! Semantic recall through a deterministic fake embedder
//! (`tests/fixtures/fake_embedder.py`): the hybrid path end to end, one
//! embedding call per query over a warm cache, and the keyword answer with
//! one warning whenever the embedder fails.

use crate::util::Env;
use serde_json::Value;

/// Memories enough for a similarity to stand out of the store's.
const MEMORIES: [(&str, &str); 12] = [
    (
        "project/deploys",
        "Deploys go out through the release pipeline on weekdays",
    ),
    (
        "project/database",
        "Postgres sixteen is the production database",
    ),
    ("project/cache", "Redis caches sessions for thirty minutes"),
    ("project/lint", "Run the linter before every commit"),
    (
        "project/email",
        "Transactional email goes through the mail provider",
    ),
    (
        "project/search",
        "Meilisearch indexes the product catalogue nightly",
    ),
    ("project/flags", "Feature toggles live in the flag service"),
    ("project/logging", "Services write structured JSON logs"),
    (
        "project/storage",
        "Uploads are stored in object storage buckets",
    ),
    ("project/auth", "Authentication uses signed session cookies"),
    ("project/oncall", "The rotation hands over on Mondays"),
    (
        "project/frontend",
        "The web client is built with React and Vite",
    ),
];

fn fake_embedder() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fake_embedder.py")
        .to_string_lossy()
        .into_owned()
}

/// A store of [`MEMORIES`] whose config runs the fake embedder with
/// `options`, counting its calls in `calls.txt`.
fn store_with(options: &[&str]) -> Env {
    let env = Env::new();
    env.ok(&["init"]);
    for (key, description) in MEMORIES {
        assert_eq!(env.remember(key, description, &[]).0, 0, "{key}");
    }
    configure(&env, options, 5000);
    env
}

fn configure(env: &Env, options: &[&str], timeout_ms: u64) {
    let calls = env.path("calls.txt").to_string_lossy().into_owned();
    let mut argv = vec![
        "python3".to_string(),
        fake_embedder(),
        "--count".into(),
        calls,
    ];
    argv.extend(options.iter().map(|o| o.to_string()));
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    env.write(
        "memory/config.yaml",
        format!(
            "embeddings:\n  command: [{}]\n  model: fake-64\n  timeout_ms: {timeout_ms}\n",
            argv.join(", ")
        ),
    );
}

fn calls(env: &Env) -> usize {
    std::fs::read_to_string(env.path("calls.txt"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn recall(env: &Env, query: &str) -> (Vec<Value>, String) {
    let (code, out, err) = env.run(&["--json", "recall", "--", query]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    (v["hits"].as_array().cloned().unwrap_or_default(), err)
}

#[test]
fn recall_is_hybrid_with_one_embedding_call_per_query_over_a_warm_cache() {
    let env = store_with(&[]);
    let (hits, err) = recall(&env, "which database runs in production");
    assert!(err.is_empty(), "{err}");
    assert_eq!(hits[0]["key"], "project/database", "{hits:?}");
    assert!(hits.iter().all(|h| h["mode"] == "hybrid"), "{hits:?}");
    assert!(hits[0]["similarity"].as_f64().is_some_and(|s| s > 0.0));
    // Every memory and the query went in one call; the next query, one
    // more; a changed memory rides along with its query.
    assert_eq!(calls(&env), 1);
    recall(&env, "how do deploys go out");
    assert_eq!(calls(&env), 2);
    assert_eq!(
        env.remember(
            "project/cache",
            "Redis caches sessions for an hour",
            &["--replace"]
        )
        .0,
        0
    );
    recall(&env, "how long are sessions cached");
    assert_eq!(calls(&env), 3);
    // context answers from the same path; the cache is local state, never
    // in git's view of the store.
    let ctx = env.ok(&["context", "--", "which database runs in production"]);
    assert!(ctx.contains("project/database"), "{ctx}");
    assert_eq!(calls(&env), 4);
    let status = env.git(&["status", "--porcelain", "--ignored"]);
    assert!(!status.contains("vectors"), "{status}");
}

#[test]
fn a_memory_found_only_by_its_embedding_is_relevant_when_it_stands_out() {
    let env = store_with(&[]);
    // Misspelt but for one word: the keywords cover too little of the
    // query to answer (0.18 of it); the fake embedder reads words by their
    // first five letters, which these share with the flags memory.
    let query = "featurez togglez servicez flag";
    env.write("memory/config.yaml", "");
    let (weaker, _) = recall(&env, query);
    assert!(weaker.iter().all(|h| h["relevant"] == false), "{weaker:?}");
    configure(&env, &[], 5000);
    let (hits, err) = recall(&env, query);
    assert!(err.is_empty(), "{err}");
    assert_eq!(hits[0]["key"], "project/flags", "{hits:?}");
    assert_eq!(hits[0]["relevant"], true, "{hits:?}");
    assert!(hits.iter().all(|h| h["mode"] == "hybrid"));
    // Nothing near: nothing at all; and without a word the store knows,
    // the embeddings alone never answer.
    assert_eq!(recall(&env, "quokka zebra narwhal").0, Vec::<Value>::new());
    assert_eq!(
        recall(&env, "featurez togglez servicez").0,
        Vec::<Value>::new()
    );
}

#[test]
fn any_embedder_failure_is_one_warning_and_the_keyword_answer() {
    let env = store_with(&[]);
    env.write("memory/config.yaml", "");
    let (keyword_only, err) = recall(&env, "which database runs in production");
    assert!(err.is_empty(), "{err}");
    assert!(keyword_only.iter().all(|h| h["mode"] == "keyword"));
    let keys = |hits: &[Value]| -> Vec<String> {
        hits.iter()
            .map(|h| h["key"].as_str().unwrap_or("").to_string())
            .collect()
    };
    for (options, timeout) in [(&["--fail"][..], 5000), (&["--sleep", "3"][..], 300)] {
        configure(&env, options, timeout);
        let (hits, err) = recall(&env, "which database runs in production");
        assert_eq!(err.lines().count(), 1, "{options:?}: {err}");
        assert!(err.contains("semantic recall unavailable"), "{err}");
        assert!(hits.iter().all(|h| h["mode"] == "keyword"), "{options:?}");
        assert_eq!(keys(&hits), keys(&keyword_only), "{options:?}");
        // context never fails because of it either.
        let (code, out, err) = env.run(&["context", "--", "which database runs in production"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("project/database"), "{out}");
    }
    // Not even reachable: the same.
    configure(&env, &[], 5000);
    let broken = "embeddings:\n  url: http://127.0.0.1:9/v1/embeddings\n  model: fake-64\n  timeout_ms: 500\n";
    env.write("memory/config.yaml", broken);
    let (hits, err) = recall(&env, "which database runs in production");
    assert!(err.contains("semantic recall unavailable"), "{err}");
    assert_eq!(keys(&hits), keys(&keyword_only));
    // A model of another dimension behind the same name: reported once,
    // then the cache holds the new vectors and recall is hybrid again.
    configure(&env, &[], 5000);
    recall(&env, "warm the cache");
    configure(&env, &["--dim", "32"], 5000);
    let (hits, err) = recall(&env, "which database runs in production");
    assert!(err.contains("semantic recall unavailable"), "{err}");
    assert!(hits.iter().all(|h| h["mode"] == "keyword"));
    let (hits, err) = recall(&env, "which database runs in production");
    assert!(err.is_empty(), "{err}");
    assert!(hits.iter().all(|h| h["mode"] == "hybrid"), "{hits:?}");
}
