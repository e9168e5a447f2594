//! docs/cli.md is the JSON contract: every command's document has exactly
//! the top-level keys its "JSON documents" table lists, `format` first.

use crate::util::Env;
use serde_json::Value;

/// The table's rows: command → keys (and whether the row lists only some, `…`).
fn documented() -> Vec<(String, Vec<String>, bool)> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md"),
    )
    .expect("docs/cli.md");
    let table = doc
        .split("## JSON documents")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap_or("");
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let command = cells[1].trim_matches('`').to_string();
            let some = cells[2].contains('…');
            let keys = cells[2]
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty() && !k.contains('…'))
                .map(String::from)
                .collect();
            (command, keys, some)
        })
        .collect()
}

#[test]
fn every_command_prints_the_keys_docs_cli_md_lists() {
    let env = Env::new();
    env.remember("project/db", "The database is Postgres 16", &[]);
    env.ok(&["note", "a note"]);
    env.ok(&["consolidate", "--yes"]);
    let claude = env.dir.path().join("claude");
    std::fs::create_dir_all(&claude).expect("dir");
    let claude = claude.to_str().expect("utf-8").to_string();
    let rows = documented();
    assert!(rows.len() >= 20, "{rows:?}");
    for (command, keys, some) in rows {
        let args: Vec<String> = match command.as_str() {
            "init" => vec!["init".into()],
            "note" => vec!["note".into(), "another note".into()],
            "remember" => [
                "remember",
                "project/cache",
                "-d",
                "Redis caches sessions",
                "-s",
                "ops",
            ]
            .map(String::from)
            .to_vec(),
            "forget" => ["forget", "project/cache", "--reason", "gone"]
                .map(String::from)
                .to_vec(),
            "show" => ["show", "project/db"].map(String::from).to_vec(),
            "recall" => ["recall", "postgres"].map(String::from).to_vec(),
            "context" => ["context", "postgres"].map(String::from).to_vec(),
            "rebuild" => ["rebuild", "--check"].map(String::from).to_vec(),
            "consolidate" => ["consolidate", "--dry-run"].map(String::from).to_vec(),
            "history" => ["history", "project/db"].map(String::from).to_vec(),
            "hooks" => ["hooks", "install"].map(String::from).to_vec(),
            "setup" => ["setup", "claude-code", "--dry-run"]
                .map(String::from)
                .to_vec(),
            "import" => vec!["import".into(), "claude-code".into(), claude.clone()],
            "export" => vec![
                "export".into(),
                "claude-code".into(),
                claude.clone(),
                "--dry-run".into(),
            ],
            "(any failure)" => ["show", "project/nope"].map(String::from).to_vec(),
            other => vec![other.to_string()],
        };
        let mut all = vec!["--json".to_string()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let (_, out, err) = env.run(&all);
        let v: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{command}: {e}: {out}{err}"));
        let got: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
        assert_eq!(
            got.first().map(String::as_str),
            Some("format"),
            "{command}: {out}"
        );
        if some {
            for k in &keys {
                assert!(
                    got.contains(k),
                    "{command}: documented `{k}` missing from {got:?}"
                );
            }
        } else {
            let (mut a, mut b) = (got.clone(), keys.clone());
            a.sort();
            b.sort();
            assert_eq!(
                a, b,
                "{command}: docs/cli.md says {keys:?}, memoir prints {got:?}"
            );
        }
    }
}
