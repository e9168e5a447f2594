//! `memoir import` and `memoir export` against realistic fixtures of
//! Claude Code's auto memory (tests/fixtures/claude-code/memory) and an
//! OpenClaw workspace (tests/fixtures/openclaw/workspace).

use crate::util::Env;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// A copy of a fixture folder in the test's own directory.
fn copy_of(env: &Env, rel: &str, to: &str) -> PathBuf {
    let dest = env.dir.path().join(to);
    for entry in walkdir::WalkDir::new(fixture(rel)) {
        let entry = entry.expect("entry");
        let target = dest.join(entry.path().strip_prefix(fixture(rel)).expect("prefix"));
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("dir");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
    dest
}

fn json(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (_, out, err) = env.run(&all);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"))
}

/// Topic files of both shapes become memories with their provenance; a
/// second import adds nothing.
#[test]
fn claude_code_topic_files_become_memories_once() {
    let env = Env::new();
    let dir = fixture("claude-code/memory");
    let dir = dir.to_str().expect("utf-8");
    let out = env.ok(&["import", "claude-code", dir]);
    assert!(
        out.ends_with(": 4 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    let keys: Vec<String> = json(&env, &["list"])["memories"]
        .as_array()
        .expect("list")
        .iter()
        .map(|m| m["key"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "project/feedback-commits",
            "project/reference-dashboards",
            "project/release",
            "user/role"
        ]
    );
    let commits = env.read("memory/project/feedback-commits.md");
    assert!(commits.contains("type: feedback\n"), "{commits}");
    assert!(
        commits
            .contains("source: imported from Claude Code feedback_commits.md (\"Commit style\")"),
        "{commits}"
    );
    assert!(
        commits.contains("created: 2026-10-02T09:14:22Z"),
        "the file's own date: {commits}"
    );
    assert!(
        commits.contains("[[project_release]]") && commits.contains("**How to apply:**"),
        "{commits}"
    );
    let role = json(&env, &["show", "user/role"]);
    assert_eq!(role["type"], "user");
    assert!(
        env.path("memory/log/2026-10-02").is_dir(),
        "the event is logged at its own date"
    );
    env.ok(&["check"]);

    let before = env.snapshot();
    let out = env.ok(&["import", "claude-code", dir]);
    assert!(
        out.ends_with(": 0 added, 4 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert_eq!(env.snapshot(), before);
}

/// Every bad file is reported in one run, the good ones imported all the
/// same; a secret is refused and never echoed; exit 3.
#[test]
fn every_bad_file_is_reported_in_one_run() {
    let env = Env::new();
    let dir = copy_of(&env, "claude-code/memory", "cc");
    let secret = concat!("ghp_", "0123456789abcdefghijABCDEFGHIJ012345");
    std::fs::write(
        dir.join("broken.md"),
        "---\nname: x\ndescription: [unclosed\n---\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("opinion.md"),
        "---\ndescription: d\ntype: opinion\n---\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("token.md"),
        format!("---\nname: token\ndescription: the deploy token\ntype: project\n---\n{secret}\n"),
    )
    .expect("write");
    let (code, out, err) = env.run(&["import", "claude-code", dir.to_str().expect("utf-8")]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("invalid (broken.md): line 4: frontmatter is not YAML"),
        "{out}"
    );
    assert!(
        out.contains("invalid (opinion.md): line 2: unknown type `opinion`"),
        "{out}"
    );
    assert!(
        out.contains("refused project/token (token.md): secret:github-pat: looks like a secret"),
        "{out}"
    );
    assert!(!out.contains(secret) && !err.contains(secret));
    assert!(
        out.ends_with(": 4 added, 0 unchanged, 0 proposed, 1 refused, 2 invalid\n"),
        "{out}"
    );
    assert!(!env.path("memory/project/token.md").exists());
}

/// Without a folder, import finds Claude Code's own for the project:
/// `~/.claude/projects/<root as a name>/memory`, or the override variable.
#[test]
fn claude_codes_folder_is_found_as_claude_code_finds_it() {
    let env = Env::new();
    let root = std::fs::canonicalize(env.root()).expect("root");
    let name: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    copy_of(
        &env,
        "claude-code/memory",
        &format!("home/.claude/projects/{name}/memory"),
    );
    let out = env.ok(&["import", "claude-code", "--dry-run"]);
    assert!(
        out.ends_with(": 4 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert!(out.starts_with("would be added"), "{out}");
    assert!(env.memory_files().is_empty(), "a dry run writes nothing");

    let other = copy_of(&env, "claude-code/memory", "elsewhere");
    std::fs::remove_file(other.join("user_role.md")).expect("rm");
    let out = env
        .cmd(&["import", "claude-code"])
        .env("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", &other)
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.ends_with(": 3 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
}

/// Import, export, import again: nothing changes. Export keeps Claude
/// Code's own files, indexes them after memoir's, and removes the file of
/// a memory memoir forgot.
#[test]
fn export_round_trips_and_keeps_claude_codes_own_files() {
    let env = Env::new();
    env.ok(&[
        "import",
        "claude-code",
        fixture("claude-code/memory").to_str().expect("utf-8"),
    ]);
    env.remember("project/deploy-day", "Deploys go out on weekdays only", &[]);
    let out_dir = env.dir.path().join("cc");
    let out = out_dir.to_str().expect("utf-8");
    // The repository's memories and the person's own (user/role went to
    // the personal store).
    env.ok(&["export", "claude-code", out]);
    let before = env.snapshot();
    let again = env.ok(&["import", "claude-code", out]);
    assert!(
        again.ends_with(": 0 added, 5 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{again}"
    );
    assert_eq!(
        env.snapshot(),
        before,
        "import after export changes nothing"
    );
    let same = env.ok(&["export", "claude-code", out]);
    assert!(
        same.ends_with(": 0 written, 0 removed, 5 unchanged\n"),
        "{same}"
    );

    std::fs::write(out_dir.join("project_own.md"), "---\nname: Own note\ndescription: Claude Code wrote this one\nmetadata:\n  type: project\n---\nMine.\n").expect("write");
    env.ok(&["export", "claude-code", out]);
    let index = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines.len(), 6, "{index}");
    assert!(lines.contains(&"- [Commit style](feedback_commits.md) — Small commits, imperative subjects, no WIP on main"), "{index}");
    assert!(
        lines.contains(&"- [deploy-day](project_deploy_day.md) — Deploys go out on weekdays only"),
        "{index}"
    );
    assert_eq!(
        lines[5], "- [Own note](project_own.md) — Claude Code wrote this one",
        "{index}"
    );

    env.ok(&[
        "forget",
        "project/deploy-day",
        "--reason",
        "moved to Wednesdays",
    ]);
    let out2 = env.ok(&["export", "claude-code", out]);
    assert!(out2.contains("remove project_deploy_day.md"), "{out2}");
    assert!(out_dir.join("project_own.md").exists());
    assert!(!out_dir.join("project_deploy_day.md").exists());
    // Its line alone leaves the index; the others stay in their order.
    let after = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    let expected: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.contains("(project_deploy_day.md)"))
        .collect();
    assert_eq!(after.lines().collect::<Vec<_>>(), expected, "{after}");
}

/// The index stays within what Claude Code loads, most valuable first.
#[test]
fn the_exported_index_fits_claude_codes_load_limit() {
    let env = Env::new();
    for i in 0..210 {
        let confidence = if i == 209 { "1" } else { "0.5" };
        env.remember(
            &format!("project/fact-{i:03}"),
            &format!("Fact number {i} about the shop"),
            &["--confidence", confidence],
        );
    }
    let out_dir = env.dir.path().join("cc");
    let e = json(
        &env,
        &["export", "claude-code", out_dir.to_str().expect("utf-8")],
    );
    assert_eq!(e["left_out"], 11, "{e}");
    assert_eq!(e["cut_by"], "lines", "{e}");
    let index = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    assert!(index.lines().count() <= 200 && index.len() <= 25_000);
    assert!(
        index.starts_with("- [fact-209]"),
        "the most valuable first: {}",
        &index[..80]
    );
    assert!(index.ends_with("- 11 more memories are in memoir (`memoir list`)\n"));
}

/// OpenClaw: daily notes become notes at their own dates, curated
/// sections and active directives proposals; a second import adds nothing.
#[test]
fn an_openclaw_workspace_imports_notes_and_proposals_once() {
    let env = Env::new();
    let dir = fixture("openclaw/workspace");
    let dir = dir.to_str().expect("utf-8");
    let out = env.ok(&["import", "openclaw", dir]);
    assert!(
        out.ends_with(": 3 added, 0 unchanged, 4 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert!(
        out.contains("proposed user/call-me-ada (USER.md § Call me Ada)"),
        "{out}"
    );
    assert!(
        !out.contains("long explanations"),
        "a superseded directive is left out: {out}"
    );
    let day: Vec<_> = std::fs::read_dir(env.path("memory/log/2026-11-27"))
        .expect("the note's own day")
        .collect();
    assert_eq!(day.len(), 1);
    // Where a note came from is its event's, not its text's first line.
    assert!(env
        .log_text()
        .contains(r#""reason":"imported from OpenClaw memory/2026-11-27.md:3""#));
    assert!(!env
        .log_text()
        .contains("imported from OpenClaw memory/2026-11-27.md:\n"));
    // The repository's two; USER.md's wait in the personal store.
    assert_eq!(env.pending_proposals(), 2);
    env.ok(&["check"]);
    let found = json(&env, &["recall", "why did the checkout test flake on CI"]);
    assert_eq!(found["hits"][0]["type"], "note", "{found}");
    assert_eq!(
        found["hits"][0]["text"],
        "- The checkout test flaked twice on CI; both times the mock clock advanced during a retry.",
        "the note's text, no importer's line: {found}"
    );
    let shown = env.ok(&["recall", "why did the checkout test flake on CI"]);
    assert!(
        shown.contains("- The checkout test flaked twice"),
        "{shown}"
    );
    assert!(!shown.contains("imported from"), "{shown}");

    let before = env.snapshot();
    let again = env.ok(&["import", "openclaw", dir]);
    assert!(
        again.ends_with(": 0 added, 7 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{again}"
    );
    assert_eq!(env.snapshot(), before);
}

/// One secret line in a daily note refuses that entry only: the day's
/// other entries are imported, the refusal names the file, line and rule
/// (never the key), exits 3, and a second import adds nothing, refuses the
/// same entry again and leaves the imported ones alone.
#[test]
fn a_secret_in_a_daily_note_refuses_only_its_entry() {
    let env = Env::new();
    let key = ["AKIA", "QZ7XK2MPL4RT6WVB"].concat();
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("memory/2026-11-27.md"),
        format!(
            "# 2026-11-27\n\n- The checkout test flakes when the mock clock advances.\n- The deploy bot uses {key} for S3.\n- Payment tests use fake timers.\n"
        ),
    )
    .expect("write");
    let ws = ws.to_str().expect("utf-8");
    let (code, out, err) = env.run(&["import", "openclaw", ws]);
    assert_eq!(code, 3, "{out}{err}");
    let all = format!("{out}{err}");
    assert!(!all.contains(&key[4..]), "{all}");
    assert!(
        out.contains("refused (memory/2026-11-27.md:4): secret:aws-access-key-id: "),
        "{out}"
    );
    assert!(
        out.ends_with(": 2 added, 0 unchanged, 0 proposed, 1 refused, 0 invalid\n"),
        "{out}"
    );
    let log = env.log_text();
    assert!(log.contains("The checkout test flakes when the mock clock advances."));
    assert!(log.contains("Payment tests use fake timers."));
    assert!(!log.contains(&key[4..]));
    let found = json(&env, &["recall", "fake timers payment tests"]);
    assert_eq!(found["hits"][0]["type"], "note", "{found}");

    // A scheduled sync: nothing new, the same refusal again, the rest untouched.
    let before = env.snapshot();
    let (code, out, err) = env.run(&["--json", "import", "openclaw", ws]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(!format!("{out}{err}").contains(&key[4..]));
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["counts"]["added"], 0, "{v}");
    assert_eq!(v["counts"]["unchanged"], 2, "{v}");
    let refused: Vec<&Value> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["outcome"] == "refused")
        .collect();
    assert_eq!(refused.len(), 1, "{v}");
    assert_eq!(refused[0]["what"], "memory/2026-11-27.md:4");
    assert_eq!(refused[0]["rule"], "secret:aws-access-key-id");
    assert_eq!(env.snapshot(), before);
}

/// OpenClaw's curated MEMORY.md is for a person to review: its sections are
/// proposals at a confidence below a stated fact's, which a plain
/// `consolidate` lists and holds (exit 4) and `--accept`/`--accept-all`
/// add; `## Open questions` and `## TODO` become notes, never memories.
#[test]
fn openclaw_curated_memory_waits_for_a_person_to_accept_it() {
    let env = Env::new();
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    std::fs::write(
        ws.join("MEMORY.md"),
        "# MEMORY\n\n## Deploys\n- Deploys go out on weekdays only\n\n## Stack\nPostgres 16 and Redis 7.\n\n## Open questions\n- Should we move to Postgres 17?\n\n## TODO\n- Rotate the staging keys\n",
    )
    .expect("write");
    let ws = ws.to_str().expect("utf-8");
    let out = env.ok(&["import", "openclaw", ws]);
    assert!(
        out.contains("proposed project/deploys (MEMORY.md § Deploys)"),
        "{out}"
    );
    assert!(
        out.contains("added note (MEMORY.md § Open questions)"),
        "{out}"
    );
    assert!(out.contains("added note (MEMORY.md § TODO)"), "{out}");
    assert!(
        out.ends_with(": 2 added, 0 unchanged, 2 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert_eq!(env.pending_proposals(), 2);

    // A plain consolidation adds none of it: it lists each for a decision.
    let (code, out, err) = env.run(&["consolidate"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        out.contains(
            "conflict project/deploys: imported, for a person to review (accept: memoir consolidate --accept project/deploys)"
        ),
        "{out}"
    );
    assert!(out.contains("conflict project/stack: imported"), "{out}");
    assert!(!env.path("memory/project/deploys.md").exists());
    assert!(!env.path("memory/project/open-questions.md").exists());
    assert!(!env.path("memory/project/todo.md").exists());
    assert_eq!(env.pending_proposals(), 2);

    // Accepted one by one, or all at once.
    let (code, out, err) = env.run(&["consolidate", "--accept", "project/deploys"]);
    assert_eq!(code, 4, "project/stack still waits: {out}{err}");
    assert!(out.contains("add project/deploys"), "{out}");
    let deploys = std::fs::read_to_string(env.path("memory/project/deploys.md")).expect("added");
    assert!(deploys.contains("confidence: 0.8"), "{deploys}");
    assert!(
        deploys.contains("source: imported from OpenClaw MEMORY.md § Deploys"),
        "{deploys}"
    );
    assert!(!env.path("memory/project/stack.md").exists());
    let out = env.ok(&["consolidate", "--accept-all"]);
    assert!(out.contains("add project/stack"), "{out}");
    assert_eq!(env.pending_proposals(), 0);
    let listed = env.ok(&["list"]);
    assert!(
        !listed.contains("open-questions") && !listed.contains("todo"),
        "{listed}"
    );

    // A proposal an older memoir imported (no review mark, its source
    // says OpenClaw) waits too.
    env.ok(&[
        "remember",
        "project/cache",
        "-d",
        "Redis caches sessions",
        "-s",
        "imported from OpenClaw MEMORY.md § Cache",
        "--propose",
    ]);
    let (code, out, err) = env.run(&["consolidate"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(out.contains("conflict project/cache: imported"), "{out}");
    assert!(!env.path("memory/project/cache.md").exists());
}

/// An imported name too long for a slug is cut at a clause, else between
/// words, never inside a word: OpenClaw's directives and headings and
/// Claude Code's file names alike.
#[test]
fn imported_names_are_cut_at_words() {
    let env = Env::new();
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    std::fs::write(
        ws.join("USER.md"),
        "# USER\n\n<!-- observed: 2026-11-20 | status: active -->\n- Prefer short answers in chat, with the command first and the explanation after it\n",
    )
    .expect("user");
    std::fs::write(
        ws.join("MEMORY.md"),
        "# MEMORY\n\n## Always run the formatter and linter before pushing anything upstream\nSo CI stays green.\n",
    )
    .expect("memory");
    let out = env.ok(&["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(
        out.contains("proposed user/prefer-short-answers-in-chat ("),
        "{out}"
    );
    assert!(
        out.contains(
            "proposed project/always-run-the-formatter-and-linter-before-pushing-anything ("
        ),
        "{out}"
    );
    let cc = env.dir.path().join("cc");
    std::fs::create_dir_all(&cc).expect("cc");
    std::fs::write(
        cc.join("feedback_run_the_formatter_and_linter_before_pushing_anything_upstream.md"),
        "---\nname: Lint first\ndescription: Run the formatter and linter before pushing\ntype: feedback\n---\nSo CI stays green.\n",
    )
    .expect("topic");
    let out = env.ok(&["import", "claude-code", cc.to_str().expect("utf-8")]);
    assert!(
        out.contains(
            "added project/feedback-run-the-formatter-and-linter-before-pushing-anything ("
        ),
        "{out}"
    );
}

/// A daily note an older memoir imported whole (one note, its file on the
/// first line) is not imported again entry by entry: only what was added
/// to the file since is new.
#[test]
fn a_daily_note_imported_whole_before_adds_only_its_new_entries() {
    let env = Env::new();
    env.cmd(&["note"])
        .write_stdin("imported from OpenClaw memory/2026-11-27.md:\n# 2026-11-27\n\n- The checkout test flakes.\n- Payment tests use fake timers.")
        .assert()
        .success();
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("memory/2026-11-27.md"),
        "# 2026-11-27\n\n- The checkout test flakes.\n- Payment tests use fake timers.\n- Deploys moved to Wednesdays.\n",
    )
    .expect("write");
    let out = env.ok(&["import", "openclaw", ws.to_str().expect("utf-8")]);
    assert!(
        out.ends_with(": 1 added, 2 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert!(out.contains("added note (memory/2026-11-27.md:5)"), "{out}");
}

#[test]
fn a_name_that_holds_a_secret_is_refused_without_a_trace_of_it() {
    let env = Env::new();
    let token = ["ghp_", "Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9"].concat();
    let tail = token[8..].to_lowercase();
    // An OpenClaw section titled with it ...
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("ws");
    std::fs::write(
        ws.join("MEMORY.md"),
        format!(
            "# MEMORY\n\n## Always use {token}\nFor the deploy bot.\n\n## Stack\nPostgres 16.\n"
        ),
    )
    .expect("write");
    let ws = ws.to_str().expect("utf-8");
    for args in [
        vec!["import", "openclaw", ws],
        vec!["--json", "import", "openclaw", ws],
    ] {
        let (code, out, err) = env.run(&args);
        assert_ne!(code, 0, "{out}{err}");
        let all = format!("{out}{err}").to_lowercase();
        assert!(!all.contains(&tail), "{all}");
        assert!(all.contains("secret:github-pat"), "{all}");
    }
    // ... and a Claude Code topic file named with it.
    let cc = env.dir.path().join("cc");
    std::fs::create_dir_all(&cc).expect("cc");
    std::fs::write(
        cc.join(format!("project_{token}.md")),
        "---\nname: deploy bot\ndescription: the bot's token\ntype: project\n---\nbody\n",
    )
    .expect("write");
    let cc = cc.to_str().expect("utf-8");
    let (code, out, err) = env.run(&["--json", "import", "claude-code", cc]);
    assert_ne!(code, 0, "{out}{err}");
    let all = format!("{out}{err}").to_lowercase();
    assert!(!all.contains(&tail), "{all}");
    let everything: String = env
        .snapshot()
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).to_lowercase())
        .collect();
    assert!(!everything.contains(&tail));
}

/// Files by path, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// Every file under `dir` but git's own, by path, with its bytes.
fn files_under(dir: &Path) -> Files {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let Ok(e) = e else { continue };
        let rel = e.path().strip_prefix(dir).expect("prefix");
        if e.file_type().is_file() && !rel.starts_with(".git") {
            out.push((
                rel.to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("read"),
            ));
        }
    }
    out
}

/// What memoir keeps, in both stores: the repository's store and commits,
/// and the personal store's files.
fn memoir_state(env: &Env) -> (Files, Files, String) {
    let commits =
        String::from_utf8_lossy(&env.git_output(&["rev-list", "--all"]).stdout).into_owned();
    (
        env.snapshot(),
        files_under(&env.dir.path().join("home/.local/share/memoir/user")),
        commits,
    )
}

/// A hand-made Claude Code folder (topic files with every field:
/// `name`, `description`, `metadata.type` or a top-level `type`,
/// `modified` with its time, `originSessionId`; a hand-written MEMORY.md,
/// not sorted, with a heading and its own hooks) survives an import and
/// an export byte for byte; when memoir changes a memory, only its file
/// and its index line change, keeping Claude Code's title and session.
#[test]
fn export_leaves_what_memoir_did_not_change_byte_for_byte() {
    let env = Env::new();
    let cc = copy_of(&env, "claude-code/handmade", "cc");
    let ccs = cc.to_str().expect("utf-8");
    let before = files_under(&cc);
    env.ok(&["import", "claude-code", ccs]);
    let out = env.ok(&["export", "claude-code", ccs]);
    assert!(
        out.ends_with(": 0 written, 0 removed, 5 unchanged\n"),
        "{out}"
    );
    assert_eq!(files_under(&cc), before, "nothing was rewritten");

    // memoir changes one memory (a new source too): its file alone.
    env.ok(&[
        "remember",
        "project/release-freeze",
        "--description=No merges to main from December 19 until 4.2 ships",
        "--source=stated by the user",
        "--body=Main is frozen from December 19.",
        "--replace",
    ]);
    let out = env.ok(&["export", "claude-code", ccs]);
    assert!(
        out.contains("write project_release_freeze.md\n") && out.contains("write MEMORY.md\n"),
        "{out}"
    );
    assert!(
        out.ends_with(": 1 written, 0 removed, 4 unchanged\n"),
        "{out}"
    );
    let after = files_under(&cc);
    assert_eq!(after.len(), before.len(), "no second file: {after:?}");
    for ((name, old), (name2, new)) in before.iter().zip(&after) {
        assert_eq!(name, name2);
        if name != "project_release_freeze.md" && name != "MEMORY.md" {
            assert_eq!(old, new, "{name} is left byte for byte");
        }
    }
    let freeze = std::fs::read_to_string(cc.join("project_release_freeze.md")).expect("read");
    for kept in [
        "name: Release freeze\n",
        "originSessionId: 9b2e51f0-7c3a-4d8e-a1f6-3e0c5d7b2a94\n",
        "description: No merges to main from December 19 until 4.2 ships\n",
        "modified: 2026-11-29T10:41:07Z\n",
        "memoirKey: project/release-freeze\n",
    ] {
        assert!(freeze.contains(kept), "{kept:?} in {freeze}");
    }
    assert!(
        freeze.ends_with("\n\nMain is frozen from December 19.\n"),
        "{freeze}"
    );
    let old_index = String::from_utf8(
        before
            .iter()
            .find(|(n, _)| n == "MEMORY.md")
            .expect("index")
            .1
            .clone(),
    )
    .expect("utf-8");
    let index = std::fs::read_to_string(cc.join("MEMORY.md")).expect("index");
    let (old_lines, lines): (Vec<&str>, Vec<&str>) =
        (old_index.lines().collect(), index.lines().collect());
    assert_eq!(lines.len(), old_lines.len(), "{index}");
    for (old, new) in old_lines.iter().zip(&lines) {
        if old.contains("(project_release_freeze.md)") {
            assert_eq!(
                *new,
                "- [Release freeze](project_release_freeze.md) — No merges to main from December 19 until 4.2 ships"
            );
        } else {
            assert_eq!(old, new, "only the changed memory's line changes");
        }
    }
    // A new memory: its line is appended; every other line stays.
    env.remember("project/deploy-day", "Deploys go out on weekdays only", &[]);
    env.ok(&["export", "claude-code", ccs]);
    let grown = std::fs::read_to_string(cc.join("MEMORY.md")).expect("index");
    assert_eq!(
        grown,
        format!("{index}- [deploy-day](project_deploy_day.md) — Deploys go out on weekdays only\n")
    );
    // And back: the changed file imports as the memory it is.
    let state = memoir_state(&env);
    let again = env.ok(&["import", "claude-code", ccs]);
    assert!(
        again.ends_with(": 0 added, 6 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{again}"
    );
    assert_eq!(memoir_state(&env), state);
}

/// Import, export, import: nothing changes (exit 0, no proposal, no event,
/// no commit), even for a memory memoir gave tags, a confidence and dates
/// Claude Code's format cannot carry.
#[test]
fn import_export_import_changes_nothing() {
    let env = Env::new();
    let cc = copy_of(&env, "claude-code/handmade", "cc");
    let ccs = cc.to_str().expect("utf-8");
    env.ok(&["import", "claude-code", ccs]);
    // memoir's own fields on an imported memory, its text as Claude Code's.
    let commits = env.read("memory/project/feedback-commits.md");
    let commits = commits.replacen(
        "type: feedback\n",
        "type: feedback\ntags:\n- git\n- review\nconfidence: 0.8\nreview_by: 2027-06-01\nexpires: 2027-12-31\n",
        1,
    );
    let commits = commits.replace("confidence: 1.0\n", "");
    env.write("memory/project/feedback-commits.md", &commits);
    env.ok(&["record"]);
    let before_export = files_under(&cc);
    env.ok(&["export", "claude-code", ccs]);
    assert_eq!(
        files_under(&cc),
        before_export,
        "the export changed no file"
    );
    let state = memoir_state(&env);
    let (code, out, err) = env.run(&["import", "claude-code", ccs]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.ends_with(": 0 added, 5 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert_eq!(
        memoir_state(&env),
        state,
        "no event, no proposal, no commit"
    );
    assert_eq!(env.pending_proposals(), 0);
    let shown = json(&env, &["show", "project/feedback-commits"]);
    assert_eq!(
        shown["tags"],
        serde_json::json!(["git", "review"]),
        "{shown}"
    );
}

/// Export, import: nothing changes for memories memoir made with every
/// field (tags, confidence, review and expiry dates, a name that is not
/// its slug); their `updated` does not move.
#[test]
fn export_import_changes_nothing() {
    let mut env = Env::new();
    env.ok(&[
        "remember",
        "project/test-command",
        "--description=Run the tests with `pnpm test`",
        "--source=stated by the user",
        "--type=feedback",
        "--tags=tooling,tests",
        "--confidence=0.9",
        "--review-by=2027-05-29",
        "--expires=2027-12-31",
        "--body=Never `npm test`.\n\n**Why:** the lockfile.",
    ]);
    env.remember(
        "project/deploy-day",
        "Deploys go out on weekdays only",
        &["--tags=ops"],
    );
    let cc = env.dir.path().join("cc");
    let ccs = cc.to_str().expect("utf-8");
    env.now = "2026-11-30T08:00:00Z".into();
    env.ok(&["export", "claude-code", ccs]);
    let exported = std::fs::read_to_string(cc.join("project_test_command.md")).expect("read");
    assert!(
        exported.contains("modified: 2026-11-29T10:41:07Z\n"),
        "the time, not only the date: {exported}"
    );
    let state = memoir_state(&env);
    let (code, out, err) = env.run(&["import", "claude-code", ccs]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.ends_with(": 0 added, 2 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    assert_eq!(
        memoir_state(&env),
        state,
        "no event, no proposal, no commit"
    );
    let shown = json(&env, &["show", "project/test-command"]);
    assert_eq!(
        shown["tags"],
        serde_json::json!(["tooling", "tests"]),
        "{shown}"
    );
    assert_eq!(shown["updated"], "2026-11-29T10:41:07Z", "{shown}");
}

/// With the store in a subfolder of a repository (`<repo>/pkg`), import
/// and export use the Claude Code folder keyed by the git root, as Claude
/// Code keys it, not by the store's folder.
#[test]
fn a_store_in_a_subfolder_uses_the_git_roots_claude_code_folder() {
    let env = Env::bare();
    env.git(&["init", "-q"]);
    std::fs::create_dir_all(env.path("pkg")).expect("pkg");
    let in_pkg = |args: &[&str]| {
        let out = env
            .cmd(args)
            .current_dir(env.path("pkg"))
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    in_pkg(&["init"]);
    let key = |p: &Path| -> String {
        std::fs::canonicalize(p)
            .expect("canonical")
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    };
    let folder = env
        .dir
        .path()
        .join(format!("home/.claude/projects/{}/memory", key(&env.root())));
    copy_of(
        &env,
        "claude-code/handmade",
        folder
            .strip_prefix(env.dir.path())
            .expect("in the test dir")
            .to_str()
            .expect("utf-8"),
    );
    let out = in_pkg(&["import", "claude-code"]);
    assert!(out.contains(&folder.display().to_string()), "{out}");
    assert!(
        out.ends_with(": 5 added, 0 unchanged, 0 proposed, 0 refused, 0 invalid\n"),
        "{out}"
    );
    in_pkg(&[
        "remember",
        "project/deploy-day",
        "-d",
        "Deploys go out on weekdays only",
        "-s",
        "stated by the user",
    ]);
    let out = in_pkg(&["export", "claude-code"]);
    assert!(out.contains(&folder.display().to_string()), "{out}");
    assert!(folder.join("project_deploy_day.md").is_file());
    let wrong = env
        .dir
        .path()
        .join(format!("home/.claude/projects/{}", key(&env.path("pkg"))));
    assert!(!wrong.exists(), "nothing keyed by the store's folder");
}

/// The export's message names the limit that cut the index: with long
/// lines the 25,000 bytes are reached before the 200 lines.
#[test]
fn the_export_names_the_limit_that_cut_the_index() {
    let env = Env::new();
    for i in 0..180 {
        env.write(
            &format!("memory/project/fact-{i:03}.md"),
            format!(
                "---\nname: fact-{i:03}\ndescription: Fact {i} {}\ntype: project\nsource: stated by the user\n---\n\nBody.\n",
                "about the payments service and its many dependencies ".repeat(3)
            ),
        );
    }
    env.ok(&["record"]);
    let out_dir = env.dir.path().join("cc");
    let out = out_dir.to_str().expect("utf-8");
    let dry = env.ok(&["export", "claude-code", out, "--dry-run"]);
    assert!(
        dry.contains("memories left out: Claude Code loads the first 25,000 bytes)"),
        "{dry}"
    );
    let e = json(&env, &["export", "claude-code", out]);
    assert_eq!(e["cut_by"], "bytes", "{e}");
    let index = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    assert!(
        index.len() <= 25_000 && index.lines().count() < 200,
        "{}",
        index.len()
    );
}

/// An empty store exports a one-line index, not an empty file.
#[test]
fn an_empty_store_exports_a_one_line_index() {
    let env = Env::new();
    let out_dir = env.dir.path().join("cc");
    env.ok(&["export", "claude-code", out_dir.to_str().expect("utf-8")]);
    let index = std::fs::read_to_string(out_dir.join("MEMORY.md")).expect("index");
    assert_eq!(
        index,
        "- No memories yet: memoir exports its memories here\n"
    );
}

/// A topic file Claude Code changed after memoir's version is not written
/// over: export keeps it (and its index line) and says to import it.
#[test]
fn export_never_writes_over_what_claude_code_changed_since() {
    let env = Env::new();
    let cc = copy_of(&env, "claude-code/handmade", "cc");
    let ccs = cc.to_str().expect("utf-8");
    env.ok(&["import", "claude-code", ccs]);
    let freeze = cc.join("project_release_freeze.md");
    let edited = std::fs::read_to_string(&freeze)
        .expect("read")
        .replace("December 18", "December 20")
        .replace("2026-11-22T14:00:00Z", "2026-11-28T16:30:00Z");
    std::fs::write(&freeze, &edited).expect("write");
    let before = files_under(&cc);
    let out = env.ok(&["export", "claude-code", ccs]);
    assert!(
        out.contains(
            "keep project_release_freeze.md: changed in Claude Code after memoir's version"
        ),
        "{out}"
    );
    assert!(
        out.ends_with(": 0 written, 0 removed, 4 unchanged, 1 kept\n"),
        "{out}"
    );
    assert_eq!(files_under(&cc), before, "Claude Code's edit is kept");
    // The import brings it in, as a change for a human to decide.
    let (code, out, _) = env.run(&["import", "claude-code", ccs]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("proposed project/release-freeze"), "{out}");
}

/// A MEMORY.md or topic file the export cannot read (not UTF-8, over
/// 4 MiB) is someone's text: export refuses, exit 1 naming it, and
/// writes nothing rather than replace it with its own.
#[test]
fn export_never_replaces_a_file_it_cannot_read() {
    let env = Env::new();
    env.remember("project/db", "The database is Postgres 16", &[]);
    let dir = env.dir.path().join("claude-memory");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let d = dir.to_str().expect("utf-8");
    let big = {
        let mut b = b"- hand-written\n".to_vec();
        b.resize(5 << 20, b'x');
        b
    };
    for (name, bytes) in [
        ("MEMORY.md", b"- caf\xe9, hand-written\n".to_vec()),
        ("MEMORY.md", big.clone()),
        ("project_db.md", b"---\nname: db\n---\ncaf\xe9\n".to_vec()),
    ] {
        for f in std::fs::read_dir(&dir).expect("dir") {
            std::fs::remove_file(f.expect("entry").path()).expect("rm");
        }
        std::fs::write(dir.join(name), &bytes).expect("write");
        let err = env.fails(&["export", "claude-code", d], 1);
        assert!(err.contains(name), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            std::fs::read(dir.join(name)).expect("read"),
            bytes,
            "{name} kept"
        );
        let files = std::fs::read_dir(&dir).expect("dir").count();
        assert_eq!(files, 1, "nothing else written beside {name}");
    }
}

/// An OpenClaw section's heading too long for a source (400 characters)
/// is still imported: its key is the clauses that fit, its source the
/// heading cut at a word and marked `…`.
#[test]
fn openclaw_import_takes_a_heading_longer_than_a_source() {
    let env = Env::new();
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    let heading = format!(
        "Deploy rules, {}",
        "and one more careful condition ".repeat(16)
    );
    std::fs::write(
        ws.join("MEMORY.md"),
        format!("# MEMORY\n\n## {heading}\n- Deploys go out on Tuesdays only\n"),
    )
    .expect("MEMORY.md");
    let (code, out, err) = env.run(&["--json", "import", "openclaw", ws.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(r#""outcome": "proposed""#), "{out}");
    env.ok(&["consolidate", "--accept-all", "--yes"]);
    let text = env.read("memory/project/deploy-rules.md");
    let source = text
        .lines()
        .find_map(|l| l.strip_prefix("source: "))
        .expect("a source");
    assert!(
        source.contains("MEMORY.md § Deploy rules, and one more"),
        "{source}"
    );
    assert!(source.trim_matches(['\'', '"']).ends_with('…'), "{source}");
}

/// Claude Code's MEMORY.md after export: a topic file whose name holds
/// parentheses keeps one line however often export runs (its link used
/// to end at the name's own `)`), and a secret in one of Claude Code's
/// own descriptions is not copied into the index every session loads.
#[test]
fn export_keeps_odd_names_to_one_line_and_copies_no_secret_into_the_index() {
    let env = Env::new();
    let dir = env.dir.path().join("cc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let d = dir.to_str().expect("utf-8");
    let topic = |desc: &str| {
        format!("---\nname: N\ndescription: {desc}\nmetadata:\n  type: project\n---\n\nbody\n")
    };
    std::fs::write(dir.join("paren(x).md"), topic("a note about parens")).expect("write");
    std::fs::write(dir.join("odd).md"), topic("an unpaired one")).expect("write");
    let token = ["ghp_", "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"].concat();
    std::fs::write(
        dir.join("project_tok.md"),
        topic(&format!("deploy token {token}")),
    )
    .expect("write");
    let _ = env.run(&["import", "claude-code", d]);
    for _ in 0..3 {
        env.ok(&["export", "claude-code", d]);
    }
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    assert_eq!(index.matches("paren(x).md").count(), 1, "{index}");
    assert_eq!(index.matches("odd).md").count(), 1, "{index}");
    assert!(!index.contains(&token), "{index}");
    let again = env.ok(&["export", "claude-code", d]);
    assert!(!again.contains("write MEMORY.md"), "{again}");
}

/// A Claude Code memory forgotten in memoir stays forgotten: the next
/// export keeps Claude Code's own file, and importing it again, unchanged
/// since the forget, adds nothing; changed in Claude Code after, it is
/// imported again.
#[test]
fn a_memory_forgotten_after_import_is_not_brought_back_by_the_next_import() {
    let env = Env::new();
    let dir = env.dir.path().join("cc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let d = dir.to_str().expect("utf-8");
    let file = dir.join("reference_grafana.md");
    std::fs::write(
        &file,
        "---\nname: G\ndescription: dashboards live in Grafana\nmetadata:\n  type: reference\n---\n\nx\n",
    )
    .expect("write");
    env.ok(&["import", "claude-code", d]);
    let key = "project/reference-grafana";
    assert!(env.ok(&["list", "--keys"]).contains(key));
    env.ok(&["export", "claude-code", d]);
    env.ok(&["forget", key, "-r", "retired"]);
    env.ok(&["export", "claude-code", d]);
    let out = env.ok(&["--json", "import", "claude-code", d]);
    assert!(!out.contains(r#""outcome": "added""#), "{out}");
    assert!(!env.ok(&["list", "--keys"]).contains(key));
    // Changed in Claude Code after the forget: a memory again.
    std::fs::write(
        &file,
        "---\nname: G\ndescription: dashboards moved to Grafana Cloud\nmetadata:\n  type: reference\n  modified: 2026-12-30T00:00:00Z\n---\n\nx\n",
    )
    .expect("write");
    let out = env
        .cmd(&["import", "claude-code", d])
        .env("MEMOIR_NOW", "2026-12-31T00:00:00Z")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("added"), "{text}");
}

/// A Claude Code user memory goes to the person's own store on import;
/// export writes it back from there: its file is kept (not removed as a
/// memory gone), and a change made in memoir reaches it, so the next
/// import proposes nothing.
#[test]
fn export_writes_the_personal_stores_memories_back() {
    let env = Env::new();
    let dir = env.dir.path().join("cc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let d = dir.to_str().expect("utf-8");
    std::fs::write(
        dir.join("user_role.md"),
        "---\nname: role\ndescription: Ada is the team's SRE\nmetadata:\n  type: user\n---\n\nbody\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("project_k6.md"),
        "---\nname: k6\ndescription: load tests use k6\nmetadata:\n  type: user\n  memoirKey: user/via-key\n---\n\nbody\n",
    )
    .expect("write");
    env.ok(&["import", "claude-code", d]);
    let out = env.ok(&["export", "claude-code", d]);
    assert!(!out.lines().any(|l| l.starts_with("remove")), "{out}");
    assert!(dir.join("project_k6.md").exists());
    env.ok(&[
        "remember",
        "user/role",
        "-d",
        "Ada leads the SRE team",
        "-s",
        "said so",
        "--replace",
    ]);
    env.ok(&["export", "claude-code", d]);
    let file = std::fs::read_to_string(dir.join("user_role.md")).expect("read");
    assert!(file.contains("Ada leads the SRE team"), "{file}");
    let (code, out, err) = env.run(&["import", "claude-code", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.lines().any(|l| l.starts_with("proposed")), "{out}");
}

/// Claude Code's MEMORY.md saved with CRLF line ends keeps them: the lines
/// export appends are CRLF too, and a second export changes nothing.
#[test]
fn export_keeps_a_crlf_index_crlf() {
    let env = Env::new();
    env.remember("project/db", "The database is Postgres 16", &[]);
    let dir = env.dir.path().join("cc");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let d = dir.to_str().expect("utf-8");
    std::fs::write(dir.join("MEMORY.md"), "- hand-written line\r\n").expect("write");
    env.ok(&["export", "claude-code", d]);
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).expect("index");
    assert!(index.starts_with("- hand-written line\r\n"), "{index:?}");
    assert!(
        !index.replace("\r\n", "").contains('\n'),
        "an LF line: {index:?}"
    );
    let again = env.ok(&["export", "claude-code", d]);
    assert!(!again.contains("write MEMORY.md"), "{again}");
}
