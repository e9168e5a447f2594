//! What each fuzz target asserts of one input, shared by the targets
//! (`fuzz_targets/*.rs`) and the replay of saved crash inputs
//! (`tests/cli/fuzz_regressions.rs`), so that both call the same library
//! functions the same way. Each function panics on a violation.

use memoir::model::event::parse_log;
use memoir::model::key::{check_scope, is_slug, slugify, Key, MAX_SLUG_BYTES, MAX_SLUG_CHARS};
use memoir::model::memory::{split, Memory};
use memoir::model::time::Timestamp;

/// `memory`: `split` and `Memory::parse` never panic; the split's parts are
/// slices of the input; a memory that parses re-renders to a file that
/// parses to the same fields, up to what `render` normalizes (times to
/// whole seconds, a final newline on a non-empty body).
pub fn memory(text: &str) {
    if let Ok(sp) = split(text) {
        assert!(sp.yaml_start <= sp.yaml_end && sp.yaml_end <= text.len());
        assert_eq!(&text[sp.yaml_start..sp.yaml_end], sp.yaml);
        assert!(text.ends_with(sp.body));
    }
    let Ok(m) = Memory::parse(text) else {
        return;
    };
    let rendered = m.render();
    let again = match Memory::parse(&rendered) {
        Ok(again) => again,
        Err(e) => panic!("a rendered memory does not parse: {e}\n{rendered:?}"),
    };
    let mut expected = m.clone();
    let secs = |t: Timestamp| Timestamp(t.0 - t.0.rem_euclid(1000));
    expected.created = m.created.map(secs);
    expected.updated = m.updated.map(secs);
    if !expected.body.is_empty() && !expected.body.ends_with('\n') {
        expected.body.push('\n');
    }
    assert_eq!(again, expected, "{rendered:?}");
}

/// `log`: `parse_log` never panics, and every event it reads renders to an
/// entry that parses back to the same event (docs/format.md: "any content
/// round-trips byte for byte"), alone and as a whole log.
pub fn log(text: &str) {
    let Ok(parsed) = parse_log(text) else {
        return;
    };
    let mut all = String::new();
    for e in &parsed.events {
        let rendered = e.render();
        let again = match parse_log(&rendered) {
            Ok(p) => p,
            Err(err) => panic!("a rendered event does not parse: {err}\n{rendered:?}"),
        };
        assert_eq!(again.events.len(), 1, "{rendered:?}");
        assert_eq!(again.events[0], *e, "{rendered:?}");
        assert!(again.torn.is_empty() && !again.torn_tail, "{rendered:?}");
        all.push_str(&rendered);
    }
    let again = parse_log(&all).expect("rendered events parse as a log");
    assert_eq!(again.events, parsed.events);
}

/// `slug`: `slugify`, `is_slug` and `Key::parse` never panic; a slug is in
/// normal form (`is_slug`; slugify of it is itself), has no `-` at either
/// end, at most `MAX_SLUG_CHARS` characters and `MAX_SLUG_BYTES` bytes
/// (docs/format.md, slug algorithm step 4); a parsed key's path maps back
/// to it.
pub fn slug(text: &str) {
    let _ = is_slug(text);
    if let Ok(slug) = slugify(text) {
        assert!(
            slug.chars().count() <= MAX_SLUG_CHARS,
            "{slug:?} is longer than {MAX_SLUG_CHARS} characters"
        );
        assert!(
            slug.len() <= MAX_SLUG_BYTES,
            "{slug:?} is longer than {MAX_SLUG_BYTES} bytes"
        );
        assert_eq!(
            slugify(&slug).as_deref(),
            Ok(slug.as_str()),
            "slugify is not idempotent on {text:?}"
        );
        assert!(is_slug(&slug), "{slug:?} (from {text:?}) is not a slug");
        assert!(!slug.starts_with('-') && !slug.ends_with('-'), "{slug:?}");
    }
    if let Ok((key, name)) = Key::parse(text) {
        assert!(check_scope(&key.scope).is_ok());
        assert_eq!(slugify(&name).as_deref(), Ok(key.slug.as_str()));
        assert!(is_slug(&key.slug), "{key} (from {text:?})");
        assert_eq!(Key::from_rel_path(&key.rel_path()), Some(key.clone()));
    }
}

/// `secrets`: `find_secrets` never panics and reports lines that exist, one
/// finding a line at most, in order. (Its time is bounded by the caller.)
pub fn secrets(text: &str) {
    let found = memoir::policy::secrets::find_secrets(text);
    let lines = text.lines().count();
    for pair in found.windows(2) {
        assert!(pair[0].line < pair[1].line, "{found:?}");
    }
    for f in &found {
        assert!(f.line >= 1 && f.line <= lines, "{f:?} of {lines} lines");
    }
}

/// `merge`: the input is split at NUL into base, ours and theirs (an empty
/// base is no base). The merge drivers never panic; the memory merge is one
/// of its inputs, whichever side is ours; reducing conflicts to our side
/// leaves no conflict start.
pub fn merge(text: &str) {
    let mut parts = text.splitn(3, '\0');
    let base = parts.next().unwrap_or("");
    let ours = parts.next().unwrap_or("");
    let theirs = parts.next().unwrap_or("");
    let base_opt = Some(base).filter(|b| !b.is_empty());
    let m = memoir::integration::merge::memory(base_opt, ours, theirs);
    assert!(
        m == ours || m == theirs || m == base,
        "not one of the inputs"
    );
    assert_eq!(
        memoir::integration::merge::memory(base_opt, theirs, ours),
        m,
        "depends on which side is ours"
    );
    let _ = memoir::integration::merge::index(base, ours, theirs);
    for t in [base, ours, theirs] {
        let _ = memoir::model::text::has_conflict_markers(t);
        // MEMORY.md after a text merge: the block settled, the team's
        // conflicts kept; every conflict left is one it names.
        let (settled, lines) =
            memoir::integration::merge::settled_memory_md(t, "- [a](memory/project/a.md) a\n");
        assert!(
            lines.iter().all(|&l| settled
                .lines()
                .nth(l - 1)
                .is_some_and(|x| x.starts_with("<<<<<<< "))),
            "a named conflict is no conflict start"
        );
    }
}

/// `interop`: the parsers of other tools' formats and of the MCP wire never
/// panic. A Claude Code topic file that reads writes back to one that reads
/// the same (its body ending in a newline); every OpenClaw note fits a
/// note; a Claude Code session note fits a note; any line is one MCP
/// message answered with JSON-RPC (or a notification, unanswered).
pub fn interop(text: &str) {
    use memoir::interop::{claude_code, openclaw};
    if let Ok(t) = claude_code::parse_topic("f.md", text) {
        let again = claude_code::parse_topic("f.md", &claude_code::render_topic(&t))
            .unwrap_or_else(|e| panic!("a rendered topic does not read: {e:?}"));
        let mut expected = t.clone();
        if !expected.body.ends_with('\n') {
            expected.body.push('\n');
        }
        expected.body = expected.body.trim_start_matches(['\n', '\r']).to_string();
        assert_eq!(again.title, expected.title);
        assert_eq!(again.description, expected.description);
        assert_eq!(again.kind, expected.kind);
        assert_eq!(again.memoir_key, expected.memoir_key);
    }
    for note in openclaw::daily_notes(text).into_iter().map(|e| e.text) {
        assert!(
            note.len() <= memoir::policy::MAX_NOTE_BYTES,
            "a note of {} bytes",
            note.len()
        );
    }
    let _ = openclaw::curated(text);
    let _ = openclaw::directives(text);
    let _ = openclaw::daily_note_date(text);
    if let Some(note) =
        memoir::integration::claude_code::session_note(text, "s", "r").map(|n| n.text)
    {
        assert!(note.len() <= memoir::policy::MAX_NOTE_BYTES);
    }
    mcp(text);
}

/// The MCP server over `text` as a client's stream of messages, with a
/// tool of every argument kind: every answer is one JSON-RPC line, and a
/// call whose arguments pass the schema reaches the handler with them.
pub fn mcp(text: &str) {
    use memoir::mcp::{Kind, Param};
    struct Nothing;
    impl memoir::mcp::Handler for Nothing {
        fn call(
            &mut self,
            _: &memoir::mcp::ToolSpec,
            args: memoir::mcp::Arguments,
        ) -> memoir::mcp::ToolOutcome {
            memoir::mcp::ToolOutcome {
                document: serde_json::json!({ "args": args.len() }),
                text: None,
                is_error: false,
            }
        }
    }
    let info = memoir::mcp::ServerInfo {
        name: "memoir".into(),
        version: "0".into(),
        instructions: String::new(),
    };
    let param = |name, kind, required| Param {
        name,
        kind,
        required,
        description: "d",
    };
    let tool = memoir::mcp::ToolSpec {
        name: "t",
        title: "T",
        description: "d",
        effect: memoir::mcp::Effect::ReadOnly,
        output: serde_json::json!({ "type": "object" }),
        params: vec![
            param("q", Kind::Text { non_empty: true }, true),
            param("f", Kind::Flag, false),
            param("n", Kind::Number { min: 0.0, max: 1.0 }, false),
            param("i", Kind::Integer { min: 1, max: 50 }, false),
            param("l", Kind::Texts, false),
            param("o", Kind::OneOf(vec!["a".into(), "b".into()]), false),
        ],
    };
    let mut server = memoir::mcp::Server::new(info, vec![tool], Nothing);
    let mut out = Vec::new();
    server
        .serve(text.as_bytes(), &mut out)
        .expect("writing to memory");
    for line in String::from_utf8(out).expect("UTF-8").lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each answer is JSON");
        assert_eq!(v["jsonrpc"], "2.0");
    }
}

/// A Claude Code hook's payload: read or refused, never a panic, and a
/// payload read is what serde reads of the same first value.
pub fn hook(data: &[u8]) {
    use memoir::integration::hook_input::HookInput;
    if let Ok(Some(h)) = HookInput::read(data) {
        let _ = h.is_prompt();
        let first = serde_json::Deserializer::from_slice(data)
            .into_iter::<HookInput>()
            .next();
        assert!(matches!(first, Some(Ok(ref again)) if *again == h));
    }
}
