//! Many writers at once: the store lock serializes them, nothing is lost.

use crate::util::Env;
use std::collections::HashMap;

#[test]
fn eight_processes_times_a_hundred_notes_land_exactly_once() {
    let env = Env::new();
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let procs = 8;
    let per = 100;
    let script = format!(
        "for i in $(seq 1 {per}); do \"$MEMOIR\" note \"writer $W note $i\" || exit 1; done"
    );
    let children: Vec<_> = (0..procs)
        .map(|w| {
            let vars = [("MEMOIR", exe.display().to_string()), ("W", w.to_string())];
            env.spawn(std::path::Path::new("sh"), &["-c", &script], &vars)
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    let text = env.log_text();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        if line.starts_with("writer ") {
            *seen.entry(line.to_string()).or_default() += 1;
        }
    }
    assert_eq!(seen.len(), procs * per);
    assert!(seen.values().all(|&n| n == 1));
    // Every log parses, and the notes are all there as events.
    let (code, _, err) = env.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text.matches("\"op\":\"note\"").count(), procs * per);
    assert_eq!(text.matches("<!-- memoir:end ").count(), procs * per);
}

#[test]
fn concurrent_remembers_keep_the_index_and_views_consistent() {
    let env = Env::new();
    let exe = assert_cmd::cargo::cargo_bin("memoir");
    let children: Vec<_> = (0..6)
        .map(|w| {
            let key = format!("project/fact-{w}");
            let description = format!("independent fact number {w} about zone {w}");
            env.spawn(
                &exe,
                &["remember", &key, "-d", &description, "-s", "test"],
                &[],
            )
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    env.ok(&["check"]);
    let index = env.read("MEMORY.md");
    for w in 0..6 {
        assert!(
            index.contains(&format!("memory/project/fact-{w}.md")),
            "{index}"
        );
    }
}

#[test]
fn a_held_lock_times_out_with_exit_5_naming_the_holder() {
    use fs2::FileExt;
    let env = Env::new();
    env.ok(&["note", "make the state dir"]);
    let dir = env.state_dir();
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("lock"))
        .expect("lock file");
    lock.lock_exclusive().expect("lock");
    std::fs::write(dir.join("lock"), "4242").expect("pid");
    let err = env.fails(&["--lock-timeout", "0.2", "note", "blocked"], 5);
    assert!(err.contains("pid 4242"), "{err}");
    assert!(!env.log_text().contains("blocked"));
}
