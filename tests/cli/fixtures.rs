//! The checked-in fixtures: files other tools write, and a log memoir wrote.

use crate::util::Env;
use memoir::model::event::{parse_log, Op};
use memoir::model::memory::Memory;

fn fixture(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn claude_code_memory_files_are_adopted_as_they_are() {
    let env = Env::new();
    for name in ["user-prefers-terse-answers.md", "windows-file.md"] {
        env.write(
            &format!("memory/user/{name}"),
            fixture(&format!("claude-code/{name}")),
        );
    }
    let out = env.ok(&["record"]);
    assert!(
        out.contains("remember user/user-prefers-terse-answers: added"),
        "{out}"
    );
    assert!(out.contains("remember user/windows-file: added"), "{out}");
    env.ok(&["check"]);
    let file = env.read("memory/user/windows-file.md");
    assert!(
        file.contains("\r\nsource: hand edit by Ada <ada@example.com>\r\n"),
        "{file:?}"
    );
    assert!(file.ends_with("\r\n\r\nSee the wiki."));
    let listed = env.ok(&["list", "--type", "feedback"]);
    assert!(
        listed.contains("user/user-prefers-terse-answers"),
        "{listed}"
    );
}

#[test]
fn a_log_written_by_memoir_parses_and_its_memories_are_valid() {
    let parsed = parse_log(&fixture("log/example.md")).expect("fixture log parses");
    assert!(parsed.events.len() >= 5);
    assert!(!parsed.torn_tail);
    for e in parsed.events.iter().filter(|e| e.op == Op::Remember) {
        Memory::parse(&e.body).unwrap_or_else(|err| panic!("{}: {err}", e.id));
    }
}
