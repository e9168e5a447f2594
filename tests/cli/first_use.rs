//! What a careful new user and a harness author meet first (issue 18):
//! JSON documents and errors a script can act on, an honest -q, usage
//! errors for typos, readable history, help with examples, a doctor.

use crate::util::Env;
use serde_json::Value;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// With --json, a failure is one JSON object on stdout naming the code,
/// the message and the exit; usage errors from the parser too.
#[test]
fn errors_are_json_objects_with_json() {
    let env = Env::new();
    let (code, out, _) = env.run(&["--json", "show", "project/nope"]);
    assert_eq!(code, 1);
    let e = json(&out);
    assert_eq!(
        (
            e["format"].clone(),
            e["error"]["code"].clone(),
            e["error"]["exit"].clone()
        ),
        (1.into(), "error".into(), 1.into()),
        "{e}"
    );
    assert!(e["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("no memory project/nope"));

    let secret = concat!("ghp_", "0123456789abcdefghijABCDEFGHIJ012345");
    let (code, out, _) = env.run(&[
        "--json",
        "remember",
        "project/t",
        "-d",
        &format!("token {secret}"),
        "-s",
        "s",
    ]);
    assert_eq!(code, 3);
    let e = json(&out);
    assert_eq!(e["error"]["code"], "refused");
    assert_eq!(e["error"]["rule"], "secret:github-pat");
    assert_eq!(e["error"]["path"], "memory/project/t.md");
    assert!(!out.contains(secret));

    let (code, out, err) = env.run(&["--json", "recall"]);
    assert_eq!(code, 2);
    assert_eq!(json(&out)["error"]["code"], "usage", "{out}");
    // The whole reason, on one line, in JSON and on stderr alike.
    assert_eq!(
        json(&out)["error"]["message"],
        "the following required arguments were not provided: <QUERY>...",
        "{out}"
    );
    assert!(
        err.starts_with("memoir: the following required arguments were not provided: <QUERY>...\n"),
        "{err}"
    );
}

/// Every document is an object with its format version first.
#[test]
fn every_json_document_has_a_format_version() {
    let env = Env::new();
    env.remember("project/db", "The database is Postgres 16", &[]);
    env.ok(&["note", "a note"]);
    for args in [
        &["list"][..],
        &["show", "project/db"],
        &["recall", "database"],
        &["context", "database"],
        &["context"],
        &["status"],
        &["check"],
        &["conflicts"],
        &["history", "project/db"],
        &["versions"],
        &["seen"],
        &["record"],
        &["reindex"],
        &["rebuild", "--check"],
        &["consolidate", "--dry-run"],
        &["diff"],
        &["doctor"],
    ] {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let (_, out, err) = env.run(&all);
        let v = json(&out);
        assert_eq!(v["format"], 1, "{args:?}: {out}{err}");
        assert!(
            out.trim_start().starts_with("{\n  \"format\": 1"),
            "{args:?}: format first: {out}"
        );
    }
}

/// -q drops chatter, never the data asked for nor why a command exits 4.
#[test]
fn quiet_never_hides_data_or_the_reason_for_a_failure() {
    let env = Env::new();
    assert_eq!(
        env.ok(&[
            "-q",
            "remember",
            "project/db",
            "-d",
            "Postgres 16",
            "-s",
            "ops"
        ]),
        ""
    );
    assert!(env
        .ok(&["-q", "show", "project/db"])
        .contains("description: Postgres 16"));
    assert!(env
        .ok(&["-q", "context", "postgres"])
        .contains("project/db"));
    assert!(env.ok(&["-q", "list"]).contains("project/db"));
    let (code, out, _) = env.run(&[
        "-q",
        "remember",
        "project/db",
        "-d",
        "MySQL 8",
        "-s",
        "a guess",
    ]);
    assert_eq!(code, 4);
    assert!(
        out.contains("+description: MySQL 8") && out.contains("kept as proposal"),
        "{out}"
    );
}

/// A typo in a filter or a bad MEMOIR_NOW is a usage error everywhere, not an empty answer.
#[test]
fn typos_are_usage_errors_everywhere() {
    let env = Env::new();
    for args in [
        &["list", "--scope", "nope"][..],
        &["list", "--type", "bogus"],
        &["recall", "x", "--scope", "nope"],
    ] {
        let err = env.fails(args, 2);
        assert!(
            err.contains("--scope: no scope `nope`")
                || err.contains("--type: unknown type `bogus`"),
            "{err}"
        );
    }
    for args in [&["list"][..], &["check"], &["status"], &["versions"]] {
        let out = env
            .cmd(args)
            .env("MEMOIR_NOW", "yesterday")
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// Counts in words are right for one; CJK keys align by display width;
/// status names what each pending proposal is for.
#[test]
fn wording_and_alignment() {
    let env = Env::new();
    env.remember("project/偏好设置", "中文的偏好", &[]);
    env.remember("project/ab", "plain", &[]);
    let list = env.ok(&["list"]);
    let columns: Vec<usize> = list
        .lines()
        .map(|l| unicode_width_of(&l[..l.find("project ").expect("type column")]))
        .collect();
    assert_eq!(columns[0], columns[1], "{list}");
    env.ok(&[
        "remember",
        "project/ab",
        "-d",
        "plain",
        "-s",
        "s",
        "--propose",
        "--tags",
        "x",
    ]);
    let status = env.ok(&["status"]);
    assert!(
        status.contains("2 memories: ") && status.contains("  project/ab"),
        "{status}"
    );
    env.ok(&["forget", "project/偏好设置", "--reason", "r"]);
    assert!(env.ok(&["status"]).contains("1 memory: "));
}

/// The display width of a prefix of a `list` line (CJK is two cells).
fn unicode_width_of(s: &str) -> usize {
    s.chars().map(|c| if c > '\u{2e80}' { 2 } else { 1 }).sum()
}

/// Help shows examples and keeps the global options apart; the merge
/// driver's help names %P as the README uses it.
#[test]
fn help_has_examples_and_global_options_apart() {
    let env = Env::bare();
    let help = env.ok(&["recall", "--help"]);
    assert!(help.contains("Examples:\n  memoir recall"), "{help}");
    assert!(help.contains("Global options:"), "{help}");
    assert!(help.find("--limit") < help.find("Global options:"));
    assert!(env.ok(&["merge-driver", "--help"]).contains("%O %A %B %P"));
}

/// versions shows what each version did, direct writes and rollbacks too;
/// history shows what each version said.
#[test]
fn versions_and_history_say_what_each_did() {
    let env = Env::new();
    env.remember("project/a", "alpha fact", &[]);
    env.remember("project/b", "beta fact", &[]);
    env.ok(&["consolidate", "--yes"]);
    env.ok(&[
        "remember",
        "project/a",
        "-d",
        "alpha fact, changed",
        "-s",
        "s",
        "--replace",
    ]);
    env.ok(&["consolidate", "--yes"]);
    env.ok(&["rollback", "HEAD~1"]);
    let v = json(&env.ok(&["--json", "versions"]));
    let versions = v["versions"].as_array().expect("versions");
    assert_eq!(versions.len(), 3, "{v}");
    assert_eq!(versions[0]["kind"], "rollback");
    assert_eq!(versions[0]["counts"]["restored"], 1);
    assert_eq!(versions[1]["counts"]["changed"], 1, "{v}");
    assert_eq!(
        versions[2]["counts"]["added"], 2,
        "direct writes are counted: {v}"
    );
    assert!(env.ok(&["versions"]).contains("rollback to "));
    let history = env.ok(&["history", "project/a"]);
    assert!(
        history.contains("    description: alpha fact\n")
            && history.contains("    description: alpha fact, changed\n"),
        "{history}"
    );
}

/// init over a team's own MEMORY.md keeps its text and leaves check clean;
/// it says what to do next; doctor and status name a clone without drivers.
#[test]
fn init_keeps_a_teams_memory_md_and_doctor_names_what_is_missing() {
    let env = Env::bare();
    env.git(&["init", "-q"]);
    env.write("MEMORY.md", "# Team notes\n\nOur conventions live here.\n");
    let out = env.ok(&["init"]);
    assert!(out.contains("Next:\n  memoir hooks install"), "{out}");
    assert!(env
        .read("MEMORY.md")
        .starts_with("# Team notes\n\nOur conventions live here.\n"));
    env.ok(&["check"]);
    let (code, out, _) = env.run(&["doctor"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FIX  merge drivers: merge.memoir: not configured")
            && out.contains("run: memoir hooks install"),
        "{out}"
    );
    assert!(env
        .ok(&["status"])
        .contains("this clone has no memoir merge drivers"));
    env.ok(&["hooks", "install"]);
    let doctor = json(&env.run(&["--json", "doctor"]).1);
    let drivers = doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["what"] == "merge drivers")
        .cloned()
        .expect("drivers");
    assert_eq!(drivers["ok"], true, "{doctor}");
    assert!(!env.ok(&["status"]).contains("no memoir merge drivers"));
}

/// The pull-request view shows what waits for a human; its markdown keeps
/// an author's email, never alters a body's code fence, and fits a
/// GitHub comment with whole entries and a count of the rest.
#[test]
fn the_pull_request_view_is_reviewable() {
    let env = Env::new();
    env.ok(&["consolidate", "--yes"]);
    env.ok(&[
        "remember",
        "project/build",
        "-d",
        "How to build",
        "-s",
        "the README",
        "--body",
        "Run:\n```sh\nmake\n```\n",
    ]);
    env.ok(&[
        "remember",
        "project/db",
        "-d",
        "Postgres 16",
        "-s",
        "ops",
        "--propose",
    ]);
    let md = env.ok(&["diff", "HEAD", "--format", "markdown"]);
    assert!(md.contains("(by Ada &lt;ada@example.com&gt;)"), "{md}");
    assert!(
        md.contains("+```sh\n+make\n+```\n") && md.contains("````diff\n"),
        "the body's fence kept, a longer one around it: {md}"
    );
    assert!(!md.contains('ʼ'));
    assert!(
        md.contains("<b>waits for a human</b> <code>project/db</code>"),
        "{md}"
    );
    let text = env.ok(&["diff", "HEAD"]);
    assert!(
        text.contains("1 proposal pending") && text.contains("proposed project/db"),
        "{text}"
    );

    for i in 0..40 {
        env.remember(
            &format!("project/fact-{i:03}"),
            &format!("Fact number {i} with a longer description to take room"),
            &[],
        );
    }
    let md = env.ok(&[
        "diff",
        "HEAD",
        "--format",
        "markdown",
        "--max-bytes",
        "8000",
    ]);
    assert!(md.len() <= 8_000, "{}", md.len());
    assert!(
        md.contains(
            "more entries not shown (this comment holds at most 8000 bytes): run `memoir diff "
        ),
        "{}",
        &md[md.len() - 300..]
    );
    assert!(md.trim_end().ends_with("to see them all._"));
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count(),
        "whole entries only"
    );
}

/// Completions and the man page come from the CLI's own definition: the
/// bash script is valid bash and knows the subcommands; the man page is roff.
#[test]
fn completions_and_man_page_are_generated() {
    let env = Env::bare();
    let bash = env.ok(&["completions", "bash"]);
    let script = env.dir.path().join("memoir.bash");
    std::fs::write(&script, &bash).expect("write");
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .expect("bash");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(bash.contains("remember") && bash.contains("--min-score"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        assert!(
            env.ok(&["completions", shell]).contains("recall"),
            "{shell}"
        );
    }
    env.fails(&["completions", "tcsh"], 2);
    let man = env.ok(&["man"]);
    assert!(
        man.contains(".TH memoir 1") && man.contains("remember"),
        "{}",
        &man[..200]
    );
}

/// The same remember twice changes nothing, whatever the body's last
/// character (a body without a final newline was taken for a change and
/// kept as a proposal, exit 4).
#[test]
fn the_same_remember_twice_is_unchanged() {
    let env = Env::new();
    let args = [
        "remember",
        "project/x",
        "-d",
        "a fact",
        "-s",
        "s",
        "--body",
        "no final newline",
    ];
    env.ok(&args);
    assert_eq!(
        env.ok(&args),
        "project/x is already remembered as given; nothing changed\n"
    );
    assert_eq!(env.pending_proposals(), 0);
}

/// Errors name the memory key and the path a user typed, however long;
/// an argument that could be a secret (a token in a key, a key file) is
/// still never quoted back, in text or JSON.
#[test]
fn errors_name_long_keys_and_paths_but_not_tokens() {
    let env = Env::new();
    env.ok(&["init"]);
    let err = env.fails(&["show", "project/production-deploy-checklist"], 1);
    assert!(
        err.contains("no memory project/production-deploy-checklist"),
        "{err}"
    );
    let folder = env.path("no/such/openclaw/workspace-folder");
    let folder = folder.to_string_lossy();
    let err = env.fails(&["import", "openclaw", &folder], 1);
    assert!(err.contains(folder.as_ref()), "{err}");
    let token = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    let key = format!("project/{token}");
    for args in [
        &["show", key.as_str()][..],
        &["--json", "show", key.as_str()],
    ] {
        let (code, out, err) = env.run(args);
        assert_eq!(code, 1);
        let tail = "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8";
        assert!(
            !err.to_lowercase().contains(tail) && !out.to_lowercase().contains(tail),
            "{args:?} quoted it back: {err}{out}"
        );
    }
}

/// A memory in the `user` scope is about the person: its type is `user`
/// unless said otherwise; elsewhere the default stays `project`.
#[test]
fn a_user_memory_is_of_type_user_by_default() {
    let env = Env::new();
    env.ok(&["init"]);
    env.remember("user/editor", "Prefers vim keybindings", &[]);
    env.remember("project/db", "Postgres 16", &[]);
    env.remember("user/tone", "Wants terse answers", &["--type", "feedback"]);
    let type_of = |key: &str| {
        let shown: serde_json::Value =
            serde_json::from_str(&env.ok(&["--json", "show", key])).expect("json");
        shown["type"].as_str().expect("type").to_string()
    };
    assert_eq!(type_of("user/editor"), "user");
    assert_eq!(type_of("project/db"), "project");
    assert_eq!(type_of("user/tone"), "feedback");
}

#[test]
fn a_value_that_starts_with_a_hyphen_is_text_a_markdown_bullet() {
    let env = Env::new();
    env.ok(&["note", "- fixed the flaky CI test"]);
    assert!(env.log_text().contains("- fixed the flaky CI test"));
    env.ok(&[
        "remember",
        "project/deploy",
        "-d",
        "- deploys need a green main",
        "-s",
        "- the runbook",
        "--body",
        "- run make deploy\n- then watch the dashboard",
    ]);
    let file = env.read("memory/project/deploy.md");
    assert!(
        file.contains("description: '- deploys need a green main'")
            || file.contains("description: \"- deploys need a green main\""),
        "{file}"
    );
    assert!(file.contains("- run make deploy\n- then watch"), "{file}");
    env.ok(&["forget", "project/deploy", "--reason", "-moved to the wiki"]);
    assert!(env.log_text().contains("-moved to the wiki"));
    // Flags still read as flags, before the text and after it.
    env.ok(&["note", "-q", "a quiet note"]);
    // A flag after the text would be noted, not obeyed: refused, nothing noted.
    let err = env.fails(&["note", "- then a flag", "--json"], 2);
    assert!(
        err.contains("--json") && err.contains("before the text"),
        "{err}"
    );
    assert!(!env.log_text().contains("then a flag"));
    // A secret in such a value is refused, never echoed.
    let token = ["ghp_", "Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9"].concat();
    let (code, out, err) = env.run(&["note", &format!("- the key {token}")]);
    assert_eq!(code, 3, "{err}");
    assert!(!out.contains(&token) && !err.contains(&token), "{err}");
    let (code, out, err) = env.run(&[
        "remember",
        "project/k",
        "-d",
        "k",
        "-s",
        "s",
        "--body",
        &format!("-{token}"),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(!out.contains(&token) && !err.contains(&token), "{err}");
}

#[test]
fn init_over_another_tools_memory_folder_says_what_it_found_and_status_agrees_with_check() {
    let env = Env::bare();
    env.git(&["init", "-q"]);
    std::fs::create_dir_all(env.path("memory/notes")).expect("notes");
    std::fs::write(env.path("memory/2026-11-30.md"), "- we use pnpm\n").expect("daily note");
    std::fs::write(env.path("memory/notes/a.md"), "hello\n").expect("a note");
    let out = env.ok(&["init"]);
    assert!(
        out.contains("memory/2026-11-30.md (an OpenClaw daily note)"),
        "{out}"
    );
    assert!(out.contains("memory/notes/ ("), "{out}");
    assert!(out.contains("`memoir import openclaw openclaw`"), "{out}");
    assert!(out.contains("`memoir init <dir>`"), "{out}");
    let j = json(&env.ok(&["--json", "init"]));
    assert_eq!(j["foreign"][0]["path"], "memory/2026-11-30.md");
    assert_eq!(j["foreign"][0]["openclaw"], true);
    // check fails on the unknown folder and warns of the daily note;
    // status lists both and does not say all is well.
    let err = env.fails(&["check"], 1);
    assert!(err.contains("memory/notes/a.md: error[scope]"), "{err}");
    assert!(
        err.contains("memory/2026-11-30.md: warning[foreign]: an OpenClaw daily note"),
        "{err}"
    );
    let status = env.ok(&["status"]);
    assert!(!status.contains("Nothing needs attention"), "{status}");
    assert!(status.contains("memory/notes/"), "{status}");
    assert!(status.contains("memory/2026-11-30.md"), "{status}");
    let j = json(&env.ok(&["--json", "status"]));
    assert_eq!(j["foreign"].as_array().map(Vec::len), Some(2), "{j}");
    // The steps as said: the daily note moved and imported, the other
    // tool's folder moved out; then all three are quiet.
    let moved = std::process::Command::new("sh")
        .args([
            "-c",
            "mkdir -p openclaw/memory && mv memory/????-??-??*.md openclaw/memory/",
        ])
        .current_dir(env.root())
        .status()
        .expect("sh");
    assert!(moved.success());
    let out = env.ok(&["import", "openclaw", "openclaw"]);
    assert!(out.contains("added note (memory/2026-11-30.md:1)"), "{out}");
    assert!(out.contains(" 0 proposed"), "{out}");
    std::fs::rename(env.path("memory/notes"), env.path("notes")).expect("mv");
    env.ok(&["check"]);
    assert!(env.ok(&["status"]).contains("Nothing needs attention"));
    // The note is the entry itself; where it came from is in its event.
    assert!(env.ok(&["recall", "pnpm"]).contains("we use pnpm"));
}

/// `import -q` hides the summary and the items that went well, never an
/// item that waits or failed.
#[test]
fn quiet_import_hides_its_summary_but_not_what_waits() {
    let env = Env::new();
    let ws = env.dir.path().join("claw");
    std::fs::create_dir_all(ws.join("memory")).expect("workspace");
    std::fs::write(ws.join("memory/2026-11-28.md"), "- the build uses pnpm\n").expect("note");
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n## Deploys\nDeploy with make release.\n",
    )
    .expect("MEMORY.md");
    let dir = ws.to_str().expect("utf-8");
    let (code, out, err) = env.run(&["-q", "import", "openclaw", dir]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("proposed project/deploys"), "{out}");
    assert!(!out.contains("imported "), "the summary is chatter: {out}");
    assert!(!out.contains("added note"), "{out}");
    // Without -q both are there.
    let ws2 = env.dir.path().join("claw2");
    std::fs::create_dir_all(ws2.join("memory")).expect("workspace");
    std::fs::write(ws2.join("memory/2026-11-27.md"), "- lint with clippy\n").expect("note");
    let out = env.ok(&["import", "openclaw", ws2.to_str().expect("utf-8")]);
    assert!(
        out.contains("added note") && out.contains("imported 1 item"),
        "{out}"
    );
}

/// `cmd` under `script`, so that its stdout and stderr are a terminal;
/// what the terminal showed (the command must succeed).
fn on_a_terminal(env: &Env, args: &str) -> String {
    let (ok, shown) = run_on_a_terminal(env, args);
    assert!(ok, "{shown:?}");
    shown
}

/// [`on_a_terminal`], whether the command succeeds or not.
fn run_on_a_terminal(env: &Env, args: &str) -> (bool, String) {
    let memoir = assert_cmd::cargo::cargo_bin("memoir");
    let mut cmd = assert_cmd::Command::new("script");
    env.pin(&mut cmd);
    // TERM for the terminal script makes; the command line for its shell.
    cmd.env("TERM", "dumb")
        .args(["-qec", &format!("{} {args}", memoir.display()), "/dev/null"]);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("script (util-linux) is needed for this test: {e}"));
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success(), shown)
}

#[test]
fn building_the_index_of_a_large_store_says_how_far_it_is_on_a_terminal_only() {
    let env = Env::new();
    for i in 0..1200 {
        env.write(
            &format!("memory/project/fact-{i}.md"),
            format!(
                "---\nname: fact-{i}\ndescription: Fact number {i} about the deploys\ntype: project\n---\n"
            ),
        );
    }
    let shown = on_a_terminal(&env, "reindex");
    assert!(
        shown.contains("indexing memory files: ") && shown.contains("/1200"),
        "{shown:?}"
    );
    // The last count is drawn, then erased before anything else is said.
    assert!(shown.contains("1200/1200\r\x1b[2K"), "{shown:?}");
    // So does a rebuild that writes every view again.
    env.ok(&["record"]);
    std::fs::remove_dir_all(env.path("memory/project")).expect("rm");
    let shown = on_a_terminal(&env, "rebuild");
    assert!(
        shown.contains("writing memory files: 1200/1200\r\x1b[2K"),
        "{shown:?}"
    );
    // And check, which reads every file.
    let shown = on_a_terminal(&env, "check");
    assert!(shown.contains("reading memory files: "), "{shown:?}");
    // Never in a pipe, with --json or with -q.
    let index = walkdir::WalkDir::new(env.root().join(".git/memoir"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.file_name() == "index.bin")
        .expect("the persistent index")
        .into_path();
    for quiet in [&["--json", "reindex"][..], &["-q", "reindex"], &["reindex"]] {
        std::fs::remove_file(&index).expect("remove the index");
        let args = quiet.join(" ");
        if quiet.len() == 2 {
            let shown = on_a_terminal(&env, &args);
            assert!(!shown.contains("indexing"), "{args}: {shown:?}");
        } else {
            let out = env.cmd(quiet).output().expect("run");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("indexing"), "in a pipe: {err}");
        }
    }
}

#[test]
fn a_large_consolidation_and_years_of_logs_say_how_far_they_are_on_a_terminal_only() {
    let env = Env::new();
    // 520 curated sections, each in words of its own (no near-duplicates),
    // held for review until accepted.
    let words = [
        "ledger",
        "kafka",
        "invoice",
        "tenant",
        "webhook",
        "cron",
        "backoff",
        "redis",
        "schema",
        "terraform",
        "grafana",
        "quota",
        "refund",
        "locale",
        "sitemap",
        "oauth",
        "pgbouncer",
        "canary",
        "shard",
        "vault",
        "sentry",
        "bucket",
        "cursor",
        "digest",
        "ingress",
        "mutex",
    ];
    let mut seed = 7u64;
    let mut word = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        words[(seed >> 33) as usize % words.len()]
    };
    let mut curated = String::from("# MEMORY\n");
    for i in 0..520 {
        let text: Vec<&str> = (0..8).map(|_| word()).collect();
        curated += &format!("\n## Topic {i}\n- {i} {}\n", text.join(" "));
    }
    let ws = env.dir.path().join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    std::fs::write(ws.join("MEMORY.md"), curated).expect("MEMORY.md");
    env.ok(&["-q", "import", "openclaw", ws.to_str().expect("utf-8")]);
    let (_, shown) = run_on_a_terminal(&env, "consolidate --accept-all --yes");
    assert!(
        shown.contains("planning proposals: ") && shown.contains("committing files: "),
        "{shown:?}"
    );
    assert!(
        env.path("memory/project/topic-519.md").exists(),
        "{shown:?}"
    );
    // Years of logs: a thousand log files are read with a count.
    let written = walkdir::WalkDir::new(env.path("memory/log"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.file_type().is_file() && e.file_name() != ".gitkeep")
        .expect("a log")
        .into_path();
    // Its first entry, a log of its own on each of a thousand days.
    let log = std::fs::read_to_string(&written).expect("log");
    let end = log.find("<!-- memoir:end").expect("an entry");
    let end = end + log[end..].find('\n').expect("a line");
    let (log, name) = (&log[..=end], written.file_name().expect("name").to_owned());
    for day in 0..1000 {
        let (year, month, day) = (2023 + day / 336, day / 28 % 12 + 1, day % 28 + 1);
        let folder = env.path(&format!("memory/log/{year}-{month:02}-{day:02}"));
        std::fs::create_dir_all(&folder).expect("day");
        std::fs::write(folder.join(&name), log).expect("log copy");
    }
    let (_, shown) = run_on_a_terminal(&env, "rebuild --check");
    assert!(shown.contains("reading logs: "), "{shown:?}");
    // Never with -q or --json.
    for args in ["-q rebuild --check", "--json rebuild --check"] {
        let (_, shown) = run_on_a_terminal(&env, args);
        assert!(!shown.contains("reading logs"), "{args}: {shown:?}");
    }
}

#[test]
fn a_large_import_says_how_far_it_is_on_a_terminal_only() {
    let env = Env::new();
    let dir = env.dir.path().join("claude-memory");
    std::fs::create_dir_all(&dir).expect("folder");
    for i in 0..120 {
        std::fs::write(
            dir.join(format!("topic-{i}.md")),
            format!(
                "---\nname: topic {i}\ndescription: Topic number {i} about the deploys\ntype: project\n---\nbody {i}\n"
            ),
        )
        .expect("topic file");
    }
    let dir = dir.to_str().expect("utf-8");
    let shown = on_a_terminal(&env, &format!("import claude-code {dir} --dry-run"));
    assert!(
        shown.contains("importing memories: 120/120\r\x1b[2K"),
        "{shown:?}"
    );
    // Never in a pipe.
    let (code, out, err) = env.run(&["import", "claude-code", dir]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("importing memories") && !out.contains("importing"),
        "{err}"
    );
    // Stopped part-way (a hand edit of a memory it updates), the line is
    // erased before the error, which starts a line of its own.
    env.write(
        "memory/project/topic-110.md",
        env.read("memory/project/topic-110.md") + "edited by hand\n",
    );
    for entry in std::fs::read_dir(dir).expect("folder") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, text.replace("body", "new body")).expect("write");
    }
    let (ok, shown) = run_on_a_terminal(&env, &format!("import claude-code {dir}"));
    assert!(!ok, "{shown:?}");
    assert!(shown.contains("\r\x1b[2Kmemoir: "), "{shown:?}");
    assert!(shown.contains("topic-110.md"), "{shown:?}");
}
