//! Hostile input, as a buggy agent, a teammate's tool or a crash leaves it:
//! the store stays usable, every read finishes, nothing outside the store
//! is touched. Each test names what it holds (issue 14's findings).

use crate::util::{bobs_event, exists, Env};
use std::time::Duration;

/// Long enough for a debug build under load, far short of a hang.
const PROMPT: Duration = Duration::from_secs(20);

/// A store with one memory.
fn with_memory() -> Env {
    let env = Env::new();
    assert_eq!(env.remember("project/db", "Postgres 16", &[]).0, 0);
    env
}

/// A fake AWS key id, assembled so that this file holds none.
fn fake_aws() -> String {
    ["AKIA", "Z7QRSTUVWXYZ2345"].concat()
}

/// A note by Bob, another writer.
fn bob_note(text: &str) -> memoir::model::event::Event {
    let mut note = bobs_event(
        memoir::model::event::Op::Note,
        "project/x",
        vec![],
        text.into(),
    );
    note.key = None;
    note
}

/// A memory file's content: name, description, body.
fn memory_file(name: &str, description: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\ntype: project\nsource: bob\n---\n{body}"
    )
}

/// Bob's `remember` of a memory in the scope `evil`, which no store has.
fn evil_scope_entry() -> memoir::model::event::Event {
    let mut e = bobs_event(
        memoir::model::event::Op::Remember,
        "project/x",
        vec![],
        memory_file("x", "evil", ""),
    );
    e.key = Some(memoir::model::key::Key {
        scope: "evil".into(),
        slug: "x".into(),
    });
    e
}

#[test]
fn a_deleted_memory_md_is_found_named_and_rebuilt() {
    let env = with_memory();
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm");
    // Found by what cannot be derived: the logs.
    assert!(env.ok(&["list"]).contains("project/db"));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("MEMORY.md") && err.contains("missing") && err.contains("memoir"),
        "{err}"
    );
    env.ok(&["--store", ".", "rebuild"]);
    assert!(env.read("MEMORY.md").contains("[db](memory/project/db.md)"));
    env.ok(&["check"]);
    // From a subfolder too.
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm");
    let sub = env.path("memory/project");
    let out = env
        .cmd(&["reindex"])
        .current_dir(&sub)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.read("MEMORY.md").contains("[db]"));
}

/// This writer's log for the pinned day, after one note.
fn own_log(env: &Env) -> String {
    env.ok(&["note", "first"]);
    env.first_log()
}

#[test]
fn a_final_entry_whose_length_runs_past_the_end_is_closed_by_the_next_writer() {
    let env = with_memory();
    let log = own_log(&env);
    let text = env.read(&log);
    // The last entry claims a longer body than the file holds.
    let at = text.rfind("\"len\":").expect("len");
    let digits: String = text[at + 6..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let forged = format!(
        "{}\"len\":{}{}",
        &text[..at],
        digits.parse::<usize>().expect("n") + 500,
        &text[at + 6 + digits.len()..]
    );
    env.write(&log, forged);
    env.ok(&["note", "second"]);
    env.ok(&["note", "third"]);
    // The log still parses and both notes are read; the whole entry with a
    // forged length is no write a crash cut short, and check says so.
    let (code, stdout, _) = env.run(&["--json", "check"]);
    assert_eq!(code, 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert!(
        report["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .all(|p| p["severity"] == "warning" || p["rule"] == "log"),
        "{report}"
    );
    let hot = env.ok(&["context"]);
    assert!(hot.contains("second") && hot.contains("third"), "{hot}");
    env.ok(&["remember", "project/x", "-d", "still writable", "-s", "s"]);
}

#[test]
fn a_malformed_entry_in_a_teammates_log_is_quarantined_not_blocking() {
    let env = with_memory();
    let good = bobs_event(
        memoir::model::event::Op::Remember,
        "project/bob",
        vec![],
        "---\nname: bob\ndescription: Bob's memory\ntype: project\nsource: bob\n---\n".into(),
    );
    let bad = good
        .render()
        .replace("\"op\":\"remember\"", "\"op\":\"frobnicate\"");
    let later = bobs_event(
        memoir::model::event::Op::Remember,
        "project/bob2",
        vec![],
        "---\nname: bob2\ndescription: Bob's second\ntype: project\nsource: bob\n---\n".into(),
    );
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    env.write(log, format!("{bad}{}", later.render()));
    // Every command goes on, the entry after the bad one is read.
    env.ok(&["rebuild"]);
    assert!(env.ok(&["list"]).contains("project/bob2"));
    env.ok(&["status"]);
    env.ok(&["remember", "project/new", "-d", "a new memory", "-s", "s"]);
    env.ok(&["forget", "project/new", "--reason", "test"]);
    // consolidate does not commit it until someone decides (below).
    env.fails(&["consolidate"], 3);
    // check names the file and line, and fails (a pre-commit hook or CI
    // stops the entry) until someone decides ...
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains(&format!("{log}:2:")) && err.contains("malformed"),
        "{err}"
    );
    let (code, out, _) = env.run(&["--json", "check"]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(json.to_string().contains("accepted_entries"), "{json}");
    // ... to accept it, by the blob id of its bytes, which check names.
    let id = err
        .split("list ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("an id in the advice")
        .to_string();
    assert_eq!(id.len(), 40, "{err}");
    let bad_bytes = bad.to_string();
    env.write(
        "memory/config.yaml",
        format!("accepted_entries:\n  - {id}\n"),
    );
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("accepted in memory/config.yaml"), "{err}");
    env.ok(&["consolidate"]);
    // An accepted id names those bytes only: another bad entry fails again.
    let other = bad_bytes.replace("frobnicate", "frobnicate2");
    env.write(log, format!("{other}{}", later.render()));
    env.fails(&["check"], 1);
}

#[test]
fn a_forged_entry_for_an_unknown_scope_makes_no_folder() {
    let env = with_memory();
    let e = evil_scope_entry();
    env.write("memory/log/2026-11-29/bob-0badc0de.md", e.render());
    env.ok(&["rebuild"]);
    assert!(!exists(&env.path("memory/evil")));
    env.ok(&["list"]);
    let err = env.fails(&["check"], 1);
    assert!(err.contains("unknown scope `evil`"), "{err}");
}

#[cfg(unix)]
#[test]
fn special_files_in_the_logs_never_hang_and_are_reported() {
    let env = with_memory();
    let fifo = env.path("memory/log/2026-11-29/fifo-00000000.md");
    std::fs::create_dir_all(fifo.parent().expect("parent")).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    for args in [
        &["list"][..],
        &["status"],
        &["recall", "postgres"],
        &["context"],
    ] {
        let out = env.cmd(args).timeout(PROMPT).output().expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
    // Nothing is written from the logs while one cannot be read.
    let err = env.fails(&["rebuild"], 1);
    assert!(err.contains("fifo-00000000.md"), "{err}");
    let out = env
        .cmd(&["context", "--from-hook"])
        .write_stdin(r#"{"prompt": "postgres", "cwd": "."}"#)
        .timeout(PROMPT)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = env.cmd(&["check"]).timeout(PROMPT).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("fifo-00000000.md") && err.contains("not a regular file"),
        "{err}"
    );
    // A FIFO as a memory file, too.
    let fifo = env.path("memory/project/pipe.md");
    std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    for args in [
        &["list"][..],
        &["status"],
        &["recall", "postgres"],
        &["check"],
    ] {
        let out = env.cmd(args).timeout(PROMPT).output().expect("run");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {out:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_log_is_listed_by_status_which_exits_0() {
    let env = with_memory();
    let outside = env.dir.path().join("outside.md");
    std::fs::write(&outside, "not a log").expect("write");
    std::fs::create_dir_all(env.path("memory/log/2026-11-29")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, env.path("memory/log/2026-11-29/link-00000000.md"))
        .expect("symlink");
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert!(
        status["invalid"].to_string().contains("link-00000000.md"),
        "{status}"
    );
    env.ok(&["list"]);
    let err = env.fails(&["check"], 1);
    assert!(err.contains("symbolic link"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_hard_linked_log_is_never_appended_through() {
    let env = with_memory();
    let log = own_log(&env);
    let outside = env.dir.path().join("outside.md");
    std::fs::rename(env.path(&log), &outside).expect("mv");
    std::fs::hard_link(&outside, env.path(&log)).expect("ln");
    let before = std::fs::read(&outside).expect("read");
    let err = env.fails(&["note", "through the link"], 1);
    assert!(err.contains("hard link"), "{err}");
    assert_eq!(std::fs::read(&outside).expect("read"), before);
}

#[test]
fn a_slug_of_four_byte_letters_fits_a_file_name_and_an_old_overlong_event_is_skipped() {
    let env = with_memory();
    let name = "\u{10330}".repeat(64);
    let key = format!("project/{name}");
    let (code, _, err) = env.remember(&key, "Gothic letters", &[]);
    assert_eq!(code, 0, "{err}");
    let files = env.memory_files();
    let long = files
        .iter()
        .find(|f| f.contains('\u{10330}'))
        .expect("written");
    let stem = long
        .trim_start_matches("memory/project/")
        .trim_end_matches(".md");
    assert!(stem.len() <= 200, "{}", stem.len());
    // --keep-both beside it stays distinct and fits.
    let (code, _, err) = env.remember(&key, "Gothic letters, again", &["--keep-both"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(env.memory_files().len(), 3);
    env.ok(&["check"]);
    // An event an older memoir logged with a slug too long for a file
    // name: quarantined, and every command goes on.
    let mut e = bobs_event(
        memoir::model::event::Op::Remember,
        "project/x",
        vec![],
        format!("---\nname: {name}\ndescription: too long\ntype: project\nsource: bob\n---\n"),
    );
    e.key = Some(memoir::model::key::Key {
        scope: "project".into(),
        slug: name.to_lowercase(),
    });
    env.write("memory/log/2026-11-29/bob-0badc0de.md", e.render());
    env.ok(&["rebuild"]);
    env.ok(&["rebuild", "--force"]);
    let err = env.fails(&["check"], 1);
    assert!(err.contains("bob-0badc0de.md"), "{err}");
    env.ok(&["forget", "project/db", "--reason", "moved"]);
    env.ok(&["list"]);
}

/// Hand-written memories lacking the fields `record` fills, as Claude Code
/// writes them.
fn hand_written(env: &Env, n: usize) {
    for i in 0..n {
        env.write(
            &format!("memory/project/fact-{i}.md"),
            format!("---\nname: fact-{i}\ndescription: fact number {i}\ntype: project\n---\n\nbody {i}\n"),
        );
    }
}

/// How many `remember` entries each hand-written fact has in the logs.
fn remembered(env: &Env, n: usize) -> Vec<usize> {
    let logs = env.log_text();
    (0..n)
        .map(|i| {
            logs.matches(&format!(" remember project/fact-{i} · "))
                .count()
        })
        .collect()
}

#[test]
fn an_interrupted_record_is_finished_by_the_next_one_without_logging_twice() {
    // After its log append, before the files are written back.
    let env = Env::new();
    hand_written(&env, 20);
    let err = env.at_failpoint("after-log-append", &["record"]);
    // A failpoint is a simulated crash: exit 1, never "a human must decide".
    assert_eq!(err.status.code(), Some(1), "{err:?}");
    assert!(String::from_utf8_lossy(&err.stderr).contains("failpoint after-log-append"));
    // memoir's own write, not hand edits: rebuild finishes it.
    let (_, _, err) = env.run(&["check"]);
    assert!(!err.contains("edited by hand"), "{err}");
    env.ok(&["rebuild"]);
    env.ok(&["check"]);
    env.ok(&["record"]);
    assert!(remembered(&env, 20).iter().all(|&n| n == 1));
    // And killed at any point.
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    for delay_ms in [10u64, 40, 120, 300] {
        let env = Env::new();
        hand_written(&env, 600);
        let mut child = env.spawn(&exe, &["record"], &[("MEMOIR_NOW", env.now.clone())]);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // Exit 1 if killed before the log append: the files are still
        // hand edits, left for record.
        let (code, _, err) = env.run(&["rebuild"]);
        assert!(code == 0 || (code == 1 && err.contains("by hand")), "{err}");
        env.ok(&["record"]);
        env.ok(&["check"]);
        let counts = remembered(&env, 600);
        assert!(
            counts.iter().all(|&n| n == 1),
            "delay {delay_ms}: {:?}",
            counts.iter().filter(|&&n| n != 1).count()
        );
    }
}

#[test]
fn a_copied_work_tree_becomes_a_new_writer() {
    let env = Env::new();
    env.ok(&["note", "from the original"]);
    let original = env.first_log();
    let copy = env.dir.path().join("copy");
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .arg(env.root())
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(cp.success());
    let out = env
        .cmd(&["note", "from the copy"])
        .current_dir(&copy)
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    // The copy writes a log of its own; the original's is as it was.
    let copied_log = std::fs::read_to_string(copy.join(&original)).expect("log");
    assert!(!copied_log.contains("from the copy"), "{copied_log}");
    let day = std::path::Path::new(&original).parent().expect("day");
    let logs: Vec<_> = std::fs::read_dir(copy.join(day))
        .expect("day")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    // The original (moved, not copied) keeps its writer.
    env.ok(&["note", "again from the original"]);
    assert!(env.read(&original).contains("again from the original"));
}

#[test]
fn core_autocrlf_neither_converts_the_store_nor_stops_a_clone_that_did() {
    // The attributes that keep the store byte-exact are committed.
    let env = Env::new();
    env.git(&["config", "core.autocrlf", "true"]);
    assert_eq!(env.remember("project/db", "Postgres 16", &[]).0, 0);
    env.ok(&["consolidate"]);
    let attributes = env.git(&["show", "HEAD:.gitattributes"]);
    assert!(
        attributes.contains("memory/** -text") && attributes.contains("MEMORY.md -text"),
        "{attributes}"
    );
    let clone = env.dir.path().join("clone");
    env.git(&[
        "clone",
        "-q",
        "-c",
        "core.autocrlf=true",
        ".",
        clone.to_str().expect("utf8"),
    ]);
    let log = env.first_log();
    let text = std::fs::read_to_string(clone.join(&log)).expect("log");
    assert!(!text.contains('\r'), "converted");
    // A store committed before its attributes (an older memoir), cloned
    // with core.autocrlf: logs and views come out with CRLF.
    let old = Env::new();
    assert_eq!(old.remember("project/db", "Postgres 16", &[]).0, 0);
    std::fs::remove_file(old.path(".gitattributes")).expect("rm");
    old.git(&["add", "-A"]);
    old.git(&["commit", "-q", "-m", "store"]);
    let clone = old.dir.path().join("clone");
    old.git(&[
        "clone",
        "-q",
        "-c",
        "core.autocrlf=true",
        ".",
        clone.to_str().expect("utf8"),
    ]);
    let converted = std::fs::read_to_string(clone.join("memory/project/db.md")).expect("view");
    assert!(
        converted.contains("\r\n"),
        "git did not convert: {converted:?}"
    );
    let run = |args: &[&str]| old.cmd(args).current_dir(&clone).output().expect("run");
    let list = run(&["list"]);
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("project/db"),
        "{list:?}"
    );
    let check = run(&["check"]);
    let err = String::from_utf8_lossy(&check.stderr);
    assert!(err.contains("line endings converted"), "{err}");
    assert!(run(&["rebuild"]).status.success());
    assert!(run(&["note", "still writable"]).status.success());
    let check = run(&["check"]);
    assert!(check.status.success(), "{check:?}");
}

/// A store with `n` notes from Bob, no consolidation yet.
fn with_notes(n: usize) -> Env {
    let env = Env::new();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    let mut log = String::new();
    for i in 0..n {
        let e = bob_note(&format!("note {i}"));
        log.push_str(&e.render());
    }
    env.write("memory/log/2026-11-29/bob-0badc0de.md", log);
    env
}

#[test]
fn an_extractor_consumes_only_the_notes_it_answered_for() {
    let env = with_notes(40);
    // Reads nothing, answers nothing: nothing consumed.
    env.ok(&["consolidate", "--extract-cmd", "true"]);
    let seen = env.dir.path().join("seen.jsonl");
    let cmd = format!("cat > {}", seen.display());
    env.ok(&["consolidate", "--extract-cmd", &cmd]);
    let given = std::fs::read_to_string(&seen).expect("seen");
    assert_eq!(given.lines().count(), 40);
    // Answers for the first note only: the other 39 come again.
    let first: serde_json::Value =
        serde_json::from_str(given.lines().next().expect("line")).expect("json");
    let answer = format!(
        "cat > /dev/null; echo '{{\"consumed\": [\"{}\"]}}'",
        first["id"].as_str().expect("id")
    );
    env.ok(&["consolidate", "--extract-cmd", &answer]);
    env.ok(&["consolidate", "--extract-cmd", &cmd]);
    assert_eq!(
        std::fs::read_to_string(&seen)
            .expect("seen")
            .lines()
            .count(),
        39
    );
    // An id it was not given is a protocol error.
    let bogus = "cat > /dev/null; echo '{\"consumed\": [\"01ARZ3NDEKTSV4RRFFQ69G5FAV\"]}'";
    let err = env.fails(&["consolidate", "--extract-cmd", bogus], 1);
    assert!(err.contains("not a note it was given"), "{err}");
}

#[test]
fn an_extractor_that_answers_as_it_reads_never_deadlocks() {
    let env = with_notes(700);
    let pad = " ".repeat(300);
    let cmd = format!("sed -u 's/.*\"id\":\"\\([^\"]*\\)\".*/{{\"consumed\":[\"\\1\"]}}{pad}/'");
    let out = env
        .cmd(&["consolidate", "--extract-cmd", &cmd])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Every note was answered for: none is given again.
    let seen = env.dir.path().join("seen.jsonl");
    let again = format!("cat > {}", seen.display());
    env.ok(&["consolidate", "--extract-cmd", &again]);
    assert_eq!(std::fs::read_to_string(&seen).expect("seen"), "");
}

#[test]
fn hostile_frontmatter_is_answered_at_once_by_every_reader() {
    let env = with_memory();
    let header = |k: &str| format!("---\nname: {k}\ndescription: d\ntype: project\nsource: s\n");
    for n in [60_000usize, 200_000] {
        let shapes = [
            ("flow", format!("tags: {}\n", "[".repeat(n))),
            ("flowmap", format!("tags: {}\n", "{a: ".repeat(n / 4))),
            ("dash", format!("tags:\n  {}x\n", "- ".repeat(n / 2))),
            ("qmark", format!("tags:\n  {}x\n", "? ".repeat(n / 2))),
            (
                "aliases",
                format!("a: &a x\ntags: [{}]\n", vec!["*a"; n / 3].join(",")),
            ),
            (
                "indent",
                (0..300).map(|i| format!("{}a:\n", " ".repeat(i))).collect(),
            ),
        ];
        for (name, yaml) in shapes {
            let text = format!("{}{yaml}---\n", header(name));
            env.write(
                &format!("memory/project/{name}.md"),
                &text[..text.len().min(250_000)],
            );
        }
        for args in [
            &["list"][..],
            &["status"],
            &["recall", "postgres"],
            &["context"],
            &["reindex"],
        ] {
            let out = env.cmd(args).timeout(PROMPT).output().expect("run");
            assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        }
        let out = env.cmd(&["check"]).timeout(PROMPT).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        let line = if n < 65_536 { 6 } else { 2 };
        assert!(
            err.contains(&format!(
                "memory/project/flow.md:{line}: error[format]: frontmatter: YAML"
            )),
            "{err}"
        );
        let out = env
            .cmd(&["context", "--from-hook"])
            .write_stdin(r#"{"prompt": "postgres"}"#)
            .timeout(PROMPT)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
}

/// A fake private key block, assembled so that this file holds none.
fn fake_pem() -> String {
    let body = "MIIEowIBAAKCAQEA7bq3Xk9Lq2Zp0Yw8Vt4Rj6Hs1Nc5Bd2Fg0Ui3Oe7Wa9Yx\n".repeat(4);
    [
        "-----BEGIN RSA ",
        "PRIVATE KEY-----\n",
        &body,
        "-----END RSA ",
        "PRIVATE KEY-----\n",
    ]
    .concat()
}

#[test]
fn no_error_path_echoes_a_secret() {
    let env = with_memory();
    let pem = fake_pem();
    // A value starting with `-` is taken for a flag by the argument parser.
    for args in [
        &["note", pem.as_str()][..],
        &["recall", pem.as_str()],
        &["--store", pem.as_str(), "list"],
    ] {
        let (code, out, err) = env.run(args);
        assert_ne!(code, 0);
        assert!(
            !err.contains("MIIEowIBAAKCAQEA") && !out.contains("MIIEowIBAAKCAQEA"),
            "{err}"
        );
    }
    // A token inside a key name: refused, and not in any message.
    let token = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    let key = format!("project/{token}");
    for args in [
        &["remember", key.as_str(), "-d", "d", "-s", "s"][..],
        &["show", key.as_str()],
        &["forget", key.as_str(), "--reason", "r"],
        &["history", key.as_str()],
    ] {
        let (code, out, err) = env.run(args);
        assert_ne!(code, 0, "{args:?}");
        let lower = token.to_lowercase();
        assert!(
            !err.contains(&token) && !err.contains(&lower) && !out.contains(&lower),
            "{args:?} echoed it: {err}"
        );
    }
    assert!(!env
        .log_text()
        .to_lowercase()
        .contains(&token.to_lowercase()));
}

#[test]
fn control_characters_are_refused_in_one_line_fields_and_never_printed_raw() {
    let env = with_memory();
    let (code, _, err) = env.remember("project/esc", "red \u{1b}[31m alert \u{7}", &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("control"), "{err}");
    env.write(
        "memory/project/bell.md",
        "---\nname: bell\ndescription: \"ring \\e[2J \\a\"\ntype: project\nsource: s\n---\n",
    );
    let list = env.ok(&["list"]);
    assert!(
        list.contains("bell") && !list.contains('\u{1b}') && !list.contains('\u{7}'),
        "{list:?}"
    );
    let (_, _, err) = env.run(&["check"]);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    // Into a pipe, show is exact.
    let out = env.cmd(&["show", "project/bell"]).output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\e[2J"));
}

#[test]
fn nothing_is_committed_or_logged_without_the_secret_scan() {
    let aws = fake_aws();
    let env = with_memory();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    env.ok(&["consolidate"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    // An unrecorded hand edit that holds a secret.
    let file = env.read("memory/project/db.md");
    env.write("memory/project/db.md", format!("{file}\naws id {aws}\n"));
    env.ok(&["note", "something to commit"]);
    let logs = env.log_text();
    let err = env.fails(&["consolidate"], 3);
    assert!(
        err.contains("memory/project/db.md") && err.contains("secret"),
        "{err}"
    );
    assert!(!err.contains(&aws));
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(env.log_text(), logs, "nothing appended");
    env.write("memory/project/db.md", &file);
    // The team's text of MEMORY.md.
    let index = env.read("MEMORY.md");
    env.write("MEMORY.md", format!("deploy key {aws}\n{index}"));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains("MEMORY.md:1") && err.contains("secret"),
        "{err}"
    );
    env.fails(&["consolidate"], 3);
    env.write("MEMORY.md", &index);
    // The commit message and the actor.
    let err = env.fails(&["consolidate", "-m", &format!("rotate {aws}")], 3);
    assert!(!err.contains(&aws), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    let out = env
        .cmd(&["note", "hello"])
        .env("MEMOIR_ACTOR", format!("{aws} <ci@example.com>"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&aws));
    assert_eq!(env.log_text(), logs);
    env.ok(&["consolidate"]);
    assert!(!env.git(&["log", "-p"]).contains(&aws));
}

#[test]
fn git_dir_and_git_work_tree_are_honoured() {
    let env = Env::bare();
    let git_dir = env.dir.path().join("elsewhere.git");
    env.git(&["init", "-q", "--bare", git_dir.to_str().expect("utf8")]);
    let run = |args: &[&str]| {
        env.cmd(args)
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", env.root())
            .output()
            .expect("run")
    };
    assert!(run(&["init"]).status.success());
    assert!(!exists(&env.path(".git")), "a nested repository was made");
    assert!(
        run(&["remember", "project/db", "-d", "Postgres 16", "-s", "s"])
            .status
            .success()
    );
    let out = run(&["consolidate"]);
    assert!(out.status.success(), "{out:?}");
    let log = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&git_dir)
        .args(["log", "--name-only", "--format=%s"])
        .output()
        .expect("git");
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(log.contains("memory/project/db.md"), "{log}");
}

#[cfg(unix)]
#[test]
fn a_write_that_would_fail_after_its_log_append_is_refused_before_it() {
    let env = with_memory();
    let outside = env.dir.path().join("outside.md");
    std::fs::write(&outside, "# not memoir's\n").expect("write");
    std::fs::remove_file(env.path("MEMORY.md")).expect("rm");
    std::os::unix::fs::symlink(&outside, env.path("MEMORY.md")).expect("ln");
    let logs = env.log_text();
    let files = env.memory_files();
    let err = env.fails(&["remember", "project/x", "-d", "a new fact", "-s", "s"], 1);
    assert!(
        err.contains("MEMORY.md") && err.contains("symbolic link"),
        "{err}"
    );
    env.fails(&["forget", "project/db", "--reason", "r"], 1);
    assert_eq!(env.log_text(), logs, "logged before failing");
    assert_eq!(env.memory_files(), files);
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        "# not memoir's\n"
    );
}

#[test]
fn recall_beside_forget_and_remember_prints_no_warning() {
    let env = Env::new();
    for i in 0..40 {
        let (code, _, err) = env.remember(
            &format!("project/fact-{i}"),
            &format!("postgres fact {i}"),
            &[],
        );
        assert_eq!(code, 0, "{err}");
    }
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let writer = {
        let root = env.root();
        let home = env.dir.path().join("home");
        std::thread::spawn(move || {
            for round in 0..2 {
                for i in 0..40 {
                    let key = format!("project/fact-{i}");
                    let args: Vec<String> = if round % 2 == 0 {
                        vec!["forget".into(), key, "--reason".into(), "churn".into()]
                    } else {
                        vec![
                            "remember".into(),
                            key,
                            "-d".into(),
                            format!("postgres fact {i}"),
                            "-s".into(),
                            "s".into(),
                        ]
                    };
                    let _ = std::process::Command::new(&exe)
                        .args(&args)
                        .current_dir(&root)
                        .env("HOME", &home)
                        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
                        .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
                        .output();
                }
            }
        })
    };
    let mut warnings = Vec::new();
    while !writer.is_finished() {
        for args in [&["recall", "postgres fact"][..], &["context", "postgres"]] {
            let (code, _, err) = env.run(args);
            assert_eq!(code, 0, "{err}");
            if !err.trim().is_empty() {
                warnings.push(err);
            }
        }
    }
    writer.join().expect("writer");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn after_an_interrupted_consolidation_and_a_rebuild_memory_md_is_never_built_from_a_stale_index() {
    let env = with_notes(0);
    env.write("memory/config.yaml", "index_budget: 12\n");
    let mut log = String::new();
    for i in 0..40 {
        let body = format!(
            "---\nname: fact-{i}\ndescription: fact {i} about zone {}\ntype: project\nsource: s\n---\n",
            i * 7
        );
        log.push_str(
            &bobs_event(
                memoir::model::event::Op::Propose,
                &format!("project/fact-{i}"),
                vec![],
                body,
            )
            .render(),
        );
    }
    env.write("memory/log/2026-11-29/bob-00000001.md", log);
    // Stopped after its first view, as a kill -9 would.
    let out = env.at_failpoint("mid-view-update", &["consolidate"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("failpoint mid-view-update"));
    // A reader saves the index between the crash and the repair.
    env.ok(&["status"]);
    env.ok(&["rebuild"]);
    let (code, _, err) = env.remember("project/new", "a direct write", &[]);
    assert_eq!(code, 0, "{err}");
    let written = env.read("MEMORY.md");
    env.ok(&["reindex"]);
    assert_eq!(
        written,
        env.read("MEMORY.md"),
        "MEMORY.md from a stale index"
    );
    env.ok(&["consolidate"]);
    let committed = env.git(&["show", "HEAD:MEMORY.md"]);
    env.ok(&["reindex"]);
    assert_eq!(committed, env.read("MEMORY.md"));
    env.ok(&["check"]);
}

#[test]
fn redact_removes_a_secret_that_slipped_in_and_check_base_accepts_exactly_that() {
    let aws = fake_aws();
    let env = with_memory();
    // A teammate's tool wrote around the policy: a note and a memory.
    let note = bob_note(&format!("deploy with {aws} today"));
    let memory = bobs_event(
        memoir::model::event::Op::Remember,
        "project/deploy",
        vec![],
        format!("---\nname: deploy\ndescription: how we deploy\ntype: project\nsource: bob\n---\n\nThe key is {aws}.\n"),
    );
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    env.write(log, format!("{}{}", note.render(), memory.render()));
    env.ok(&["rebuild"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "bob's work"]);
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    env.fails(&["check"], 1);
    // What it would do, then doing it.
    let dry = env.ok(&["redact", "--dry-run"]);
    assert!(dry.contains(&note.id) && dry.contains(&memory.id), "{dry}");
    assert!(env.read(log).contains(&aws));
    let out = env.ok(&["--json", "redact"]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        report["entries"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    for (path, bytes) in env.snapshot() {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&aws),
            "{path} still holds it"
        );
    }
    let view = env.read("memory/project/deploy.md");
    assert!(
        view.contains("[redacted:aws-access-key-id:") && view.contains("how we deploy"),
        "{view}"
    );
    env.ok(&["check"]);
    // The rewrite is accepted against the base that had the secret, and
    // consolidate commits it.
    env.ok(&["check", "--base", &base]);
    env.ok(&["consolidate"]);
    env.assert_store_committed("after the redaction");
    env.ok(&["check", "--base", &base]);
    // Any other rewrite of a log is not.
    let text = env.read(log);
    env.write(log, text.replacen("today", "tomorrow", 1));
    let err = env.fails(&["check", "--base", &base], 1);
    assert!(err.contains("append-only"), "{err}");
    env.write(log, &text);
    // A secret the rules do not know: its entry named by id, whole.
    env.ok(&["note", "the door code is 4711"]);
    // This writer's log (Bob's sorts first), where the note went.
    let own = walkdir::WalkDir::new(env.path("memory/log"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(env.root())
                .expect("in the store")
                .to_string_lossy()
                .into_owned()
        })
        .find(|rel| env.read(rel).contains("4711"))
        .expect("the note's log");
    let id = env
        .read(&own)
        .lines()
        .rev()
        .find_map(|l| {
            l.strip_prefix("<!-- memoir:end ")
                .and_then(|l| l.strip_suffix(" -->"))
                .map(str::to_string)
        })
        .expect("id");
    env.ok(&["redact", &id, "--reason", "a door code"]);
    assert!(!env.read(&own).contains("4711"));
    env.ok(&["check"]);
    env.fails(&["redact", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], 1);
}

/// The files under `.git/memoir/` that hold `secret`, in any case.
fn local_state_holding(env: &Env, secret: &str) -> Vec<String> {
    let lower = secret.to_lowercase();
    walkdir::WalkDir::new(env.path(".git/memoir"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            String::from_utf8_lossy(&bytes)
                .to_lowercase()
                .contains(&lower)
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

#[test]
fn redact_removes_the_secret_from_the_local_state_too() {
    let aws = fake_aws();
    let env = with_memory();
    let note = bob_note(&format!("deploy with {aws} today"));
    env.write("memory/log/2026-11-29/bob-0badc0de.md", note.render());
    // Indexed, so the persistent index holds the note's terms.
    env.ok(&["reindex"]);
    assert!(
        !local_state_holding(&env, &aws).is_empty(),
        "the index should hold the token before redact (else this test proves nothing)"
    );
    // A receipt that held it (one written before the rules knew it).
    let receipts = env.state_dir().join("receipts.jsonl");
    let line = format!(
        "{{\"v\":1,\"time\":\"2026-11-29T10:00:00.000Z\",\"kind\":\"query\",\"query\":\"deploy with {aws}\",\"query_hash\":null,\"memories\":[],\"budget\":1500,\"tokens\":10,\"omitted\":0,\"hook\":false}}\n"
    );
    std::fs::write(&receipts, line).expect("receipt");
    env.ok(&["redact"]);
    assert_eq!(local_state_holding(&env, &aws), Vec::<String>::new());
    // Nor after the index is built again, or a rebuild.
    env.ok(&["recall", "deploy today"]);
    env.ok(&["rebuild"]);
    env.ok(&["recall", "deploy today"]);
    assert_eq!(local_state_holding(&env, &aws), Vec::<String>::new());
    let seen = env.ok(&["seen"]);
    assert!(!seen.contains(&aws), "{seen}");
}

#[test]
fn a_forged_redaction_is_a_rewrite_check_base_and_consolidate_refuse() {
    let env = with_memory();
    // Bob's committed memory: deploys go out on Tuesdays.
    let memory = bobs_event(
        memoir::model::event::Op::Remember,
        "project/deploy",
        vec![],
        "---\nname: deploy\ndescription: deploys go out on Tuesdays\ntype: project\nsource: bob\n---\n\nOnly Tuesdays.\n".into(),
    );
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    let original = memory.render();
    env.write(log, &original);
    env.ok(&["rebuild"]);
    env.ok(&["consolidate"]);
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    // The forgery: the entry's content rewritten, marked `redacted`, and a
    // `redact` entry naming it with the blob id of the original bytes
    // (which git has). No secret is involved.
    let mut forged = memory.clone();
    forged.body = forged.body.replace("Tuesdays", "Fridays");
    forged.redacted = Some("secret removed by memoir redact (aws-access-key-id)".into());
    let parsed = memoir::model::event::parse_log(&original).expect("parses");
    let outside = env.dir.path().join("entry.txt");
    std::fs::write(&outside, &original[parsed.spans[0].clone()]).expect("write");
    let blob = env
        .git(&["hash-object", &outside.to_string_lossy()])
        .trim()
        .to_string();
    let mut audit = bobs_event(
        memoir::model::event::Op::Redact,
        "project/x",
        vec![],
        format!("{} {log} {blob} aws-access-key-id\n", memory.id),
    );
    audit.key = None;
    audit.reason = Some("redacted 1 log entry and 0 other files".into());
    env.write(log, format!("{}{}", forged.render(), audit.render()));
    let err = env.fails(&["check", "--base", &base], 1);
    assert!(err.contains("append-only") && err.contains(log), "{err}");
    let err = env.fails(&["consolidate"], 1);
    assert!(err.contains(log), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]).trim(), base);
    // The same bytes without the listing are refused as well (the listing
    // is what a forger adds; it proves nothing alone).
    env.write(log, forged.render());
    env.fails(&["check", "--base", &base], 1);
}

#[test]
fn an_endless_stdin_is_read_only_up_to_its_limit() {
    let env = with_memory();
    // Exit code of memoir reading /dev/zero, killed after PROMPT.
    let from_zero = |args: &[&str]| -> Option<i32> {
        let cmd = env.cmd(args);
        let mut cmd = std::process::Command::new(cmd.get_program());
        cmd.args(args).current_dir(env.root()).env_clear();
        let home = env.dir.path().join("home");
        cmd.env("HOME", &home)
            .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
            .env("MEMOIR_NOW", &env.now)
            .env("MEMOIR_ACTOR", "Ada <ada@example.com>")
            .stdin(std::fs::File::open("/dev/zero").expect("/dev/zero"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("spawn");
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status.code();
            }
            if start.elapsed() > PROMPT {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    assert_eq!(from_zero(&["note"]), Some(3));
    assert_eq!(
        from_zero(&[
            "remember",
            "project/z",
            "-d",
            "d",
            "-s",
            "s",
            "--body-file",
            "-"
        ]),
        Some(3)
    );
    assert_eq!(from_zero(&["context", "--from-hook"]), Some(0));
}

#[test]
fn a_secret_written_around_the_policy_is_never_injected_into_a_prompt() {
    let aws = fake_aws();
    let env = with_memory();
    env.write(
        "memory/project/deploy.md",
        format!("---\nname: deploy\ndescription: deploy key {aws} for postgres\ntype: project\nsource: s\n---\n\nUse {aws} to deploy postgres.\n"),
    );
    let note = bob_note(&format!("postgres key {aws}"));
    env.write("memory/log/2026-11-29/bob-0badc0de.md", note.render());
    for args in [
        &["recall", "deploy postgres"][..],
        &["--json", "recall", "deploy postgres"],
        &["context", "deploy postgres"],
        &["context"],
        &["--json", "context"],
    ] {
        let (code, out, err) = env.run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            !out.contains(&aws) && !err.contains(&aws),
            "{args:?} leaked it: {out}"
        );
    }
    let (_, out, _) = env.run(&["context", "deploy postgres"]);
    assert!(out.contains("[redacted:aws-access-key-id]"), "{out}");
}

#[test]
fn a_pull_request_view_never_shows_a_secret() {
    let aws = fake_aws();
    let env = with_memory();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    let memory = bobs_event(
        memoir::model::event::Op::Remember,
        "project/deploy",
        vec![],
        format!("---\nname: deploy\ndescription: how we deploy\ntype: project\nsource: bob\n---\n\nThe key is {aws}.\n"),
    );
    let note = bob_note(&format!("key {aws}"));
    env.write(
        "memory/log/2026-11-29/bob-0badc0de.md",
        format!("{}{}", memory.render(), note.render()),
    );
    env.ok(&["rebuild"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "bob's change"]);
    for format in ["text", "markdown", "json"] {
        let out = env.ok(&["diff", "HEAD~1", "HEAD", "--format", format]);
        assert!(out.contains("project/deploy"), "{out}");
        assert!(!out.contains(&aws), "{format} shows it: {out}");
    }
}

#[test]
fn check_base_fails_a_change_that_adds_a_malformed_entry() {
    let env = with_memory();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    env.ok(&["check", "--base", &base]);
    let good = bob_note("fine");
    let evil = evil_scope_entry();
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    env.write(
        log,
        format!(
            "{}{}## 10:00:00Z note · nonsense\n\n",
            good.render(),
            evil.render()
        ),
    );
    // In the store as it is, entries no one has accepted; for the
    // change, entries it added.
    env.fails(&["check"], 1);
    let err = env.fails(&["check", "--base", &base], 1);
    assert!(err.contains(&format!("{log}:8: error[log]")), "{err}");
    assert!(
        err.matches("malformed entry added since").count() == 2,
        "{err}"
    );
}

#[test]
fn redact_rewrites_only_what_holds_a_secret_beside_quarantined_entries() {
    let aws = fake_aws();
    let env = with_memory();
    let evil = evil_scope_entry();
    let note = bob_note(&format!("key {aws}"));
    let plain = bob_note("no secret");
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    let before = format!("{}{}{}", evil.render(), note.render(), plain.render());
    env.write(log, &before);
    env.ok(&["redact"]);
    let after = env.read(log);
    assert!(!after.contains(&aws));
    assert!(
        after.starts_with(&evil.render()) && after.ends_with(&plain.render()),
        "{after}"
    );
    let parsed = memoir::model::event::parse_log(&after).expect("parses");
    assert_eq!(parsed.events.len(), 3);
    assert!(parsed.quarantined.is_empty());
}

#[test]
fn a_log_past_the_size_memoir_reads_stops_writes_instead_of_losing_memories() {
    let env = with_memory();
    let log = own_log(&env);
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(&log))
        .expect("open");
    // Past 256 MiB without writing it: a sparse tail of NULs.
    file.set_len((256 << 20) + 1).expect("grow");
    let err = env.fails(&["remember", "project/b", "-d", "beta fact", "-s", "s"], 3);
    assert!(err.contains(&log), "{err}");
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert!(status["invalid"].to_string().contains(&log), "{status}");
    let err = env.fails(&["rebuild"], 1);
    assert!(err.contains(&log), "{err}");
    assert!(
        exists(&env.path("memory/project/db.md")),
        "rebuild removed a memory"
    );
    env.fails(&["record"], 1);
    env.fails(&["check"], 1);
}

#[test]
fn detached_worktrees_of_one_clone_are_different_writers() {
    let env = with_memory();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    let writer = |dir: &std::path::Path| -> String {
        let out = env
            .cmd(&["--json", "status"])
            .current_dir(dir)
            .output()
            .expect("run");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["writer"].as_str().expect("writer").to_string()
    };
    let mut seen = Vec::new();
    for name in ["wt-a", "wt-b"] {
        let dir = env.dir.path().join(name);
        env.git(&[
            "worktree",
            "add",
            "-q",
            "--detach",
            dir.to_str().expect("utf8"),
        ]);
        seen.push(writer(&dir));
    }
    assert_ne!(seen[0], seen[1], "{seen:?}");
    assert!(seen.iter().all(|w| w.starts_with("detached-")), "{seen:?}");
    // The main work tree, detached, keeps the id it always had.
    env.git(&["checkout", "-q", "--detach"]);
    let main = writer(&env.root());
    assert!(!seen.contains(&main), "{main}");
}

#[test]
fn a_sparse_checkout_never_commits_the_deletion_of_what_it_leaves_out() {
    let env = with_memory();
    env.ok(&["remember", "user/u", "-d", "a user fact", "-s", "s"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "all"]);
    env.git(&[
        "sparse-checkout",
        "set",
        "--no-cone",
        "/*",
        "!/memory/project/",
    ]);
    assert!(!exists(&env.path("memory/project/db.md")));
    let head = env.git(&["rev-parse", "HEAD"]);
    env.ok(&["note", "a note"]);
    let err = env.fails(&["consolidate"], 1);
    assert!(err.contains("sparse"), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    assert!(env
        .git(&["ls-tree", "-r", "HEAD"])
        .contains("memory/project/db.md"));
}

#[test]
fn a_redaction_killed_at_any_point_is_finished_by_the_next_one() {
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    for delay_ms in [10u64, 30, 50, 70, 90, 110, 140, 180, 250] {
        let env = with_memory();
        let mut log = String::new();
        for i in 0..300 {
            let secret = ["Tr0ub4dor3xKq9zW", &format!("{i:04}")].concat();
            let body = memory_file(
                &format!("fact-{i}"),
                &format!("fact {i}"),
                &format!("\npassword = {secret}\n"),
            );
            log.push_str(
                &bobs_event(
                    memoir::model::event::Op::Remember,
                    &format!("project/fact-{i}"),
                    vec![],
                    body,
                )
                .render(),
            );
        }
        env.write("memory/log/2026-11-29/bob-0badc0de.md", log);
        env.ok(&["rebuild"]);
        env.git(&["add", "-A"]);
        env.git(&["commit", "-qm", "leaked"]);
        let mut child = env.spawn(&exe, &["redact"], &[("MEMOIR_NOW", env.now.clone())]);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        env.ok(&["redact"]);
        for (path, bytes) in env.snapshot() {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("Tr0ub4dor3xKq9zW"),
                "delay {delay_ms}: {path}"
            );
        }
        let (code, _, err) = env.run(&["check", "--base", "HEAD"]);
        assert_eq!(code, 0, "delay {delay_ms}: {err}");
        env.ok(&["consolidate"]);
        env.ok(&["check"]);
    }
}

#[test]
fn rollback_and_consolidate_never_write_back_a_secret_that_came_around_the_policy() {
    let secret = ["Tr0ub4dor3x", "Kq9zW"].concat();
    let leak = memory_file("leak", "d", &format!("\npassword = {secret}\n"));
    // A version committed around the policy, rolled back to.
    let env = with_memory();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    env.write("memory/project/leak.md", &leak);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "bad", "--no-verify"]);
    let bad = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    env.git(&["rm", "-q", "memory/project/leak.md"]);
    env.git(&["commit", "-qm", "rm"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    let logs = env.log_text();
    let err = env.fails(&["rollback", &bad], 3);
    assert!(!err.contains(&secret), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(env.log_text(), logs, "appended");
    // A proposal that came in with a teammate's log.
    let env = with_memory();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    let proposal = bobs_event(
        memoir::model::event::Op::Propose,
        "project/leak",
        vec![],
        leak.clone(),
    );
    env.write("memory/log/2026-11-29/bob-0badc0de.md", proposal.render());
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "bob", "--no-verify"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    let (code, out, err) = env.run(&["consolidate"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        !out.contains(&secret) && !err.contains(&secret),
        "{out}{err}"
    );
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    assert!(!exists(&env.path("memory/project/leak.md")));
    let (_, out, _) = env.run(&["consolidate", "--dry-run"]);
    assert!(!out.contains(&secret), "{out}");
}

#[test]
fn git_locks_are_refused_before_anything_is_appended_and_never_taken_from_git() {
    let env = with_memory();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    env.ok(&["consolidate"]);
    env.ok(&["note", "to commit"]);
    let logs = env.log_text();
    // A ref lock left by a git command killed in its ref update.
    let branch = env.path(".git/refs/heads/main.lock");
    std::fs::write(&branch, "").expect("lock");
    let err = env.fails(&["consolidate"], 1);
    assert!(err.contains("main.lock"), "{err}");
    assert_eq!(env.log_text(), logs, "appended");
    std::fs::remove_file(&branch).expect("rm");
    // A dead memoir's note, and git's own index lock taken long after it.
    let state = env.state_dir();
    let note = state.join("git-index-lock-owner");
    std::fs::write(&note, "999999").expect("note");
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&note)
        .expect("note")
        .set_modified(old)
        .expect("age");
    std::fs::write(env.path(".git/index.lock"), "busy").expect("lock");
    env.fails(&["consolidate"], 1);
    assert!(
        exists(&env.path(".git/index.lock")),
        "git's lock was removed"
    );
    std::fs::remove_file(env.path(".git/index.lock")).expect("rm");
    env.ok(&["consolidate"]);
}

#[cfg(unix)]
#[test]
fn more_inputs_that_must_neither_hang_nor_be_written_through() {
    let env = with_memory();
    env.git(&["commit", "-q", "--allow-empty", "-m", "root"]);
    // A FIFO as a hook, a symlinked hook, a FIFO as .gitattributes.
    let hook = env.path(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().expect("hooks")).expect("mkdir");
    std::process::Command::new("mkfifo")
        .arg(&hook)
        .status()
        .expect("mkfifo");
    let out = env
        .cmd(&["hooks", "install"])
        .timeout(PROMPT)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    std::fs::remove_file(&hook).expect("rm");
    let shared = env.dir.path().join("shared-hook");
    std::fs::write(&shared, "#!/bin/sh\necho shared\n").expect("write");
    std::os::unix::fs::symlink(&shared, &hook).expect("ln");
    env.fails(&["hooks", "install"], 1);
    assert_eq!(
        std::fs::read_to_string(&shared).expect("read"),
        "#!/bin/sh\necho shared\n"
    );
    std::fs::remove_file(env.path(".gitattributes")).expect("rm");
    std::process::Command::new("mkfifo")
        .arg(env.path(".gitattributes"))
        .status()
        .expect("mkfifo");
    let out = env.cmd(&["init"]).timeout(PROMPT).output().expect("run");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    std::fs::remove_file(env.path(".gitattributes")).expect("rm");
    // The merge driver on an endless input.
    let ours = env.dir.path().join("ours");
    std::fs::write(&ours, "x\n").expect("write");
    let out = env
        .cmd(&[
            "merge-driver",
            "memory",
            "/dev/zero",
            ours.to_str().expect("utf8"),
            "/dev/zero",
        ])
        .timeout(PROMPT)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // Extractors that never end their output.
    for cmd in ["yes ''", "sleep 60 2>/dev/null & exit 0"] {
        let out = env
            .cmd(&["consolidate", "--extract-cmd", cmd])
            .timeout(Duration::from_secs(40))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{cmd}: {out:?}");
    }
    // NUL bytes, a forged line, an --expect that is no id.
    let out = env
        .cmd(&["note"])
        .write_stdin("a\u{0}b")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let (_, _, err) = env.run(&["show", "project/a\nmemoir: FORGED"]);
    assert!(
        !err.lines().any(|l| l.starts_with("memoir: FORGED")),
        "{err}"
    );
    let token = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
    let (code, out, err) = env.run(&[
        "--json",
        "remember",
        "project/db",
        "-d",
        "x",
        "-s",
        "s",
        "--expect",
        &token,
    ]);
    assert_eq!(code, 2);
    assert!(!out.contains(&token) && !err.contains(&token), "{out}{err}");
}

#[cfg(unix)]
#[test]
fn reads_by_key_refuse_links_and_git_blobs_past_the_caps_are_never_read() {
    let env = with_memory();
    // show and remember by key through a symlinked scope folder.
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(
        outside.join("ext.md"),
        memory_file("ext", "outside the store", ""),
    )
    .expect("write");
    std::fs::create_dir_all(env.path("memory/task")).expect("mkdir");
    std::fs::remove_dir_all(env.path("memory/task")).expect("rm");
    std::os::unix::fs::symlink(&outside, env.path("memory/task")).expect("ln");
    let err = env.fails(&["show", "task/ext"], 1);
    assert!(err.contains("symbolic link"), "{err}");
    std::fs::remove_file(env.path("memory/task")).expect("rm");
    std::fs::create_dir_all(env.path("memory/task")).expect("mkdir");
    // A memory file of 1 MB in a revision: named, not read into a diff.
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    env.write(
        "memory/project/huge.md",
        memory_file("huge", "d", &"x".repeat(1 << 20)),
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "huge"]);
    let err = env.fails(&["diff", "HEAD~1", "HEAD"], 1);
    assert!(
        err.contains("memory/project/huge.md") && err.contains("more than memoir reads"),
        "{err}"
    );
    // Exit codes: a secret in --reason is refused (3); MEMOIR_NOW that is
    // not UTF-8 is a usage error (2).
    let reason = format!("rotated {}", fake_aws());
    env.fails(&["redact", "--reason", &reason], 3);
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let out = env
            .cmd(&["note", "hi"])
            .env("MEMOIR_NOW", std::ffi::OsStr::from_bytes(b"\xff\xfe"))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
}

#[test]
fn a_secret_only_the_parsed_yaml_shows_is_refused_and_never_printed() {
    let token = ["ghp_", "aB3dE5fG7hI9jK1lM", "3nO5pQ7rS9tU1vW3xY5"].concat();
    let (head, tail) = token.split_at(17);
    let words = "word ".repeat(35);
    // A double-quoted value continued by an escaped line break.
    let escaped = format!(
        "---\nname: h\ndescription: \"{words}{head}\\\n  {tail}\"\ntype: project\n---\nbody\n"
    );
    let env = with_memory();
    env.write("memory/project/h.md", &escaped);
    let err = env.fails(&["record"], 3);
    assert!(err.contains("secret") && !err.contains(&token), "{err}");
    env.fails(&["check"], 1);
    // A !!binary block.
    let binary = "---\nname: b\ndescription: d\ntype: project\nsource: s\nextra: !!binary |\n  Z2hwX2FCM2RFNWZHN2hJOWpL\n  MWxNM25PNXBRN3JTOXRVMXZXM3hZNQ==\n---\n";
    env.write("memory/project/b.md", binary);
    env.fails(&["check"], 1);
    std::fs::remove_file(env.path("memory/project/b.md")).expect("rm");
    // Whatever prints it (list, --json, show, recall, status) redacts it.
    for args in [
        &["list"][..],
        &["--json", "list"],
        &["--json", "show", "project/h"],
        &["--json", "recall", "word"],
        &["--json", "status"],
    ] {
        let (_, out, err) = env.run(args);
        assert!(
            !out.contains(&token) && !err.contains(&token),
            "{args:?}: {out}"
        );
    }
    // Logged around the policy and committed: check --base names it, and
    // redact removes the entry whole.
    std::fs::remove_file(env.path("memory/project/h.md")).expect("rm");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "base"]);
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    let event = bobs_event(
        memoir::model::event::Op::Remember,
        "project/h",
        vec![],
        escaped.clone(),
    );
    env.write("memory/log/2026-11-29/bob-0badc0de.md", event.render());
    let err = env.fails(&["check", "--base", &base], 1);
    assert!(
        err.contains("bob-0badc0de.md:1") && err.contains("policy:secret"),
        "{err}"
    );
    env.ok(&["redact"]);
    assert!(!env
        .read("memory/log/2026-11-29/bob-0badc0de.md")
        .contains(tail));
    // A prompt hook reads its one JSON object, not to the end of stdin.
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let home = env.dir.path().join("home");
    let mut child = std::process::Command::new(exe)
        .args(["context", "--from-hook"])
        .current_dir(env.root())
        .env("HOME", &home)
        .env("GIT_CONFIG_GLOBAL", home.join("gitconfig"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    std::io::Write::write_all(&mut stdin, b"{\"prompt\": \"postgres\"}\n").expect("write");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > PROMPT {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "waited for the end of stdin"
    );
}

#[test]
fn a_token_split_by_an_invisible_character_or_percent_encoded_is_refused() {
    let env = with_memory();
    let token = ["ghp_", "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"].concat();
    let split = token.replacen("ghp_a", "ghp_\u{200B}a", 1);
    let encoded = format!("see https://x.example/?t=%67{}", &token[1..]);
    for text in [split.as_str(), encoded.as_str()] {
        let err = env.fails(&["note", text], 3);
        assert!(err.contains("github-pat"), "{err}");
    }
    env.ok(&["note", "50% of 100%25 done; caf\u{00AD}é"]);
}

#[test]
fn consolidate_commits_nothing_under_memory_that_is_not_a_store_file() {
    let env = with_memory();
    env.ok(&["consolidate"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    // A folder named like a memory file, a file in a folder of its own, a
    // memory file in a scope that is not configured.
    for planted in [
        "memory/project/x.md/evil.md",
        "memory/project/deep/evil.md",
        "memory/notes/evil.md",
        "memory/log/junk/payload.txt",
        "memory/log/2026-11-29/x.md/inner",
    ] {
        env.write(planted, "---\nname: evil\n---\nplanted around the policy\n");
        let err = env.fails(&["consolidate"], 3);
        assert!(err.contains(planted) && err.contains("layout"), "{err}");
        assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "{planted}");
        let dir = env.path(planted);
        std::fs::remove_dir_all(dir.parent().expect("parent")).expect("rm");
    }
    env.ok(&["consolidate"]);
    // One committed before the gate (by git itself), then moved out of
    // memory/ as the refusal advises: its deletion is committed.
    env.write("memory/project/notes.txt", "stray");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "stray"]);
    std::fs::remove_file(env.path("memory/project/notes.txt")).expect("rm");
    env.ok(&["consolidate"]);
    let tree = env.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!tree.contains("notes.txt"), "{tree}");
}

#[test]
fn junk_appended_to_a_log_and_sealed_by_the_next_write_is_no_torn_entry() {
    let env = with_memory();
    let log = env.first_log();
    let mut text = env.read(&log);
    text.push_str(&"junk that no write of memoir's ever made\n".repeat(250_000));
    env.write(&log, &text);
    // The next write seals it and goes on; check stops it.
    env.ok(&["note", "after the junk"]);
    assert!(env.ok(&["context"]).contains("after the junk"));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains(&log) && err.contains("malformed") && !err.contains("torn"),
        "{err}"
    );
}

#[test]
fn rollback_commits_through_the_same_gate_as_consolidate() {
    let env = with_memory();
    env.ok(&["consolidate"]);
    assert_eq!(
        env.remember("project/db", "Postgres 17", &["--replace"]).0,
        0
    );
    env.ok(&["consolidate"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    let log = env.first_log();
    let text = env.read(&log);
    // A committed log edited in place: no version commits it.
    env.write(&log, text.replacen("Postgres 16", "Postgres 15", 1));
    let err = env.fails(&["rollback", "HEAD~1"], 1);
    assert!(
        err.contains(&log) && err.contains("logs only grow"),
        "{err}"
    );
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    // A secret appended by hand: refused, never shown.
    let aws = fake_aws();
    let note = bob_note(&format!("the key is {aws}"));
    env.write(&log, format!("{text}{}", note.render()));
    let (code, out, err) = env.run(&["rollback", "HEAD~1"]);
    assert_eq!(code, 3, "{err}");
    assert!(!format!("{out}{err}").contains(&aws), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    // Put back, the rollback goes through.
    env.write(&log, &text);
    env.ok(&["rollback", "HEAD~1"]);
    assert!(env.read("memory/project/db.md").contains("Postgres 16"));
}

/// A body removed by id (a secret the rules do not know) proves only that
/// it was removed: a version commits the rewrite once the team accepts the
/// rewritten entry, whose id redact prints.
#[test]
fn a_redaction_by_id_is_committed_once_the_team_accepts_it() {
    let env = with_memory();
    let note = bob_note("the door code is 4711");
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    env.write(log, note.render());
    env.ok(&["consolidate"]);
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = env.ok(&["redact", &note.id, "--reason", "a door code"]);
    let id = out
        .split("list ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("an id to accept")
        .to_string();
    assert!(!env.read(log).contains("4711"));
    let err = env.fails(&["check", "--base", &base], 1);
    assert!(err.contains("append-only"), "{err}");
    env.fails(&["consolidate"], 1);
    env.write("memory/config.yaml", format!("accepted_entries: [{id}]\n"));
    env.ok(&["check", "--base", &base]);
    env.ok(&["consolidate"]);
    env.assert_store_committed("after the accepted redaction");
}

/// After redacting a secret from a hand edit memoir never recorded,
/// `redact` says that `record` comes next (else `check` keeps failing on
/// the file), then `consolidate`; and the steps it names settle it.
#[test]
fn redact_says_record_then_consolidate_come_next() {
    let env = crate::util::Env::new();
    env.ok(&[
        "remember",
        "project/deploy",
        "--description=Deploy with make release",
        "--source=stated by the user",
    ]);
    env.ok(&["consolidate", "--yes"]);
    let token = ["ghp_", "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"].concat();
    let rel = "memory/project/deploy.md";
    let text = env.read(rel);
    env.write(rel, format!("{text}\nThe token is {token}\n"));
    env.fails(&["check"], 1);
    let out = env.ok(&["redact"]);
    assert!(
        out.contains(&format!(
            "next: `memoir record` records the redacted hand edit of {rel}"
        )),
        "{out}"
    );
    assert!(
        out.contains("then `memoir consolidate` commits the redaction"),
        "{out}"
    );
    env.ok(&["record"]);
    env.ok(&["check"]);
    env.ok(&["consolidate", "--yes"]);
    env.ok(&["check"]);
    // Nothing recorded by hand: consolidate alone comes next.
    env.write(
        "memory/log/2026-11-29/bob-0badc0de.md",
        bob_note(&format!("deploy with {token} today")).render(),
    );
    let out = env.ok(&["redact"]);
    assert!(
        out.contains("next: `memoir consolidate` commits the redaction"),
        "{out}"
    );
    assert!(!out.contains("memoir record"), "{out}");
}

/// A compiled pre-commit hook (or a script in another encoding) is
/// refused, as a link is: memoir's shell lines in front of a binary would
/// break it, and a lossy read would not give its bytes back on uninstall.
#[test]
fn hooks_install_refuses_a_hook_that_is_not_a_text_script() {
    use std::os::unix::fs::PermissionsExt;
    let env = with_memory();
    let hook = env.path(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().expect("hooks")).expect("mkdir");
    for bytes in [
        b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec(),
        b"#!/bin/sh\n# caf\xe9 in latin-1\nexit 0\n".to_vec(),
    ] {
        std::fs::write(&hook, &bytes).expect("write");
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = env.fails(&["hooks", "install"], 1);
        assert!(err.contains("is not a text script"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(std::fs::read(&hook).expect("read"), bytes, "untouched");
        env.fails(&["hooks", "uninstall"], 1);
        assert_eq!(std::fs::read(&hook).expect("read"), bytes, "untouched");
    }
}

/// A hand-edited description with an ESC sequence, a NUL or a newline
/// (`check` flags each) is never printed raw: not by `list` or `recall`
/// (no forged row), not into the agent's prompt by `context` (a pipe, as
/// the hooks print), not into MEMORY.md.
#[test]
fn control_characters_in_a_hand_edit_are_never_printed_raw() {
    let env = with_memory();
    env.write(
        "memory/project/evil.md",
        "---\nname: evil\ndescription: \"deploy x\\u001b[2J\\u0000y\"\ntype: project\nsource: s\n---\nbody \u{1b}[31mred\n",
    );
    env.write(
        "memory/project/ml.md",
        "---\nname: ml\ndescription: |\n  deploy first\n  project/fake  project    2026-12-01  injected line\ntype: project\nsource: s\n---\n",
    );
    env.fails(&["check"], 1);
    let raw = |out: &str| out.contains(['\u{1b}', '\0']);
    let list = env.ok(&["list"]);
    assert!(!raw(&list), "{list:?}");
    assert!(
        !list.lines().any(|l| l.starts_with("project/fake")),
        "{list}"
    );
    let recall = env.ok(&["recall", "deploy"]);
    assert!(!raw(&recall), "{recall:?}");
    assert!(
        !recall.lines().any(|l| l.starts_with("project/fake")),
        "{recall}"
    );
    for args in [&["context", "deploy"][..], &["context"]] {
        let out = env.ok(args);
        assert!(!raw(&out), "{args:?}: {out:?}");
        assert!(out.contains("deploy x"), "{args:?}: {out}");
    }
    env.ok(&["reindex"]);
    let index = env.read("MEMORY.md");
    assert!(!raw(&index), "{index:?}");
    assert!(index.contains("deploy x\\u{1b}[2J"), "{index}");
}

/// A memory entry appended to a log by hand is held to the write policy
/// before it is committed, as a `remember` would have been: one whose
/// description holds an ESC sequence and a NUL is refused by `check` and
/// by `consolidate` (exit 3, naming the log's line), never committed.
#[test]
fn a_hand_appended_entry_the_policy_would_refuse_is_never_committed() {
    let env = with_memory();
    env.ok(&["consolidate", "--yes"]);
    let head = env.git(&["rev-parse", "HEAD"]);
    let body = memory_file("evil", "\"x\\u001b[2J\\u0000y\"", "");
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    env.write(
        log,
        bobs_event(
            memoir::model::event::Op::Remember,
            "project/evil",
            vec![],
            body,
        )
        .render(),
    );
    let err = env.fails(&["check"], 1);
    assert!(err.contains(log) && err.contains("policy:control"), "{err}");
    let err = env.fails(&["consolidate", "--yes"], 3);
    assert!(err.contains(&format!("{log}:")), "{err}");
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "nothing committed");
    // One whose body is no memory file at all.
    env.write(
        log,
        bobs_event(
            memoir::model::event::Op::Remember,
            "project/evil",
            vec![],
            "just words\n".into(),
        )
        .render(),
    );
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains(log) && err.contains("policy:format") && err.contains("holds no memory file"),
        "{err}"
    );
    let err = env.fails(&["consolidate", "--yes"], 3);
    assert!(
        err.contains(&format!("{log}:")) && err.contains("format"),
        "{err}"
    );
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "nothing committed");
}

/// A note of megabytes appended by hand (`note` takes 64 KiB) is named by
/// `check`, refused by `consolidate`, and never searched: printing it, and
/// indexing it, cost a clone's first query seconds and gigabytes.
#[test]
fn a_hand_appended_note_over_the_limit_is_flagged_and_never_searched() {
    let env = with_memory();
    env.ok(&["consolidate", "--yes"]);
    let log = "memory/log/2026-11-29/bob-0badc0de.md";
    let huge = format!("deploy notes {}", "padding words ".repeat(80_000));
    env.write(log, bob_note(&huge).render());
    let err = env.fails(&["check"], 1);
    assert!(err.contains(log) && err.contains("policy:size"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    env.fails(&["consolidate", "--yes"], 3);
    let out = env.ok(&["--json", "recall", "deploy", "notes"]);
    assert!(!out.contains("padding"), "searched: {}", out.len());
}

/// A committed log cut short in the work tree: `rebuild` would delete the
/// memories it lost with no word. It refuses (exit 1) naming the log and
/// how to restore it, `status` names it, and `--force` rebuilds anyway.
#[test]
fn rebuild_refuses_to_drop_what_a_rewritten_log_lost() {
    let env = with_memory();
    env.ok(&["consolidate", "--yes"]);
    let log = env.first_log();
    let text = env.read(&log);
    env.write(&log, &text[..120]);
    let err = env.fails(&["rebuild"], 1);
    assert!(err.contains(&log) && err.contains("append-only"), "{err}");
    assert!(err.contains("rebuild --force"), "{err}");
    assert!(env.path("memory/project/db.md").exists(), "nothing removed");
    env.fails(&["rebuild", "--check"], 1);
    let status = env.ok(&["status"]);
    assert!(
        status.contains("Logs rewritten since HEAD") && status.contains(&log),
        "{status}"
    );
    assert!(!status.contains("Nothing needs attention"), "{status}");
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "status"])).expect("json");
    assert_eq!(json["rewritten_logs"][0], log.as_str());
    env.write(&log, &text);
    env.ok(&["rebuild"]);
    env.write(&log, &text[..120]);
    env.ok(&["rebuild", "--force"]);
}

/// The merge driver's errors name the file git is merging (%P) and the
/// side, not git's temporary file.
#[test]
fn the_merge_drivers_errors_name_the_file_being_merged() {
    let env = Env::new();
    let dir = env.dir.path();
    std::fs::write(dir.join("base"), "x\n").expect("write");
    std::fs::write(dir.join(".merge_file_Ab12Cd"), b"caf\xe9\n").expect("write");
    std::fs::write(dir.join("theirs"), "y\n").expect("write");
    let path = |n: &str| dir.join(n).to_str().expect("utf-8").to_string();
    let err = env.fails(
        &[
            "merge-driver",
            "memory",
            &path("base"),
            &path(".merge_file_Ab12Cd"),
            &path("theirs"),
            "memory/project/db.md",
        ],
        1,
    );
    assert_eq!(
        err.trim(),
        "memoir: memory/project/db.md (ours): not valid UTF-8",
        "{err}"
    );
}
