//! What a memory must hold before memoir writes it ([`check_memory`]), and
//! what a memory file must be for memoir to read it as one
//! ([`validate_file`]).

use super::{check_secrets, refused, refused_secret, MAX_DESCRIPTION_CHARS, MAX_SOURCE_CHARS};
use crate::model::config::Config;
use crate::model::event::{Event, Op};
use crate::model::key::{self, Key};
use crate::model::memory::{split, Memory, MAX_FILE_BYTES};
use crate::store::StoreError;

/// The write policy for a memory about to be written at `rel`, `content`
/// being its rendered file, under the store's `config`. The first rule it
/// breaks is the refusal.
pub(crate) fn check_memory(
    config: &Config,
    m: &Memory,
    content: &str,
    rel: &str,
) -> Result<(), StoreError> {
    check_memory_but_secrets(config, m, content, rel)?;
    check_content_secrets(content, rel)
}

/// The write policy for what a log entry holds, as memoir held it when it
/// logged it: a memory (`e.body`, a memory file at its key, as
/// [`check_memory`]) or a note. An entry appended by hand must not carry
/// into the view every rebuild writes, or into every search, what no
/// `remember` or `note` could (a secret, a control character, a file that
/// does not parse, a note of megabytes). Other entries, and a resolve to
/// nothing (the memory dropped), pass.
pub(crate) fn check_logged(config: &Config, e: &Event) -> Result<(), StoreError> {
    match e.op {
        Op::Remember | Op::Propose => {}
        Op::Resolve if !e.body.is_empty() => {}
        // A note is held to what `note` holds it to (a huge one cost the
        // first query of every clone seconds and gigabytes).
        // (Empty: redacted whole, which `redact` does to a note.)
        Op::Note if !e.body.is_empty() => return super::free_text::check_note(&e.body),
        _ => return Ok(()),
    }
    let Some(key) = &e.key else {
        return Err(refused("format", "", None, "a memory entry without a key"));
    };
    let rel = key.rel_path();
    // A secret first: of everything wrong with it, the one to say.
    check_content_secrets(&e.body, &rel)?;
    let m = Memory::parse(&e.body).map_err(|err| StoreError::invalid(&rel, &err))?;
    check_memory_but_secrets(config, &m, &e.body, &rel)
}

/// [`check_memory`] without the secret scan, for a file whose content the
/// persistent index vouches holds no secret (`Rec::clean`, which
/// `index::cache::holds_no_secret` sets only when
/// [`check_content_secrets`] passes).
pub(crate) fn check_memory_but_secrets(
    config: &Config,
    m: &Memory,
    content: &str,
    rel: &str,
) -> Result<(), StoreError> {
    check_scope(config, rel)?;
    check_description(&m.description, rel)?;
    check_source(m.source.as_deref(), rel)?;
    check_printable(m, rel)?;
    if content.contains('\0') {
        // git takes a file with a NUL for binary: no diff, no merge.
        return Err(refused("control", rel, None, "holds a NUL byte"));
    }
    check_confidence(config, m.confidence, rel)
}

/// Refuses a memory path in a scope the store's config does not list.
fn check_scope(config: &Config, rel: &str) -> Result<(), StoreError> {
    match Key::from_rel_path(rel) {
        Some(k) if !config.has_scope(&k.scope) => Err(refused(
            "scope",
            rel,
            None,
            format!(
                "unknown scope `{}` (configured: {})",
                k.scope,
                config.scopes.join(", ")
            ),
        )),
        _ => Ok(()),
    }
}

/// Refuses a description that is empty, more than one line, or over
/// [`MAX_DESCRIPTION_CHARS`]: it is MEMORY.md's line for the memory.
fn check_description(description: &str, rel: &str) -> Result<(), StoreError> {
    if description.trim().is_empty() {
        return Err(refused(
            "description",
            rel,
            None,
            "the description is empty",
        ));
    }
    if description.contains('\n') || description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(refused(
            "description",
            rel,
            None,
            format!(
                "the description must be one line of at most {MAX_DESCRIPTION_CHARS} characters"
            ),
        ));
    }
    Ok(())
}

/// Refuses a memory with no source (nothing says why it can be trusted)
/// or one over [`MAX_SOURCE_CHARS`].
fn check_source(source: Option<&str>, rel: &str) -> Result<(), StoreError> {
    match source.filter(|s| !s.trim().is_empty()) {
        None => Err(refused(
            "source",
            rel,
            None,
            "a source is required: say why this can be trusted",
        )),
        Some(s) if s.chars().count() > MAX_SOURCE_CHARS => Err(refused(
            "source",
            rel,
            None,
            format!("the source is longer than {MAX_SOURCE_CHARS} characters"),
        )),
        Some(_) => Ok(()),
    }
}

/// Refuses a control character in a one-line field. They are printed on
/// terminals: no escape sequence, no bell, no bidirectional override.
fn check_printable(m: &Memory, rel: &str) -> Result<(), StoreError> {
    let one_line = [
        ("description", Some(&m.description)),
        ("source", m.source.as_ref()),
    ];
    let tags = m.tags.iter().map(|t| ("tags", Some(t)));
    for (field, text) in one_line.into_iter().chain(tags) {
        if text.is_some_and(|t| t.chars().any(is_unprintable)) {
            return Err(refused(
                "control",
                rel,
                None,
                format!("`{field}` holds a control character"),
            ));
        }
    }
    Ok(())
}

/// A character a one-line field must not hold: a control character (a tab
/// aside) or a bidirectional override.
fn is_unprintable(c: char) -> bool {
    (c.is_control() && c != '\t') || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Refuses a confidence below the store's minimum (none given is 1).
fn check_confidence(config: &Config, confidence: Option<f64>, rel: &str) -> Result<(), StoreError> {
    let confidence = confidence.unwrap_or(1.0);
    if confidence < config.min_confidence {
        return Err(refused(
            "confidence",
            rel,
            None,
            format!(
                "confidence {confidence} is below the minimum of {}",
                config.min_confidence
            ),
        ));
    }
    Ok(())
}

/// Refuses a tag `remember` was given that is empty or more than a line
/// (a frontmatter list item either way would not read back as given).
pub(crate) fn check_tags(tags: &[String]) -> Result<(), StoreError> {
    if tags.iter().any(|t| t.trim().is_empty() || t.contains('\n')) {
        return Err(refused(
            "tags",
            "--tags",
            None,
            "every tag must be a non-empty one-line string",
        ));
    }
    Ok(())
}

/// Refuses a rendered memory over [`MAX_FILE_BYTES`]: memoir would not
/// read the file back.
pub(crate) fn check_size(content: &str, rel: &str) -> Result<(), StoreError> {
    if content.len() > MAX_FILE_BYTES {
        return Err(refused(
            "size",
            rel,
            None,
            format!(
                "the memory is {} bytes, more than the limit of {MAX_FILE_BYTES}",
                content.len()
            ),
        ));
    }
    Ok(())
}

/// Refuses a memory file's (or MEMORY.md's) content that holds a secret,
/// in its text or in its frontmatter once the YAML is read.
pub(crate) fn check_content_secrets(content: &str, rel: &str) -> Result<(), StoreError> {
    check_secrets(content, rel)?;
    check_parsed_secrets(content, rel)
}

/// Refuses a secret the frontmatter's YAML only makes once parsed: a
/// double-quoted value continued across lines by an escaped line break, a
/// `!!binary` block, any escape or folding the scan of the text does not
/// undo. Every string the YAML holds is scanned as readers will see it.
pub(crate) fn check_parsed_secrets(content: &str, rel: &str) -> Result<(), StoreError> {
    let Ok(split) = split(content) else {
        return Ok(());
    };
    // Only escapes (`\`) and tags (`!!binary`, `!binary`) make text the
    // scan of the file cannot see; a frontmatter without either is not
    // parsed again.
    if !split.yaml.contains(['\\', '!']) {
        return Ok(());
    }
    let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(split.yaml) else {
        return Ok(());
    };
    let mut texts = Vec::new();
    yaml_strings(&value, &mut texts);
    // The frontmatter's first line: where the parsed text came from, as
    // near as a line can say.
    let line = content[..split.yaml_start].matches('\n').count() + 1;
    for text in texts {
        if let Some(f) = super::secrets::find_secrets(&text).first() {
            return Err(refused_secret(
                f,
                rel,
                line,
                "the frontmatter holds a secret once its YAML is read",
            ));
        }
    }
    Ok(())
}

/// Every string (and `!!binary` value, decoded) in a YAML value.
fn yaml_strings(value: &serde_yaml::Value, out: &mut Vec<String>) {
    use serde_yaml::Value;
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Sequence(items) => items.iter().for_each(|v| yaml_strings(v, out)),
        Value::Mapping(m) => m.iter().for_each(|(k, v)| {
            yaml_strings(k, out);
            yaml_strings(v, out);
        }),
        Value::Tagged(t) => {
            if let (true, Value::String(s)) = (t.tag == "binary", &t.value) {
                out.extend(super::secrets::base64_text(s));
            }
            yaml_strings(&t.value, out);
        }
        _ => {}
    }
}

/// Parses a memory file and checks that its name belongs to its path: the
/// path is `memory/<scope>/<slug>.md`, the slug is in normal form, and the
/// name normalizes to it (two files must never hold one memory).
pub(crate) fn validate_file(content: &str, rel: &str) -> Result<Memory, StoreError> {
    let m = Memory::parse(content).map_err(|e| StoreError::invalid(rel, &e))?;
    let key = file_key(rel)?;
    check_name(&m.name, &key.slug, rel)?;
    Ok(m)
}

/// The key a memory file's path names, if it is a memory path whose file
/// name is a slug.
fn file_key(rel: &str) -> Result<Key, StoreError> {
    let key = Key::from_rel_path(rel).ok_or_else(|| StoreError::Invalid {
        path: rel.to_string(),
        line: None,
        message: "not a memory path (memory/<scope>/<slug>.md)".into(),
    })?;
    if !key::is_slug(&key.slug) {
        let hint = key::slugify(&key.slug)
            .map(|s| format!(" (rename it {s}.md)"))
            .unwrap_or_default();
        return Err(StoreError::Invalid {
            path: rel.to_string(),
            line: None,
            message: format!("file name `{}` is not a slug{hint}", key.slug),
        });
    }
    Ok(key)
}

/// Refuses a name that does not normalize to the file's slug. The name
/// is on line 2, the frontmatter's first field as memoir renders it.
fn check_name(name: &str, slug: &str, rel: &str) -> Result<(), StoreError> {
    match key::slugify(name) {
        Ok(s) if s == slug => Ok(()),
        Ok(s) => Err(StoreError::Invalid {
            path: rel.to_string(),
            line: Some(2),
            message: format!("name normalizes to `{s}`, but the file is `{slug}.md`"),
        }),
        Err(e) => Err(refused("name", rel, Some(2), e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory::MemoryType;
    use crate::store::Store;

    /// A fresh store in a temporary folder, with `config` as its
    /// `memory/config.yaml` when given.
    fn store(config: Option<&str>) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("temp dir");
        crate::store::init(dir.path()).expect("init");
        if let Some(c) = config {
            std::fs::write(dir.path().join("memory/config.yaml"), c).expect("config");
        }
        let store = Store::open(dir.path()).expect("open");
        (dir, store)
    }

    fn memory() -> Memory {
        Memory {
            name: "test command".into(),
            description: "Run the tests with cargo test".into(),
            kind: MemoryType::Project,
            tags: vec!["build".into()],
            source: Some("stated by the user".into()),
            confidence: Some(0.9),
            created: None,
            updated: None,
            review_by: None,
            expires: None,
            body: "cargo test\n".into(),
        }
    }

    const REL: &str = "memory/project/test-command.md";

    /// The rule and message of a refusal (or a description of what it was).
    fn refusal(r: Result<(), StoreError>) -> (String, String) {
        match r {
            Err(StoreError::Refused { rule, message, .. }) => (rule, message),
            other => (format!("not refused: {other:?}"), String::new()),
        }
    }

    fn check(store: &Store, m: &Memory) -> (String, String) {
        refusal(check_memory(&store.config, m, &m.render(), REL))
    }

    /// A token split by a YAML escaped line break: only the parsed value
    /// joins it (assembled, so this file holds none).
    fn escaped_token_file() -> (String, String) {
        let token = ["ghp_", "aB3dE5fG7hI9jK1lM", "3nO5pQ7rS9tU1vW3xY5"].concat();
        let (head, tail) = token.split_at(17);
        let words = "word ".repeat(35);
        let content = format!(
            "---\nname: test command\ndescription: \"{words}{head}\\\n  {tail}\"\ntype: project\nsource: s\n---\nbody\n"
        );
        (content, token)
    }

    #[test]
    fn a_complete_memory_passes() {
        let (_dir, store) = store(None);
        assert!(check_memory(&store.config, &memory(), &memory().render(), REL).is_ok());
    }

    #[test]
    fn a_memory_without_a_source_is_refused() {
        let (_dir, store) = store(None);
        for source in [None, Some(" \t".to_string())] {
            let m = Memory { source, ..memory() };
            let (rule, message) = check(&store, &m);
            assert_eq!(rule, "source");
            assert!(message.starts_with("a source is required"), "{message}");
        }
        let m = Memory {
            source: Some("s".repeat(MAX_SOURCE_CHARS + 1)),
            ..memory()
        };
        assert_eq!(check(&store, &m).0, "source");
    }

    #[test]
    fn a_confidence_below_the_minimum_is_refused() {
        let (_dir, store) = store(Some("min_confidence: 0.95\n"));
        let (rule, message) = check(&store, &memory());
        assert_eq!(rule, "confidence");
        assert_eq!(message, "confidence 0.9 is below the minimum of 0.95");
        // None given counts as certain.
        let m = Memory {
            confidence: None,
            ..memory()
        };
        assert!(check_memory(&store.config, &m, &m.render(), REL).is_ok());
    }

    #[test]
    fn a_description_must_be_one_line_within_the_limit() {
        let (_dir, store) = store(None);
        for (description, message) in [
            (" ".to_string(), "the description is empty"),
            ("a\nb".to_string(), "the description must be one line"),
            (
                "d".repeat(MAX_DESCRIPTION_CHARS + 1),
                "the description must be one line",
            ),
        ] {
            let m = Memory {
                description,
                ..memory()
            };
            let (rule, got) = check(&store, &m);
            assert_eq!(rule, "description");
            assert!(got.starts_with(message), "{got}");
        }
    }

    #[test]
    fn an_unknown_scope_a_control_character_or_a_nul_is_refused() {
        let (_dir, store) = store(None);
        let m = memory();
        let (rule, message) = refusal(check_memory(
            &store.config,
            &m,
            &m.render(),
            "memory/team/x.md",
        ));
        assert_eq!(rule, "scope");
        assert_eq!(
            message,
            "unknown scope `team` (configured: user, project, task)"
        );
        let m = Memory {
            tags: vec!["a\u{1b}[31m".into()],
            ..memory()
        };
        assert_eq!(
            check(&store, &m),
            ("control".into(), "`tags` holds a control character".into())
        );
        // A tab is printable; a bidirectional override is not.
        let tab = Memory {
            description: "a\tb".into(),
            ..memory()
        };
        assert!(check_memory(&store.config, &tab, &tab.render(), REL).is_ok());
        let bidi = Memory {
            source: Some("a\u{202E}b".into()),
            ..memory()
        };
        assert_eq!(check(&store, &bidi).1, "`source` holds a control character");
        let nul = memory().render().replace("cargo test\n", "cargo\0test\n");
        let (rule, message) = refusal(check_memory(&store.config, &memory(), &nul, REL));
        assert_eq!(
            (rule.as_str(), message.as_str()),
            ("control", "holds a NUL byte")
        );
    }

    #[test]
    fn a_secret_only_the_parsed_yaml_shows_is_refused() {
        let (content, token) = escaped_token_file();
        // The text alone passes: the parse is what joins the token.
        assert!(check_secrets(&content, REL).is_ok());
        let Err(StoreError::Refused {
            rule,
            line,
            message,
            ..
        }) = check_content_secrets(&content, REL)
        else {
            panic!("not refused");
        };
        assert!(rule.starts_with("secret:"), "{rule}");
        assert_eq!(line, Some(2));
        assert!(
            message.starts_with("the frontmatter holds a secret once its YAML is read"),
            "{message}"
        );
        assert!(!message.contains(&token));
        // check_memory runs it on the content it is given.
        let (_dir, store) = store(None);
        let (rule, _) = refusal(check_memory(&store.config, &memory(), &content, REL));
        assert!(rule.starts_with("secret:"), "{rule}");
    }

    #[test]
    fn a_binary_value_is_decoded_before_the_scan() {
        // A local `!binary` tag stays a tag once parsed (serde_yaml reads
        // `!!binary` as a plain string, which the scan of the text decodes).
        let binary = "---\nname: b\ndescription: d\ntype: project\nsource: s\nextra: !binary |\n  Z2hwX2FCM2RFNWZHN2hJOWpL\n  MWxNM25PNXBRN3JTOXRVMXZXM3hZNQ==\n---\n";
        let (rule, message) = refusal(check_parsed_secrets(binary, "memory/project/b.md"));
        assert!(rule.starts_with("secret:"), "{rule}");
        assert!(message.starts_with("the frontmatter holds"), "{message}");
    }

    #[test]
    fn tags_must_be_non_empty_lines_and_a_memory_within_the_file_limit() {
        assert!(check_tags(&["a".into(), "b c".into()]).is_ok());
        for bad in ["", " ", "a\nb"] {
            assert_eq!(refusal(check_tags(&["a".into(), bad.into()])).0, "tags");
        }
        assert!(check_size(&"a".repeat(MAX_FILE_BYTES), REL).is_ok());
        assert_eq!(
            refusal(check_size(&"a".repeat(MAX_FILE_BYTES + 1), REL)),
            (
                "size".into(),
                format!(
                    "the memory is {} bytes, more than the limit of {MAX_FILE_BYTES}",
                    MAX_FILE_BYTES + 1
                )
            )
        );
    }

    /// What `validate_file` says about a file: the kind of error, its line
    /// and message.
    fn invalid(content: &str, rel: &str) -> (&'static str, Option<usize>, String) {
        match validate_file(content, rel) {
            Ok(_) => ("ok", None, String::new()),
            Err(e) if e.is_malformed() => (
                "invalid",
                e.location().and_then(|(_, line)| line),
                e.detail(),
            ),
            Err(StoreError::Refused { line, message, .. }) => ("refused", line, message),
            Err(e) => ("other", None, e.to_string()),
        }
    }

    #[test]
    fn a_file_whose_name_is_not_its_slug_is_invalid() {
        let content = memory().render();
        assert_eq!(invalid(&content, REL).0, "ok");
        let m = validate_file(&content, REL).expect("valid");
        assert_eq!(m, Memory::parse(&content).expect("parses"));
        assert_eq!(
            invalid(&content, "memory/project/other.md"),
            (
                "invalid",
                Some(2),
                "name normalizes to `test-command`, but the file is `other.md`".into()
            )
        );
        assert_eq!(
            invalid(&content, "memory/project/Test-Command.md"),
            (
                "invalid",
                None,
                "file name `Test-Command` is not a slug (rename it test-command.md)".into()
            )
        );
        assert_eq!(
            invalid(&content, "memory/project/deep/test-command.md"),
            (
                "invalid",
                None,
                "not a memory path (memory/<scope>/<slug>.md)".into()
            )
        );
        let unsafe_name = content.replace("name: test command", "name: a\u{200B}b");
        let (kind, line, _) = invalid(&unsafe_name, "memory/project/ab.md");
        assert_eq!((kind, line), ("refused", Some(2)));
    }
}
