//! The personal store: `user/` memories live in each person's own store
//! (under their HOME), never in the repository, and never answer another
//! person's recall. Two people, two HOMEs, one team repository.

use crate::util::Env;
use serde_json::Value;
use std::path::PathBuf;

/// A second person on the same repository: their own HOME and identity.
struct Bob(PathBuf);

impl Bob {
    fn new(env: &Env) -> Bob {
        let home = env.dir.path().join("bob-home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::write(
            home.join("gitconfig"),
            "[user]\n\tname = Bob\n\temail = bob@example.com\n",
        )
        .expect("gitconfig");
        Bob(home)
    }

    fn run(&self, env: &Env, args: &[&str]) -> (i32, String, String) {
        let out = env
            .cmd(args)
            .env("HOME", &self.0)
            .env("GIT_CONFIG_GLOBAL", self.0.join("gitconfig"))
            .env("MEMOIR_ACTOR", "Bob <bob@example.com>")
            .output()
            .expect("run");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, env: &Env, args: &[&str]) -> String {
        let (code, out, err) = self.run(env, args);
        assert_eq!(code, 0, "bob: {args:?}: {out}{err}");
        out
    }
}

fn keys(json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json).expect("json");
    v.get("hits")
        .or(v.get("memories"))
        .and_then(Value::as_array)
        .expect("array")
        .iter()
        .map(|h| h["key"].as_str().unwrap_or("note").to_string())
        .collect()
}

#[test]
fn one_persons_user_memories_never_reach_another() {
    let env = Env::new();
    let bob = Bob::new(&env);
    env.remember("project/db", "The database is Postgres 16", &[]);
    let out = env.ok(&[
        "remember",
        "user/likes-tea",
        "-d",
        "Ada drinks green tea without sugar",
        "-s",
        "stated by Ada",
        "--type",
        "user",
    ]);
    assert_eq!(out, "remembered user/likes-tea (in your personal store)\n");
    assert!(
        !env.path("memory/user/likes-tea.md").exists(),
        "never in the repository"
    );
    let personal = env.dir.path().join("home/.local/share/memoir/user");
    assert!(personal.join("memory/user/likes-tea.md").exists());
    assert!(
        personal.join(".git").is_dir(),
        "a git repository of its own"
    );

    // Ada finds it, marked as hers; Bob does not.
    let hits: Value =
        serde_json::from_str(&env.ok(&["--json", "recall", "what tea does Ada drink"]))
            .expect("json");
    assert_eq!(hits["hits"][0]["key"], "user/likes-tea");
    assert_eq!(hits["hits"][0]["store"], "personal");
    let (_, bobs, _) = bob.run(&env, &["--json", "recall", "what tea does Ada drink"]);
    // (Bob may see the repository's weaker matches; never Ada's memory.)
    assert!(
        !keys(&bobs).contains(&"user/likes-tea".to_string()),
        "{bobs}"
    );
    assert!(!keys(&bob.ok(&env, &["--json", "list"])).contains(&"user/likes-tea".to_string()));
    assert!(!bob.ok(&env, &["context"]).contains("tea"));
    let (code, _, err) = bob.run(&env, &["show", "user/likes-tea"]);
    assert_eq!(code, 1, "{err}");

    // Ada's prompt context and hot memory carry it, in a block of its own.
    let ctx = env.ok(&["context", "how does Ada take her tea"]);
    assert!(
        ctx.starts_with("<personal_memories>") && ctx.contains("user/likes-tea"),
        "{ctx}"
    );
    let hot = env.ok(&["context"]);
    assert!(
        hot.contains("<personal_hot_memory>") && hot.contains("<hot_memory>"),
        "{hot}"
    );

    // The MCP server writes user/ there too, and says so.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"scope":"user","name":"short-answers","description":"Ada wants short answers","source":"stated by Ada","type":"user"}}}"#;
    let out = env
        .cmd(&["mcp"])
        .write_stdin(format!("{call}\n"))
        .output()
        .expect("mcp");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        answer["result"]["structuredContent"]["store"], "personal",
        "{answer}"
    );
    assert!(personal.join("memory/user/short-answers.md").exists());

    // Bob's own preference is his alone.
    bob.ok(
        &env,
        &[
            "remember",
            "user/likes-coffee",
            "-d",
            "Bob drinks black coffee",
            "-s",
            "stated by Bob",
            "--type",
            "user",
        ],
    );
    assert!(
        !keys(&env.ok(&["--json", "recall", "who drinks black coffee"]))
            .contains(&"user/likes-coffee".to_string())
    );

    // Nothing personal reaches a commit.
    env.ok(&["consolidate", "--yes"]);
    bob.ok(&env, &["consolidate", "--yes"]);
    let tree = env.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(tree.contains("memory/project/db.md"), "{tree}");
    let history = env.git(&["log", "-p", "--all"]);
    for private in ["tea", "coffee", "likes-"] {
        assert!(
            !history.contains(private),
            "{private} reached the repository's history"
        );
    }
    let status = env.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("user/"), "{status}");
}

/// A repository that already holds user/ memories keeps them readable and
/// says so; `user_store: shared` keeps writing there.
#[test]
fn user_memories_already_in_the_repository_are_adopted_with_a_message() {
    let env = Env::new();
    env.write(
        "memory/user/old-pref.md",
        "---\nname: old-pref\ndescription: Prefers tabs\ntype: user\nsource: hand edit\n---\n",
    );
    env.ok(&["record"]);
    let status = env.ok(&["status"]);
    assert!(
        status.contains(
            "memory/user/ in this repository holds 1 memory, read by everyone who clones it"
        ),
        "{status}"
    );
    // Still found, and changed where it is.
    assert_eq!(
        keys(&env.ok(&["--json", "recall", "tabs"])),
        ["user/old-pref"]
    );
    env.ok(&["forget", "user/old-pref", "--reason", "no longer true"]);
    assert!(!env.path("memory/user/old-pref.md").exists());

    // A personal store that cannot be made is named, with what to do.
    let out = env
        .cmd(&["remember", "user/x", "-d", "a preference", "-s", "s"])
        .env("MEMOIR_USER_STORE", "/proc/no-such-store")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("memoir: /proc/no-such-store: cannot create the personal store")
            && err.contains("MEMOIR_USER_STORE"),
        "{err}"
    );

    env.write("memory/config.yaml", "user_store: shared\n");
    let out = env.ok(&[
        "remember",
        "user/shared-pref",
        "-d",
        "The team writes in British English",
        "-s",
        "team decision",
    ]);
    assert_eq!(out, "remembered user/shared-pref\n");
    assert!(env.path("memory/user/shared-pref.md").exists());
}

/// Outside any repository, the personal store stands alone: a `user/`
/// memory is remembered there and recall and list read it; a project
/// memory still needs a store.
#[test]
fn outside_a_repository_the_personal_store_stands_alone() {
    let env = Env::new();
    let plain = env.dir.path().join("plain-folder");
    std::fs::create_dir_all(&plain).expect("folder");
    let run = |args: &[&str]| {
        let out = env.cmd(args).current_dir(&plain).output().expect("run");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, err) = run(&[
        "remember",
        "user/editor",
        "-d",
        "Prefers vim keybindings",
        "-s",
        "said so",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["--json", "recall", "vim keybindings"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(keys(&out), ["user/editor"], "{out}");
    let (_, out, _) = run(&["--json", "list"]);
    assert_eq!(keys(&out), ["user/editor"], "{out}");
    let (code, _, err) = run(&["remember", "project/db", "-d", "Postgres", "-s", "ops"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no memoir store"), "{err}");
}

/// A hook runs with git's `GIT_DIR` naming the team's repository. That
/// names the repository of the stores in its work tree only: the personal
/// store, a repository of its own under HOME, keeps its own local state
/// and writer, and the team's repository gains no state for it.
#[test]
fn git_dir_names_the_team_repository_not_the_personal_stores() {
    let env = Env::new();
    let git_dir = env.path(".git");
    let run = |args: &[&str]| {
        let out = env
            .cmd(args)
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", env.root())
            .output()
            .expect("run");
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["remember", "project/db", "-d", "Postgres 16", "-s", "ops"]);
    let out = run(&[
        "remember",
        "user/likes-tea",
        "-d",
        "Ada drinks green tea",
        "-s",
        "stated by Ada",
    ]);
    assert_eq!(out, "remembered user/likes-tea (in your personal store)\n");
    let personal = env.dir.path().join("home/.local/share/memoir/user");
    let stores = |git: &std::path::Path| {
        std::fs::read_dir(git.join("memoir/stores"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    assert_eq!(stores(&git_dir), 1, "only the team store's state is here");
    assert_eq!(
        stores(&personal.join(".git")),
        1,
        "the personal store's own"
    );
    let hits: Value =
        serde_json::from_str(&run(&["--json", "recall", "what tea does Ada drink"])).expect("json");
    assert_eq!(hits["hits"][0]["key"], "user/likes-tea");
}

/// A personal store that cannot be opened (its git directory gone, or
/// memoir's folder in it not a folder) leaves the repository's answer
/// whole: one warning naming what is wrong, exit 0. The prompt hook
/// above all: failing, it would inject nothing of what the team knows.
#[test]
fn a_broken_personal_store_never_silences_the_repositorys_memory() {
    let env = Env::new();
    env.remember("project/db", "The database is Postgres 16", &[]);
    env.ok(&[
        "remember",
        "user/editor",
        "-d",
        "Ada edits the database schema in helix",
        "-s",
        "stated by Ada",
    ]);
    let personal = env.dir.path().join("home/.local/share/memoir/user");
    let state = personal.join(".git/memoir/stores");
    std::fs::remove_dir_all(&state).expect("state");
    std::fs::write(&state, "not a folder").expect("write");
    let breakages: [(&str, &dyn Fn()); 2] = [
        ("memoir/stores", &|| {}),
        (".git", &|| {
            std::fs::rename(personal.join(".git"), personal.join("git-moved")).expect("move");
            std::fs::write(personal.join(".git"), "gitdir: /nonexistent\n").expect("write");
        }),
    ];
    for (named, breakage) in breakages {
        breakage();
        let (code, out, err) = env.run(&["--json", "recall", "database"]);
        assert_eq!(code, 0, "{named}: {err}");
        assert_eq!(keys(&out), ["project/db"], "{named}: {out}");
        assert_eq!(err.lines().count(), 1, "{named}: {err}");
        assert!(err.contains("leaving your personal store out"), "{err}");
        assert!(
            err.contains(named) || err.contains("git work tree"),
            "{err}"
        );
        let (code, out, _) = env.run(&["--json", "list"]);
        assert_eq!(code, 0, "{named}");
        assert_eq!(keys(&out), ["project/db"], "{named}: {out}");
        let out = env
            .cmd(&["context", "--from-hook"])
            .write_stdin(
                r#"{"hook_event_name":"UserPromptSubmit","prompt":"which database do we use?"}"#,
            )
            .output()
            .expect("hook");
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Postgres 16"), "{named}: {text}");
    }
}
