//! What memoir's git layer says differs from HEAD, against git itself.

use crate::util::Env;

/// A repository whose `memory/` has nested folders and names that sort
/// differently as paths and as tree entries would if git's order were got
/// wrong (`a-b.md`, `a.md`, `a/`, `a0.md`), and an executable.
fn repo() -> Env {
    let env = Env::bare();
    env.git(&["init", "-q"]);
    for rel in [
        "memory/a-b.md",
        "memory/a.md",
        "memory/a/x.md",
        "memory/a/b/c.md",
        "memory/a0.md",
        "memory/log/2026-01-01/w.md",
        "memory/user/.gitkeep",
        "MEMORY.md",
        "other/readme",
    ] {
        env.write(rel, rel);
    }
    env.write("memory/run.sh", "#!/bin/sh\n");
    let path = env.path("memory/run.sh");
    let mut perms = std::fs::metadata(&path).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "start"]);
    env
}

/// Temporary files of an interrupted write are not the store's.
fn keep(name: &str) -> bool {
    !name.starts_with('.') || name == ".gitkeep"
}

fn changed(env: &Env) -> Vec<String> {
    memoir::git::Repo::discover(&env.root())
        .and_then(|repo| repo.changed_paths("MEMORY.md", "memory/", &keep))
        .expect("status")
}

#[test]
fn the_index_tree_of_a_folder_is_the_tree_git_writes() {
    let env = repo();
    let repo = memoir::git::Repo::discover(&env.root()).expect("repo");
    let id = repo.index_tree("memory/").expect("index");
    let expected = env.git(&["rev-parse", "HEAD:memory"]);
    assert_eq!(id.as_deref(), Some(expected.trim()));
    assert_eq!(repo.index_tree("nothing/").expect("index"), None);
}

#[test]
fn changed_paths_are_what_git_would_commit() {
    let env = repo();
    assert!(changed(&env).is_empty(), "{:?}", changed(&env));
    env.write("memory/a/x.md", "changed, and longer than before");
    env.write("memory/new.md", "new");
    env.write(
        "memory/.new.md.memoir-1",
        "an interrupted write's temporary file",
    );
    env.write("other/readme", "not the store's");
    std::fs::remove_file(env.path("memory/a0.md")).expect("rm");
    let expected = ["memory/a/x.md", "memory/a0.md", "memory/new.md"];
    assert_eq!(changed(&env), expected);
    // Staged is not committed: the index no longer says what HEAD has.
    env.git(&["add", "memory/new.md", "memory/a0.md"]);
    env.write("MEMORY.md", "staged, then changed");
    env.git(&["add", "MEMORY.md"]);
    let mut expected = expected.to_vec();
    expected.insert(0, "MEMORY.md");
    assert_eq!(changed(&env), expected);
    env.git(&["add", "memory/a/x.md"]);
    env.git(&["commit", "-qm", "next"]);
    assert!(changed(&env).is_empty(), "{:?}", changed(&env));
    // Out of the index, still as HEAD has it in the folder: no change; out
    // of both: gone.
    env.git(&["rm", "-q", "--cached", "memory/a.md"]);
    assert!(changed(&env).is_empty(), "{:?}", changed(&env));
    std::fs::remove_file(env.path("memory/a.md")).expect("rm");
    assert_eq!(changed(&env), ["memory/a.md"]);
}

#[test]
fn a_conflicted_file_differs_from_head() {
    let env = repo();
    env.git(&["checkout", "-qb", "other"]);
    env.write("memory/new.md", "theirs");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "theirs"]);
    env.git(&["checkout", "-q", "-"]);
    env.write("memory/new.md", "ours");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "ours"]);
    let merge = env.git_output(&["merge", "-q", "other"]);
    assert!(!merge.status.success(), "the merge conflicts: {merge:?}");
    assert_eq!(changed(&env), ["memory/new.md"]);
}
