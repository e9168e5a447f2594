//! What the agent saw: the receipts `context` leaves, `memoir seen`, and
//! the access signal that capacity eviction weighs.

use crate::util::Env;
use serde_json::Value;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A store with a memory about running the tests and one about the database.
fn store() -> Env {
    let env = Env::new();
    for (key, description) in [
        ("project/test-command", "Run the tests with pnpm test"),
        ("project/db", "Postgres 16 listens on port 5433"),
    ] {
        let (code, _, err) = env.remember(key, description, &[]);
        assert_eq!(code, 0, "{err}");
    }
    env
}

/// `memoir --json seen [args]`, parsed.
fn seen(env: &Env, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--json", "seen"];
    all.extend_from_slice(args);
    match json(&env.ok(&all))["receipts"].clone() {
        Value::Array(items) => items,
        other => panic!("not an array: {other}"),
    }
}

/// A Claude Code payload from examples/, its `cwd` this store.
fn payload(env: &Env, name: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude-code");
    std::fs::read_to_string(root.join("payloads").join(name))
        .expect("payload")
        .replace("CWD", env.root().to_str().expect("utf8"))
}

/// `memoir context --from-hook` fed `payload`: (exit code, stdout, stderr).
fn hook(env: &Env, payload: &str) -> (i32, String, String) {
    let out = env
        .cmd(&["context", "--from-hook"])
        .write_stdin(payload.to_string())
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_query_leaves_a_receipt_of_the_versions_it_injected() {
    let env = store();
    // The index saved, then a new version only its tail knows.
    env.ok(&["list"]);
    let (code, _, err) = env.remember(
        "project/test-command",
        "Run the tests with pnpm test --run",
        &["--replace"],
    );
    assert_eq!(code, 0, "{err}");
    let printed = json(&env.ok(&["--json", "context", "how", "do", "I", "run", "the", "tests"]));
    let shown = json(&env.ok(&["--json", "show", "project/test-command"]));
    let receipts = seen(&env, &[]);
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    let r = &receipts[0];
    assert_eq!(r["kind"], "query");
    assert_eq!(r["query"], "how do I run the tests");
    assert_eq!(r["query_hash"].as_str().map(str::len), Some(16));
    assert_eq!(r["hook"], false);
    assert_eq!(
        (&r["tokens"], r["budget"].as_u64()),
        (&printed["tokens"], Some(1500))
    );
    assert_eq!(r["time"], "2026-11-29T10:41:07.000Z");
    let memories = r["memories"].as_array().expect("memories");
    assert_eq!(memories.len(), 1, "{memories:?}");
    assert_eq!(memories[0]["key"], "project/test-command");
    assert_eq!(memories[0]["versions"], shown["heads"]);
    assert_eq!(shown["heads"].as_array().map(Vec::len), Some(1));
    // The text names the query, the budget and the version by its end.
    let text = env.ok(&["seen"]);
    let head = shown["heads"][0].as_str().expect("an id");
    assert!(
        text.starts_with("2026-11-29T10:41:07Z  query  \"how do I run the tests\"  "),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "/1500 tokens\n  project/test-command  {}\n",
            &head[18..]
        )),
        "{text}"
    );
}

#[test]
fn a_hook_s_injection_is_marked_as_from_a_hook() {
    let env = store();
    let (code, out, err) = hook(&env, &payload(&env, "user-prompt-submit.json"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("project/test-command"), "{out}");
    let (code, out, err) = hook(&env, &payload(&env, "session-start.json"));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("<hot_memory>"), "{out}");
    // Nothing relevant: nothing printed, no receipt.
    let (code, out, _) = hook(&env, &payload(&env, "user-prompt-unrelated.json"));
    assert_eq!((code, out.as_str()), (0, ""));
    let receipts = seen(&env, &[]);
    assert_eq!(receipts.len(), 2, "{receipts:?}");
    let (hot, query) = (&receipts[0], &receipts[1]);
    assert_eq!(
        (&hot["kind"], &hot["hook"], &hot["query"]),
        (&"hot".into(), &true.into(), &Value::Null)
    );
    assert_eq!(hot["memories"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        (&query["kind"], &query["hook"]),
        (&"query".into(), &true.into())
    );
    assert_eq!(query["query"], "How do I run the tests here?");
    let text = env.ok(&["seen"]);
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.contains("  hot  -  ") && l.ends_with("  hook")),
        "{text}"
    );
    assert!(
        text.ends_with("1 context call injected nothing, the last at 2026-11-29T10:41:07Z\n"),
        "{text}"
    );
}

#[test]
fn receipts_hash_keeps_no_query_text_and_off_keeps_no_receipt() {
    let env = store();
    env.write("memory/config.yaml", "receipts: hash\n");
    let out = env.ok(&["context", "postgres", "port", "zanzibar"]);
    assert!(out.contains("project/db"), "{out}");
    let file = env.state_dir().join("receipts.jsonl");
    let text = std::fs::read_to_string(&file).expect("a receipt");
    assert!(
        !text.contains("zanzibar") && !text.contains("postgres"),
        "{text}"
    );
    let r = &seen(&env, &[])[0];
    assert_eq!(r["query"], Value::Null);
    let hash = r["query_hash"].as_str().expect("a hash");
    assert!(env.ok(&["seen"]).contains(&format!("  query  #{hash}  ")));
    env.write("memory/config.yaml", "receipts: off\n");
    std::fs::remove_file(&file).expect("rm");
    let out = env.ok(&["context", "postgres", "port"]);
    assert!(out.contains("project/db"), "{out}");
    env.ok(&["context"]);
    assert!(!file.exists(), "no receipt with receipts: off");
    assert_eq!(env.ok(&["seen"]), "");
    assert!(seen(&env, &[]).is_empty());
}

#[test]
fn seen_shows_the_newest_first_and_last_n_only() {
    let env = store();
    assert_eq!(env.ok(&["seen"]), "", "nothing recorded: nothing printed");
    env.ok(&["context", "run", "the", "tests"]);
    env.ok(&["context", "postgres", "port"]);
    let all = seen(&env, &[]);
    let queries: Vec<&Value> = all.iter().map(|r| &r["query"]).collect();
    assert_eq!(queries, ["postgres port", "run the tests"]);
    let last = seen(&env, &["--last", "1"]);
    assert_eq!(last.len(), 1);
    assert_eq!(last[0]["query"], "postgres port");
    let text = env.ok(&["seen", "--last", "1"]);
    assert!(
        text.contains("\"postgres port\"") && !text.contains("run the tests"),
        "{text}"
    );
}

#[test]
fn a_damaged_receipts_or_access_file_fails_neither_context_nor_seen() {
    let env = store();
    env.ok(&["context", "run", "the", "tests"]);
    let state = env.state_dir();
    let receipts = state.join("receipts.jsonl");
    let mut bytes = std::fs::read(&receipts).expect("receipts");
    bytes.extend_from_slice(b"{\"v\":1,\"time\":\"yesterday\"}\n\xff\xfe not json\n{\"v\":1,\"ki");
    std::fs::write(&receipts, bytes).expect("damage");
    std::fs::write(state.join("access.bin"), b"memoirA\n\xff\xff\xff").expect("damage");
    let out = env.ok(&["context", "postgres", "port"]);
    assert!(out.contains("project/db"), "{out}");
    let (code, out, err) = env.run(&["--json", "seen"]);
    assert_eq!(code, 0, "{err}");
    let queries: Vec<Value> = json(&out)["receipts"]
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| r["query"].clone())
        .collect();
    assert_eq!(
        queries,
        ["postgres port", "run the tests"],
        "the bad lines skipped"
    );
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(err.contains("3 lines that are not receipts"), "{err}");
    // A receipt that cannot be written: the block is printed all the
    // same, with one warning; a hook exits 0.
    std::fs::remove_file(&receipts).expect("rm");
    std::fs::create_dir(&receipts).expect("a folder in its way");
    let (code, out, err) = env.run(&["context", "postgres", "port"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("project/db"), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("warning") && err.contains("no receipt recorded"),
        "{err}"
    );
    let (code, out, err) = hook(&env, &payload(&env, "user-prompt-submit.json"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("project/test-command"), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(env.ok(&["seen"]), "");
}

#[test]
fn context_recall_and_seen_change_nothing_in_git() {
    let env = Env::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    let (code, _, err) = env.remember("project/db", "Postgres 16 listens on port 5433", &[]);
    assert_eq!(code, 0, "{err}");
    env.ok(&["consolidate"]);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    env.ok(&["context", "postgres", "port"]);
    env.ok(&["context"]);
    env.ok(&["recall", "postgres"]);
    assert!(!env.ok(&["seen"]).is_empty());
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn capacity_keeps_a_memory_context_injects_often() {
    let env = Env::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    env.write("memory/config.yaml", "capacity:\n  project: 3\n");
    for (name, description, confidence) in [
        ("alpha", "alpha lighthouse keeper", "0.9"),
        ("bravo", "bravo submarine cable", "0.2"),
        ("charlie", "charlie volcano sensor", "0.8"),
        ("delta", "delta glacier drill", "0.5"),
    ] {
        let (code, _, err) = env.remember(
            &format!("project/{name}"),
            description,
            &["--confidence", confidence],
        );
        assert_eq!(code, 0, "{err}");
    }
    let evicts = |name: &str| {
        let out = env.ok(&["consolidate", "--dry-run"]);
        assert_eq!(out.matches("evict project/").count(), 1, "{out}");
        out.contains(&format!("evict project/{name}"))
    };
    // No access data: MEMORY.md's order, the lowest confidence goes.
    assert!(evicts("bravo"));
    // A recall is no injection: the order stays.
    for _ in 0..5 {
        assert!(env
            .ok(&["recall", "bravo", "submarine"])
            .contains("project/bravo"));
    }
    assert!(evicts("bravo"));
    // Injected five times: 0.2 × (1 + ln 6) ≈ 0.56 outweighs delta's 0.5.
    for _ in 0..5 {
        assert!(env
            .ok(&["context", "bravo", "submarine"])
            .contains("project/bravo"));
    }
    assert!(evicts("delta"));
    env.ok(&["consolidate"]);
    assert!(env.path("memory/project/bravo.md").exists());
    assert!(!env.path("memory/project/delta.md").exists());
}

/// The hot memory's receipt lists the recent notes it printed, as a
/// query's lists the notes it found.
#[test]
fn the_hot_memory_s_receipt_lists_its_notes() {
    let env = store();
    env.ok(&["note", "the CI cache misses on Mondays"]);
    let out = env.ok(&["context"]);
    assert!(out.contains("<recent_notes>"), "{out}");
    let receipts = seen(&env, &[]);
    let notes = receipts[0]["notes"].as_array().cloned().unwrap_or_default();
    assert_eq!(notes.len(), 1, "{receipts:?}");
    let text = env.ok(&["seen"]);
    let id = notes[0].as_str().expect("an id");
    assert!(
        text.contains(&format!("  note {}", &id[id.len() - 8..])),
        "{text}"
    );
}

#[test]
fn a_budget_shared_with_the_personal_store_shows_as_set_and_as_shared() {
    // The person's own store speaks first, within a third of the budget;
    // the repository's receipt said "n/1320 tokens" for a --budget 1500,
    // a budget nobody set.
    let env = store();
    let (code, _, err) = env.remember(
        "user/test-style",
        "Ada wants the tests run before every commit",
        &["--type", "user"],
    );
    assert_eq!(code, 0, "{err}");
    let printed = json(&env.ok(&[
        "--json", "context", "--budget", "1500", "run", "the", "tests",
    ]));
    assert_eq!(printed["personal"][0], "user/test-style", "{printed}");
    let receipts = seen(&env, &[]);
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    let r = &receipts[0];
    assert_eq!(r["budget"], 1500, "{r}");
    let share = r["share"].as_u64().expect("a share");
    assert!(share < 1500, "{r}");
    let text = env.ok(&["seen"]);
    assert!(text.contains(&format!("/{share} of 1500 tokens")), "{text}");
}
