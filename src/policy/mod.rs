//! The write policy: the rules a write must pass before memoir writes
//! anything, on every path that writes (`note`, `remember`, `forget`,
//! `resolve`, `consolidate`, `record`, `rollback`, `redact`). A refusal is
//! a [`StoreError::Refused`] (exit 3) naming its rule; nothing is written
//! anywhere.
//!
//! The rules, and where each lives:
//!
//! | What is written | Rule | Where |
//! |---|---|---|
//! | any text (a note, a memory, a reason, the actor, a commit message) | holds no secret; the refusal names the rule and line, never the value | `check_secrets`, the scanner in [`secrets`] |
//! | a memory | its scope is configured; a one-line description and a source, each at most 400 characters; no control character in one-line fields, no NUL; confidence at least the configured minimum; no secret in its text or in its frontmatter once parsed | `memory::check_memory` |
//! | a memory file (hand-edited, merged, restored) | its path is `memory/<scope>/<slug>.md`, its slug is normal, its name normalizes to the slug | `memory::validate_file` |
//! | a memory `remember` renders | non-empty one-line tags; at most [`MAX_FILE_BYTES`] | `memory::check_tags`, `memory::check_size` |
//! | a note | non-empty, at most [`MAX_NOTE_BYTES`], no NUL | `free_text::check_note` |
//! | a `forget` | says why | `free_text::check_reason` |
//!
//! Rules that belong to a format rather than to a write live with it: a
//! name's safety and length (no control, bidirectional or invisible
//! character, no path separator, no reserved device name) in
//! [`crate::model::key::slugify`]; a memory file's syntax, type and size
//! in [`crate::model::memory::Memory::parse`], its frontmatter's bounds in
//! [`crate::model::yaml_bounds`]. The CLI refuses what never reaches the
//! library (an unknown `--type`, a `--confidence` outside 0..1, a body file
//! over the limit).
//!
//! [`StoreError::Refused`]: crate::store::StoreError::Refused
//! [`MAX_FILE_BYTES`]: crate::model::memory::MAX_FILE_BYTES

pub(crate) mod free_text;
pub mod mask;
pub(crate) mod memory;
pub mod secrets;

use crate::store::StoreError;

/// The largest note, in bytes.
pub const MAX_NOTE_BYTES: usize = 64 * 1024;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 400;
/// The longest source, in characters.
pub const MAX_SOURCE_CHARS: usize = 400;

/// A refusal by rule `rule` of what is at `path` (a store path, or the
/// flag or field it came from).
pub(crate) fn refused(
    rule: &str,
    path: &str,
    line: Option<usize>,
    message: impl Into<String>,
) -> StoreError {
    StoreError::Refused {
        rule: rule.to_string(),
        path: path.to_string(),
        line,
        message: message.into(),
    }
}

/// The refusal of a secret `finding` found `what` says where (`looks like
/// a secret`, …): rule `secret:<id>`, the line, never the value.
fn refused_secret(finding: &secrets::Finding, path: &str, line: usize, what: &str) -> StoreError {
    refused(
        &format!("secret:{}", finding.rule),
        path,
        Some(line),
        format!(
            "{what} ({}); memory must never hold one (value not shown)",
            finding.rule
        ),
    )
}

/// Refuses text that holds a secret, naming the rule and line only.
pub(crate) fn check_secrets(text: &str, path: &str) -> Result<(), StoreError> {
    match secrets::find_secrets(text).first() {
        Some(f) => Err(refused_secret(f, path, f.line, "looks like a secret")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token the scanner refuses, assembled so this file holds none.
    fn token() -> String {
        ["ghp_", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"].concat()
    }

    #[test]
    fn a_secret_is_refused_by_rule_and_line_never_by_value() {
        let text = format!("fine\nkey {}\n", token());
        let Err(StoreError::Refused {
            rule,
            path,
            line,
            message,
        }) = check_secrets(&text, "note")
        else {
            panic!("not refused");
        };
        assert!(rule.starts_with("secret:"), "{rule}");
        assert_eq!((path.as_str(), line), ("note", Some(2)));
        assert!(message.starts_with("looks like a secret ("), "{message}");
        assert!(!message.contains(&token()), "{message}");
    }

    #[test]
    fn text_without_a_secret_passes() {
        assert!(check_secrets("use pnpm, not npm", "note").is_ok());
    }
}
