//! Memory identity: a scope folder and a slug.
//!
//! A memory is identified by `(scope, slug)`, its folder and file stem. A
//! `name` normalizes to its slug by [`slugify`]; two names with the same slug
//! are the same memory. The algorithm is normative (see `docs/format.md`).

use std::fmt;
use unicode_normalization::UnicodeNormalization;

/// The longest slug, in characters; longer names are cut at a character.
pub const MAX_SLUG_CHARS: usize = 64;

/// The longest slug, in bytes of UTF-8. A file name holds at most 255
/// bytes on common file systems, and memoir's temporary name for a view,
/// `.<slug>.md.memoir-<pid>-<n>`, adds up to 43: 64 characters of a script
/// of 4-byte characters would not fit.
pub const MAX_SLUG_BYTES: usize = 200;

/// The longest accepted name, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Folders under `memory/` that are never a scope.
pub const RESERVED_SCOPES: &[&str] = &["log"];

/// A memory's identity: `scope/slug`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The scope folder (`user`, `project`, `task`, or a configured one).
    pub scope: String,
    /// The file stem.
    pub slug: String,
}

/// Why a name or key is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key has no `/` between scope and name.
    #[error("`{0}` is not of the form <scope>/<name>")]
    NoScope(String),
    /// The name contains a character that is unsafe in a path or invisible.
    #[error("name `{0}` contains {1}")]
    Unsafe(String, &'static str),
    /// Nothing is left once the name is normalized.
    #[error("name `{0}` has no letters or digits")]
    Empty(String),
    /// The name is longer than [`MAX_NAME_CHARS`].
    #[error("name is longer than {MAX_NAME_CHARS} characters")]
    TooLong,
    /// The slug is a device name reserved on Windows.
    #[error("name `{0}` is a reserved device name")]
    Reserved(String),
    /// The scope is not a plain folder name.
    #[error("scope `{0}` is not a valid scope name")]
    BadScope(String),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.scope, self.slug)
    }
}

/// Is `c` a character that may not appear in a name: control, bidi
/// override/isolate, or other invisible formatting?
fn forbidden_char(c: char) -> Option<&'static str> {
    if c.is_control() {
        return Some("a control character");
    }
    match c {
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some("a bidirectional control character"),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Some("an invisible character"),
        '/' | '\\' => Some("a path separator"),
        _ => None,
    }
}

/// Normalizes a name to its slug: NFC, lowercase, letters and digits of any
/// script kept, every other run of characters one `-`, no leading or
/// trailing `-`, at most [`MAX_SLUG_CHARS`] characters.
///
/// Validates the name as it goes: see [`KeyError`].
pub fn slugify(name: &str) -> Result<String, KeyError> {
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(KeyError::TooLong);
    }
    if let Some(what) = name.chars().find_map(forbidden_char) {
        return Err(KeyError::Unsafe(name.to_string(), what));
    }
    let mut slug = String::new();
    let mut pending_dash = false;
    let mut count = 0;
    // Would `extra` more characters of `bytes` bytes still fit?
    let fits = |slug: &String, count: usize, extra: usize, bytes: usize| {
        count + extra <= MAX_SLUG_CHARS && slug.len() + bytes <= MAX_SLUG_BYTES
    };
    for c in name.nfc().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            if pending_dash && !slug.is_empty() {
                // A dash only with a character after it: never trailing.
                if !fits(&slug, count, 2, 1 + c.len_utf8()) {
                    break;
                }
                slug.push('-');
                count += 1;
            }
            pending_dash = false;
            if !fits(&slug, count, 1, c.len_utf8()) {
                break;
            }
            slug.push(c);
            count += 1;
        } else {
            pending_dash = true;
        }
    }
    if slug.is_empty() {
        return Err(KeyError::Empty(name.to_string()));
    }
    if is_reserved_device(&slug) {
        return Err(KeyError::Reserved(name.to_string()));
    }
    Ok(slug)
}

/// Whether `text`'s slug fits the slug's limits whole (nothing cut).
fn slug_fits(text: &str) -> bool {
    let (mut chars, mut bytes, mut dash) = (0usize, 0usize, false);
    for c in text.nfc().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            if dash && chars > 0 {
                chars += 1;
                bytes += 1;
            }
            dash = false;
            chars += 1;
            bytes += c.len_utf8();
        } else {
            dash = true;
        }
    }
    chars <= MAX_SLUG_CHARS && bytes <= MAX_SLUG_BYTES
}

/// The words of `text` to name a memory by, never a word cut in two: all
/// of it when its slug fits the limits, else its longest run of first
/// clauses that fits (cut at `,` `;` `:` `.` `!` `?`, or before `(` or a
/// dash between words), else its longest run of first words that fits.
/// A single word too long for a slug is left to [`slugify`] to cut.
pub fn phrase_name(text: &str) -> &str {
    let text = text.trim();
    if slug_fits(text) {
        return text;
    }
    let clause_ends = text.char_indices().filter_map(|(i, c)| {
        let next = text[i + c.len_utf8()..].chars().next();
        match c {
            ',' | ';' | ':' | '.' | '!' | '?' if next.is_none_or(char::is_whitespace) => Some(i),
            '(' | '—' | '–' => Some(i),
            '-' if text[..i].ends_with(' ') && next.is_some_and(char::is_whitespace) => Some(i),
            _ => None,
        }
    });
    let fitting = |ends: &mut dyn Iterator<Item = usize>| {
        ends.map(|i| text[..i].trim_end())
            .filter(|p| p.chars().any(char::is_alphanumeric))
            .take_while(|p| slug_fits(p))
            .last()
    };
    if let Some(p) = fitting(&mut clause_ends.into_iter()) {
        return p;
    }
    // A word ends where a letter or digit is followed by anything else.
    let word_ends = text.char_indices().filter_map(|(i, c)| {
        let next = text[i + c.len_utf8()..].chars().next()?;
        (c.is_alphanumeric() && !next.is_alphanumeric()).then_some(i + c.len_utf8())
    });
    fitting(&mut word_ends.into_iter()).unwrap_or(text)
}

fn is_reserved_device(slug: &str) -> bool {
    let base = slug.split('-').next().unwrap_or(slug);
    matches!(base, "con" | "prn" | "aux" | "nul")
        || (base.len() == 4
            && (base.starts_with("com") || base.starts_with("lpt"))
            && base.as_bytes()[3].is_ascii_digit())
}

/// The slug `<slug>-<n>` (a second memory beside one), with `slug` cut so
/// that the suffix always fits the limits.
pub fn numbered(slug: &str, n: usize) -> Result<String, KeyError> {
    let suffix = format!("-{n}");
    let mut base = slug.to_string();
    while base.chars().count() + suffix.len() > MAX_SLUG_CHARS
        || base.len() + suffix.len() > MAX_SLUG_BYTES
    {
        base.pop();
    }
    slugify(&format!("{}{suffix}", base.trim_end_matches('-')))
}

/// The first key `<slug>-N` beside `key` in its scope (N from 2, see
/// [`numbered`]) that `taken` does not claim; `None` when every N below
/// 10,000 is taken. What is taken is the caller's to say: a store has
/// memories, files and keys already handed out.
pub fn first_free_numbered(
    key: &Key,
    mut taken: impl FnMut(&Key) -> bool,
) -> Result<Option<Key>, KeyError> {
    for n in 2..10_000 {
        let k = Key {
            scope: key.scope.clone(),
            slug: numbered(&key.slug, n)?,
        };
        if !taken(&k) {
            return Ok(Some(k));
        }
    }
    Ok(None)
}

/// Is `slug` already in normal form (what [`slugify`] returns for itself)?
pub fn is_slug(slug: &str) -> bool {
    slugify(slug).is_ok_and(|s| s == slug)
}

/// Checks a scope name: lowercase ASCII letters, digits and `-`, not reserved.
pub fn check_scope(scope: &str) -> Result<(), KeyError> {
    let ok = !scope.is_empty()
        && scope.len() <= 32
        && scope
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !scope.starts_with('-')
        && !RESERVED_SCOPES.contains(&scope);
    if ok {
        Ok(())
    } else {
        Err(KeyError::BadScope(scope.to_string()))
    }
}

impl Key {
    /// Parses `<scope>/<name>`, normalizing the name to its slug. Whether the
    /// scope is configured is the policy's question, not this one's.
    pub fn parse(text: &str) -> Result<(Key, String), KeyError> {
        let (scope, name) = text
            .split_once('/')
            .ok_or_else(|| KeyError::NoScope(text.to_string()))?;
        check_scope(scope)?;
        let slug = slugify(name)?;
        Ok((
            Key {
                scope: scope.to_string(),
                slug,
            },
            name.to_string(),
        ))
    }

    /// The memory file's path relative to the store root.
    pub fn rel_path(&self) -> String {
        format!("memory/{}/{}.md", self.scope, self.slug)
    }

    /// The key of a store-relative path `memory/<scope>/<slug>.md`, if it is one.
    pub fn from_rel_path(path: &str) -> Option<Key> {
        let (scope, slug) = split_rel_path(path)?;
        Some(Key {
            scope: scope.to_string(),
            slug: slug.to_string(),
        })
    }
}

/// `(scope, slug)` of a store-relative path `memory/<scope>/<slug>.md`, as
/// [`Key::from_rel_path`] reads it, without making a key (ranking tens of
/// thousands of files makes a key only of those chosen).
pub fn split_rel_path(path: &str) -> Option<(&str, &str)> {
    let (scope, slug) = path
        .strip_prefix("memory/")?
        .strip_suffix(".md")?
        .split_once('/')?;
    (!slug.contains('/') && check_scope(scope).is_ok()).then_some((scope, slug))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long name is cut at a clause, else a word, never in a word.
    #[test]
    fn phrase_names_are_cut_at_clauses_then_words() {
        assert_eq!(phrase_name("Call me Ada"), "Call me Ada");
        let long =
            "Prefer short answers in chat, with the command first and the explanation after it";
        assert_eq!(phrase_name(long), "Prefer short answers in chat");
        let words = "Always run the formatter and the linter before pushing anything to the main branch of the shop";
        let cut = phrase_name(words);
        assert!(
            words.starts_with(cut) && words[cut.len()..].starts_with(' '),
            "{cut}"
        );
        let slug = slugify(cut).unwrap_or_default();
        assert!(slug.chars().count() <= MAX_SLUG_CHARS, "{slug}");
        assert_eq!(
            slug,
            "always-run-the-formatter-and-the-linter-before-pushing-anything"
        );
        let stem =
            "feedback_always_run_the_formatter_and_the_linter_before_pushing_anything_to_main";
        assert_eq!(
            slugify(phrase_name(stem)).unwrap_or_default(),
            "feedback-always-run-the-formatter-and-the-linter-before-pushing"
        );
    }

    #[test]
    fn slug_examples() {
        for (name, slug) in [
            ("test-command", "test-command"),
            ("Test Command", "test-command"),
            ("  --Use pnpm, not npm!  ", "use-pnpm-not-npm"),
            ("测试命令", "测试命令"),
            ("Café au lait", "café-au-lait"),
            ("Cafe\u{301}", "café"),
            ("API_KEY rotation", "api-key-rotation"),
            ("ÀÉÎ", "àéî"),
        ] {
            assert_eq!(slugify(name).unwrap(), slug, "{name}");
        }
        assert_eq!(slugify(&"a".repeat(100)).unwrap().len(), MAX_SLUG_CHARS);
        // A script of 4-byte letters is cut by bytes, not characters.
        let gothic = "\u{10330}".repeat(64);
        let s = slugify(&gothic).unwrap();
        assert!(s.len() <= MAX_SLUG_BYTES && s.len() == 200, "{}", s.len());
        assert!(is_slug(&s));
        // A numbered slug fits too, and stays distinct.
        let n = numbered(&s, 2).unwrap();
        assert!(n.ends_with("-2") && n.len() <= MAX_SLUG_BYTES && is_slug(&n));
        let long = numbered(&"a".repeat(64), 10).unwrap();
        assert!(long.ends_with("-10") && long.chars().count() == MAX_SLUG_CHARS);
        let long = "ab ".repeat(40);
        let s = slugify(&long).unwrap();
        assert!(s.chars().count() <= MAX_SLUG_CHARS && !s.ends_with('-'));
    }

    #[test]
    fn the_first_free_numbered_key_skips_those_taken() {
        let key = Key {
            scope: "project".into(),
            slug: "test-command".into(),
        };
        let taken = ["test-command-2", "test-command-3", "test-command-5"];
        let free = first_free_numbered(&key, |k| taken.contains(&k.slug.as_str()));
        assert_eq!(
            free,
            Ok(Some(Key {
                scope: "project".into(),
                slug: "test-command-4".into(),
            }))
        );
        assert_eq!(first_free_numbered(&key, |_| true), Ok(None));
        // A slug at the limit is cut to make room for the suffix.
        let long = Key {
            scope: "user".into(),
            slug: "a".repeat(MAX_SLUG_CHARS),
        };
        let k = first_free_numbered(&long, |_| false).unwrap().unwrap();
        assert!(k.slug.ends_with("-2") && k.slug.chars().count() == MAX_SLUG_CHARS);
        assert_eq!(k.scope, "user");
    }

    #[test]
    fn refuses_unsafe_names() {
        for bad in [
            "",
            "---",
            "a/b",
            "..\\x",
            "x\u{202E}y",
            "a\nb",
            "CON",
            "lpt1",
            "nul.txt",
        ] {
            assert!(slugify(bad).is_err(), "{bad:?}");
        }
        assert!(Key::parse("../../x").is_err());
        assert!(Key::parse("/etc/passwd").is_err());
        assert!(Key::parse("log/x").is_err());
        assert!(Key::parse("project").is_err());
    }
}
