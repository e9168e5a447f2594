//! What a person reads about memoir without the docs: `--help`, the man
//! page, and shell completion.

use crate::util::Env;

/// `--help` lists the commands a person runs; the internal ones (git runs
/// `merge-driver`, the hook shims run `hook`) are hidden, and still work.
#[test]
fn help_lists_no_internal_command() {
    let env = Env::bare();
    let help = env.ok(&["--help"]);
    let commands: Vec<&str> = help
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(commands.contains(&"hooks"), "{help}");
    assert!(commands.contains(&"remember"), "{help}");
    for internal in ["merge-driver", "hook"] {
        assert!(!commands.contains(&internal), "{internal}: {help}");
        env.ok(&[internal, "--help"]);
    }
}

/// `memoir man` is one complete page: every command with its options and
/// examples, the exit codes and the environment, and no reference to a
/// `memoir-init(1)` page that does not exist.
#[test]
fn the_man_page_is_complete() {
    let env = Env::bare();
    let man = env.ok(&["man"]);
    for part in [
        ".TH memoir 1",
        ".SH COMMANDS",
        ".SS \"memoir remember\"",
        ".SS \"memoir hooks install\"",
        // Each command's own options, and its examples.
        "\\-\\-min\\-score",
        "\\-\\-keep\\-ancestor",
        "\\-\\-description",
        "memoir list \\-\\-scope project",
        ".SH \"EXIT STATUS\"",
        "Needs a human decision",
        ".SH ENVIRONMENT",
        "MEMOIR_ACTOR",
        "MEMOIR_USER_STORE",
    ] {
        assert!(man.contains(part), "no {part:?} in the man page");
    }
    assert!(
        !man.contains("memoir\\-init(1)"),
        "a page that does not exist"
    );
    assert!(
        !man.contains("memoir merge\\-driver"),
        "an internal command"
    );
    // A help text's `…` reaches troff escaped, as troff without preconv reads it.
    assert!(
        man.is_ascii() && man.contains("\\[u2026]"),
        "non-ASCII roff"
    );
}

/// bash completes a memory key after show, forget, history and resolve
/// from the store (`memoir list --keys`), in the store `--store` names;
/// options and commands are still clap's. zsh and fish scripts call the
/// same helper.
#[test]
fn completion_offers_the_stores_keys() {
    let env = Env::new();
    env.remember("project/test-command", "Run the tests with cargo test", &[]);
    env.remember("user/terse", "Prefers short answers", &[]);
    assert_eq!(
        env.ok(&["list", "--keys"]),
        "project/test-command\nuser/terse\n"
    );
    let script = env.dir.path().join("memoir.bash");
    std::fs::write(&script, env.ok(&["completions", "bash"])).expect("script");
    let memoir = assert_cmd::cargo::cargo_bin("memoir");
    let bin_dir = memoir.parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Completes the last word of each line as bash would (`COMP_WORDS`).
    let complete = |line: &str, cwd: &std::path::Path| {
        let program = r#"source "$1"; read -ra COMP_WORDS <<< "$2"; [[ $2 == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            _memoir_keys memoir "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\n' "${COMPREPLY[@]}""#;
        let mut cmd = assert_cmd::Command::new("bash");
        env.pin(&mut cmd);
        let out = cmd
            .current_dir(cwd)
            .env("PATH", &path)
            .args(["-c", program, "bash"])
            .arg(&script)
            .arg(line)
            .output()
            .expect("bash");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let root = env.root();
    assert_eq!(
        complete("memoir show proj", &root),
        "project/test-command\n"
    );
    assert_eq!(
        complete("memoir forget ", &root),
        "project/test-command\nuser/terse\n"
    );
    assert_eq!(complete("memoir history user/", &root), "user/terse\n");
    let value = complete("memoir resolve --take ", &root);
    assert!(
        !value.contains("project/"),
        "an option's value is no key: {value}"
    );
    // Elsewhere, the store --store names.
    let elsewhere = env.dir.path().join("home");
    let line = format!("memoir --store {} show pro", root.display());
    assert_eq!(complete(&line, &elsewhere), "project/test-command\n");
    assert_eq!(complete("memoir show pro", &elsewhere), "\n");
    // The rest is clap's: subcommands, options.
    assert!(complete("memoir remem", &root).contains("remember"));
    assert!(complete("memoir show --js", &root).contains("--json"));
    let zsh = env.ok(&["completions", "zsh"]);
    assert!(
        zsh.contains("_memoir_keys() {") && zsh.contains("<scope>/<name>:_memoir_keys'"),
        "zsh"
    );
    let fish = env.ok(&["completions", "fish"]);
    assert!(
        fish.contains("__fish_seen_subcommand_from show forget history resolve")
            && fish.contains("list --keys"),
        "fish"
    );
}
