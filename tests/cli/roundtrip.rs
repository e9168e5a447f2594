//! Any body survives the trip through a `remember` event: written, logged,
//! deleted, rebuilt from the log, byte for byte.

use crate::util::Env;
use memoir::log::replay::Replay;
use memoir::model::event::{new_id, parse_log, Event, Op};
use memoir::model::key::Key;
use memoir::model::memory::{Memory, MemoryType};
use memoir::model::time::Timestamp;
use proptest::prelude::*;

fn body() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        Just("\r\n".to_string()),
        Just("\n".to_string()),
        Just("```".to_string()),
        Just("````````".to_string()),
        Just("---\n".to_string()),
        Just("...\n".to_string()),
        Just("## 10:41:07Z remember project/x · 01M8KE9VDRYT8YR076RY78CYNK\n".to_string()),
        Just("<!-- memoir:end 01M8KE9VDRYT8YR076RY78CYNK -->\n".to_string()),
        Just("<!-- memoir:torn -->\n".to_string()),
        Just("测试命令是什么\n".to_string()),
        Just("trailing spaces   \n".to_string()),
        Just("\u{feff}".to_string()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

fn memory(body: String) -> Memory {
    Memory {
        name: "x".into(),
        description: "a fact".into(),
        kind: MemoryType::Project,
        tags: vec![],
        source: Some("test".into()),
        confidence: Some(1.0),
        created: None,
        updated: None,
        review_by: None,
        expires: None,
        body,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_body_round_trips_through_a_log_entry(body in body()) {
        let content = memory(body.clone()).render();
        let parsed = Memory::parse(&content).expect("memoir's own rendering parses");
        prop_assert_eq!(&parsed.body, &if body.is_empty() || body.ends_with('\n') { body.clone() } else { format!("{body}\n") });
        let time = Timestamp(0);
        let event = Event {
            id: new_id(time).expect("id"),
            op: Op::Remember,
            time,
            actor: "A <a@b>".into(),
            key: Some(Key::parse("project/x").expect("key").0),
            prev: vec![],
            reason: None,
            consumed: vec![],
            redacted: None,
            body: content.clone(),
        };
        let log = event.render() + &event.render();
        let parsed = parse_log(&log).expect("log parses");
        prop_assert_eq!(parsed.events.len(), 2);
        let replay = Replay::new(parsed.events);
        prop_assert_eq!(replay.view(&Key::parse("project/x").expect("key").0), Some(content.as_str()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn any_body_survives_remember_delete_rebuild(body in body()) {
        let env = Env::new();
        let file = env.dir.path().join("body.md");
        std::fs::write(&file, &body).expect("write body");
        let path = file.to_str().expect("utf8").to_string();
        let (code, _, err) = env.remember("project/x", "a fact", &["--body-file", &path]);
        prop_assert_eq!(code, 0, "{}", err);
        let before = env.snapshot();
        std::fs::remove_file(env.path("memory/project/x.md")).expect("rm");
        env.ok(&["rebuild"]);
        prop_assert_eq!(env.snapshot(), before);
        env.ok(&["check"]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Hostile input never panics a parser: it parses or names a line.
    #[test]
    fn parsers_never_panic(text in prop_oneof![
        any::<String>(),
        body().prop_map(|b| format!("---\n{b}")),
        body().prop_map(|b| format!("## 10:41:07Z note · 01M8KE9VDRYT8YR076RY78CYNK\n<!-- memoir {{\"v\":1,\"id\":\"01M8KE9VDRYT8YR076RY78CYNK\",\"op\":\"note\",\"time\":\"2026-11-29T10:41:07.000Z\",\"actor\":\"a\",\"len\":{}}} -->\n````markdown\n{b}", b.len() / 2)),
    ]) {
        let _ = Memory::parse(&text);
        let _ = memoir::model::memory::split(&text);
        if let Err(e) = parse_log(&text) {
            prop_assert!(e.line >= 1);
        }
        let _ = memoir::model::key::slugify(&text);
        let _ = memoir::model::time::Timestamp::parse(&text);
        let _ = memoir::model::config::Config::parse(&text);
        let _ = memoir::policy::secrets::find_secrets(&text);
    }
}
