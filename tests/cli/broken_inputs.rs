//! Hostile and broken input: a clear one-line error naming the file (and
//! line), the documented exit code, no panic, nothing written. And what a
//! user expects to just work (BOM, CRLF, no final newline) does.

use crate::util::Env;

const VALID: &str = "---\nname: x\ndescription: a fact\ntype: project\n---\nBody\n";

/// A hand-written memory file that `record` and `check` must reject.
struct BadFile {
    what: &'static str,
    path: &'static str,
    content: Vec<u8>,
    code: i32,
    needle: &'static str,
}

fn bad(
    what: &'static str,
    path: &'static str,
    content: impl Into<Vec<u8>>,
    code: i32,
    needle: &'static str,
) -> BadFile {
    BadFile {
        what,
        path,
        content: content.into(),
        code,
        needle,
    }
}

fn bad_files() -> Vec<BadFile> {
    let mut huge = b"---\nname: huge\ndescription: big\ntype: project\n---\n".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 20 * 1024 * 1024));
    vec![
        bad("unclosed frontmatter", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: project\nbody\n", 1, "unclosed frontmatter"),
        bad("no frontmatter", "memory/project/x.md", "just text\n", 1, "no frontmatter"),
        bad("bad YAML", "memory/project/x.md", "---\nname: [x\ndescription: d\n---\n", 1, "invalid YAML"),
        bad("confidence is a word", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: project\nconfidence: high\n---\n", 1, ":5: `confidence` must be a number"),
        bad("confidence out of range", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: project\nconfidence: 7\n---\n", 1, ":5:"),
        bad("tags not a list", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: project\ntags: 3\n---\n", 1, "`tags` must be a list"),
        bad("name is a number", "memory/project/x.md", "---\nname: 12\ndescription: d\ntype: project\n---\n", 1, "`name` must be a string"),
        bad("unknown scope folder", "memory/opinions/x.md", VALID, 3, "unknown scope `opinions`"),
        bad("unknown type", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: opinion\n---\n", 3, "unknown type `opinion`"),
        bad("non-UTF-8 bytes", "memory/project/x.md", b"---\nname: x\ndescription: \xff\xfe\ntype: project\n---\n".to_vec(), 1, ":3: not valid UTF-8"),
        bad("a 20 MB body", "memory/project/huge.md", huge, 3, "more than the limit"),
        bad("tab indentation", "memory/project/x.md", "---\nname: x\n\tdescription: d\ntype: project\n---\n", 1, ":3: tab"),
        bad("duplicate keys", "memory/project/x.md", "---\nname: x\nname: y\ndescription: d\ntype: project\n---\n", 1, "duplicate"),
        bad("missing name", "memory/project/x.md", "---\ndescription: d\ntype: project\n---\n", 1, "`name` is required"),
        bad("missing description", "memory/project/x.md", "---\nname: x\ntype: project\n---\n", 1, "`description` is required"),
        bad("missing type", "memory/project/x.md", "---\nname: x\ndescription: d\n---\n", 1, "`type` is required"),
        bad("empty frontmatter", "memory/project/x.md", "---\n---\nbody\n", 1, "empty frontmatter"),
        bad("frontmatter is a list", "memory/project/x.md", "---\n- a\n- b\n---\n", 1, "not a mapping"),
        bad("name does not match the file", "memory/project/x.md", "---\nname: other\ndescription: d\ntype: project\n---\n", 1, "normalizes to `other`"),
        bad("file name is not a slug", "memory/project/Bad Name.md", "---\nname: Bad Name\ndescription: d\ntype: project\n---\n", 1, "rename it bad-name.md"),
        bad("created is not a time", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: project\ncreated: yesterday\n---\n", 1, "`created`"),
        bad("review_by is not a date", "memory/project/x.md", "---\nname: x\ndescription: d\ntype: project\nreview_by: 2026-13-45\n---\n", 1, "`review_by`"),
        bad("alias bomb", "memory/project/x.md", "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nname: x\ndescription: d\ntype: project\n---\n", 1, "memory/project/x.md"),
        bad("deep nesting", "memory/project/x.md", format!("---\nname: x\ndescription: d\ntype: project\nz: {}{}\n---\n", "[".repeat(5000), "]".repeat(5000)), 1, ":5: frontmatter: YAML nested deeper than 32 levels"),
        bad("a secret in the body", "memory/project/x.md", format!("{VALID}key: {}\n", ["AKIA", "Z7QRSTUVWXYZ2345"].concat()), 3, "secret:aws-access-key-id"),
        bad("description over two lines", "memory/project/x.md", "---\nname: x\ndescription: |\n  one\n  two\ntype: project\n---\n", 3, "one line"),
    ]
}

#[test]
fn broken_memory_files_are_refused_by_record_and_reported_by_check() {
    for case in bad_files() {
        let env = Env::new();
        env.ok(&["note", "before"]);
        env.write(case.path, &case.content);
        let logs = env.log_text();
        let err = env.fails(&["record"], case.code);
        assert!(err.contains(case.path), "{}: {err}", case.what);
        assert!(
            err.contains(case.needle),
            "{}: expected `{}` in {err}",
            case.what,
            case.needle
        );
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{}: one line: {err}",
            case.what
        );
        assert_eq!(env.log_text(), logs, "{}: nothing logged", case.what);
        let err = env.fails(&["check"], 1);
        assert!(err.contains(case.path), "{}: {err}", case.what);
        // Reads skip the broken file instead of failing.
        env.ok(&["list"]);
        env.ok(&["status"]);
    }
}

#[test]
fn a_symlink_is_never_followed() {
    let env = Env::new();
    std::os::unix::fs::symlink("/etc/passwd", env.path("memory/project/passwd.md")).expect("link");
    let err = env.fails(&["record"], 1);
    assert!(
        err.contains("memory/project/passwd.md") && err.contains("symbolic link"),
        "{err}"
    );
    let err = env.fails(&["check"], 1);
    assert!(err.contains("memory/project/passwd.md"), "{err}");
    let err = env.fails(&["rebuild"], 1);
    assert!(
        err.contains("memory/project/passwd.md: is a symbolic link") && err.contains("left alone"),
        "{err}"
    );
    env.fails(&["show", "project/passwd"], 1);
    assert!(!env.log_text().contains("root:"));
    // A scope folder linked out of the store is refused for writes.
    std::fs::remove_dir_all(env.path("memory/task")).expect("rm");
    let outside = tempfile::tempdir().expect("tmp");
    std::os::unix::fs::symlink(outside.path(), env.path("memory/task")).expect("link");
    let (code, _, err) = env.remember("task/x", "a task", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("memory/task") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).expect("dir").count(), 0);
}

#[test]
fn rebuild_force_replaces_a_linked_view_and_leaves_its_target_alone() {
    let env = Env::new();
    env.ok(&["remember", "-q", "project/a", "-d", "a fact", "-s", "t"]);
    let view = env.read("memory/project/a.md");
    let outside = tempfile::tempdir().expect("tmp");
    let target = outside.path().join("target.md");
    std::fs::write(&target, "not memoir's").expect("write");
    std::fs::remove_file(env.path("memory/project/a.md")).expect("rm");
    std::os::unix::fs::symlink(&target, env.path("memory/project/a.md")).expect("link");
    let err = env.fails(&["rebuild"], 1);
    assert!(
        err.contains("memory/project/a.md") && err.contains("symbolic link"),
        "{err}"
    );
    env.ok(&["rebuild", "--force"]);
    let meta = std::fs::symlink_metadata(env.path("memory/project/a.md")).expect("meta");
    assert!(meta.file_type().is_file(), "{meta:?}");
    assert_eq!(env.read("memory/project/a.md"), view);
    assert_eq!(
        std::fs::read_to_string(&target).expect("target"),
        "not memoir's"
    );
    env.ok(&["check"]);
}

#[test]
fn a_file_name_that_is_not_utf8_is_named_and_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.ok(&[
        "remember",
        "-q",
        "project/kiln",
        "-d",
        "kiln firing schedule",
        "-s",
        "t",
    ]);
    let name = std::ffi::OsStr::from_bytes(b"bad\xff.md");
    std::fs::write(env.path("memory/project").join(name), VALID).expect("write");
    // recall answers from the rest and warns; record and check refuse it.
    let (code, out, err) = env.run(&["recall", "kiln"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("project/kiln"), "{out}");
    assert!(
        err.contains("memory/project/bad") && err.contains("not UTF-8"),
        "{err}"
    );
    for cmd in ["record", "check", "rebuild"] {
        let err = env.fails(&[cmd], 1);
        assert!(
            err.contains("memory/project/bad") && err.contains("not UTF-8"),
            "{cmd}: {err}"
        );
    }
    // rebuild says why it left the file alone, not that it was edited.
    let (code, out, _) = env.run(&["--json", "rebuild"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["refused"], serde_json::json!([]), "{v}");
    assert!(
        v["unreadable"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not UTF-8")),
        "{v}"
    );
}

#[test]
fn bad_arguments_get_the_documented_exit_codes() {
    let env = Env::new();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["remember", "../../x", "-d", "d", "-s", "s"], 3, "../../x"),
        (
            &["remember", "project/../../etc/x", "-d", "d", "-s", "s"],
            3,
            "path separator",
        ),
        (
            &["remember", "/etc/passwd", "-d", "d", "-s", "s"],
            3,
            "/etc/passwd",
        ),
        (
            &["remember", "opinions/x", "-d", "d", "-s", "s"],
            3,
            "unknown scope `opinions`",
        ),
        (
            &["remember", "project/a\u{202e}b", "-d", "d", "-s", "s"],
            3,
            "bidirectional",
        ),
        (
            &["remember", "project/CON", "-d", "d", "-s", "s"],
            3,
            "reserved device name",
        ),
        (
            &[
                "remember",
                "project/x",
                "-d",
                "d",
                "-s",
                "s",
                "--type",
                "opinion",
            ],
            3,
            "unknown type",
        ),
        (
            &["remember", "project/x", "-d", "d", "-s", ""],
            3,
            "source is required",
        ),
        (
            &["remember", "project/x", "-d", "", "-s", "s"],
            3,
            "description is empty",
        ),
        (
            &[
                "remember",
                "project/x",
                "-d",
                "d",
                "-s",
                "s",
                "--confidence",
                "2",
            ],
            2,
            "--confidence",
        ),
        (
            &[
                "remember",
                "project/x",
                "-d",
                "d",
                "-s",
                "s",
                "--review-by",
                "soon",
            ],
            2,
            "--review-by",
        ),
        (&["remember", "project/x", "-d", "d"], 2, "--source"),
        (
            &[
                "remember",
                "project/x",
                "-d",
                "d",
                "-s",
                "s",
                "--body-file",
                "/nonexistent/file",
            ],
            1,
            "/nonexistent/file",
        ),
        (&["note", "   "], 3, "empty"),
        (
            &["forget", "project/x", "--reason", "gone"],
            1,
            "no memory project/x",
        ),
        (&["show", "project/nothing"], 1, "no memory project/nothing"),
        (&["frobnicate"], 2, "frobnicate"),
    ];
    for (args, code, needle) in cases {
        let before = env.snapshot();
        let err = env.fails(args, *code);
        assert!(
            err.contains(needle),
            "{args:?}: expected `{needle}` in {err}"
        );
        assert_eq!(env.snapshot(), before, "{args:?} wrote something");
    }
    let mut cmd = env.cmd(&["note", "x"]);
    cmd.env("MEMOIR_NOW", "tomorrow");
    let out = cmd.output().expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_huge_body_file_is_refused_without_a_trace() {
    let env = Env::new();
    let big = env.dir.path().join("big.md");
    std::fs::write(&big, vec![b'a'; 20 * 1024 * 1024]).expect("write");
    let before = env.snapshot();
    let err = env.fails(
        &[
            "remember",
            "project/big",
            "-d",
            "d",
            "-s",
            "s",
            "--body-file",
            big.to_str().expect("utf8"),
        ],
        3,
    );
    assert!(err.contains("big.md"), "{err}");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn broken_logs_and_config_name_the_file_and_line() {
    let env = Env::new();
    env.ok(&["note", "one"]);
    env.ok(&["note", "two"]);
    let log = env.first_log();
    let text = env.read(&log);
    let broken = text.replacen("\"op\":\"note\"", "\"op\":\"nope\"", 1);
    env.write(&log, &broken);
    // Quarantined: named with its file and line, skipped, the store goes on
    // (and check fails until someone decides).
    let err = env.fails(&["check"], 1);
    assert!(err.contains(&format!("{log}:2:")), "{err}");
    env.ok(&["rebuild"]);
    let hot = env.ok(&["context"]);
    assert!(hot.contains("two") && !hot.contains("one"), "{hot}");
    // A log of a format version this memoir cannot read still stops it.
    env.write(&log, text.replacen("\"v\":1", "\"v\":2", 1));
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains(&format!("{log}:2:")) && err.contains("version"),
        "{err}"
    );
    env.write(&log, &text);
    env.ok(&["check"]);
    env.write("memory/config.yaml", "scopes: [user, project\n");
    let err = env.fails(&["list"], 1);
    assert!(err.contains("memory/config.yaml"), "{err}");
    env.write("memory/config.yaml", "colour: blue\n");
    let err = env.fails(&["list"], 1);
    assert!(
        err.contains("memory/config.yaml") && err.contains("colour"),
        "{err}"
    );
}

#[test]
fn bom_crlf_and_a_missing_final_newline_just_work() {
    let env = Env::new();
    env.write(
        "memory/project/bom.md",
        "\u{feff}---\nname: bom\ndescription: has a BOM\ntype: project\nsource: s\n---\nBody\n",
    );
    env.write(
        "memory/project/crlf.md",
        "---\r\nname: crlf\r\ndescription: windows endings\r\ntype: project\r\n---\r\nBody\r\n",
    );
    env.write(
        "memory/project/no-newline.md",
        "---\nname: no-newline\ndescription: no final newline\ntype: project\n---\nBody",
    );
    let out = env.ok(&["record"]);
    assert_eq!(out.lines().count(), 3, "{out}");
    let crlf = env.read("memory/project/crlf.md");
    assert!(
        crlf.contains("type: project\r\nsource: hand edit by Ada <ada@example.com>\r\n"),
        "{crlf:?}"
    );
    assert!(crlf.ends_with("---\r\nBody\r\n"));
    assert!(env.read("memory/project/bom.md").starts_with('\u{feff}'));
    assert!(env.read("memory/project/no-newline.md").ends_with("\nBody"));
    env.ok(&["check"]);
    let index = env.read("MEMORY.md");
    for k in ["bom", "crlf", "no-newline"] {
        assert!(index.contains(&format!("memory/project/{k}.md")), "{index}");
    }
    let before = env.snapshot();
    env.delete_memory_files();
    env.ok(&["rebuild"]);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn later_commands_reject_bad_input_with_the_documented_exit_codes() {
    let (env, _) = crate::util::forked();
    let exit = |args: &[&str], vars: &[(&str, &str)], code: i32, needle: &str| {
        let mut cmd = env.cmd(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: expected `{needle}` in {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    };
    exit(
        &["consolidate"],
        &[("MEMOIR_AUTHOR", "no brackets")],
        2,
        "MEMOIR_AUTHOR",
    );
    exit(&["--lock-timeout=-1", "list"], &[], 2, "--lock-timeout");
    exit(&["recall", "db", "--min-score", "2"], &[], 2, "--min-score");
    exit(
        &["resolve", "project/db", "--edit"],
        &[("EDITOR", ""), ("VISUAL", ""), ("TERM", "dumb")],
        2,
        "--edit needs an editor",
    );
    exit(
        &["resolve", "project/db", "--keep", "--both"],
        &[],
        2,
        "cannot be used with",
    );
    exit(
        &["merge-driver", "memory", "/nonexistent/base", "a", "b"],
        &[],
        1,
        "/nonexistent/base",
    );
    exit(
        &["merge-driver", "sideways", "a", "b", "c"],
        &[],
        2,
        "sideways",
    );
    exit(&["diff", "--format", "pdf"], &[], 2, "pdf");
    exit(&["history", "../x"], &[], 3, "../x");
    let outside = tempfile::tempdir().expect("tmp");
    let out = env
        .cmd(&["hooks", "install"])
        .current_dir(outside.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no memoir store"));
    // A hook outside a store steps aside.
    let out = env
        .cmd(&["hook", "pre-commit"])
        .current_dir(outside.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn input_that_is_not_utf8_is_named_with_exit_1_and_nothing_written() {
    let env = Env::new();
    let logs = env.log_text();
    let out = env
        .cmd(&["note"])
        .write_stdin(b"a note \xff\xfe".to_vec())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("<stdin>: the note is not valid UTF-8"),
        "{err}"
    );
    env.write("body.md", b"a body \xff\n");
    let body = env.path("body.md");
    let body = body.to_str().expect("a path");
    let (code, _, err) = env.remember("project/x", "a fact", &["--body-file", body]);
    assert_eq!(code, 1, "{err}");
    // The path is an argument: long ones are masked, never echoed.
    assert!(err.contains(": not valid UTF-8"), "{err}");
    assert_eq!(env.log_text(), logs, "nothing logged");
}

/// A memory file broken by hand is never left out unseen: `list` and the
/// hot `context` warn of it as `recall` does, and `rebuild` says it does
/// not parse (not that it could be recorded).
#[test]
fn a_memory_file_that_does_not_parse_is_named_by_list_context_and_rebuild() {
    let env = Env::new();
    env.remember("project/db", "Postgres 16", &[]);
    env.remember("project/ci", "CI runs on push", &[]);
    let text = env.read("memory/project/db.md");
    env.write(
        "memory/project/db.md",
        text.replace(
            "description: Postgres 16",
            "description: Postgres 16: [oops",
        ),
    );
    for args in [&["list"][..], &["context"]] {
        let (code, _, err) = env.run(args);
        assert_eq!(code, 0);
        assert!(
            err.contains("memory/project/db.md:3:") && err.contains("(skipped)"),
            "{args:?}: {err}"
        );
    }
    let err = env.fails(&["rebuild"], 1);
    assert!(
        err.contains("memory/project/db.md:3: does not parse") && !err.contains("record` keeps it"),
        "{err}"
    );
}

/// A config too large to read is a broken config, as a bad value is:
/// exit 1 naming it, from a read as from a write, never exit 3 (a write
/// the policy refused).
#[test]
fn a_config_too_large_is_a_broken_config_not_a_refusal() {
    let env = Env::new();
    assert_eq!(env.remember("project/db", "Postgres 16", &[]).0, 0);
    env.write("memory/config.yaml", format!("# {}\n", "x".repeat(300_000)));
    for args in [
        &["recall", "db"][..],
        &["remember", "project/x", "-d", "x", "-s", "s"],
    ] {
        let err = env.fails(args, 1);
        assert!(
            err.starts_with("memoir: memory/config.yaml: "),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
