//! Free text a writer hands the log beside memories: a note, and the
//! reason a memory is forgotten.

use super::{check_secrets, refused, MAX_NOTE_BYTES};
use crate::store::StoreError;

/// Refuses a note that is empty, over [`MAX_NOTE_BYTES`], holds a NUL or
/// a secret.
pub(crate) fn check_note(text: &str) -> Result<(), StoreError> {
    if text.trim().is_empty() {
        return Err(refused("empty", "note", None, "the note is empty"));
    }
    if text.len() > MAX_NOTE_BYTES {
        return Err(refused(
            "size",
            "note",
            None,
            format!(
                "the note is {} bytes, more than the limit of {MAX_NOTE_BYTES}",
                text.len()
            ),
        ));
    }
    if text.contains('\0') {
        // git takes a file with a NUL for binary: no diff, no merge.
        return Err(refused(
            "control",
            "note",
            None,
            "the note holds a NUL byte",
        ));
    }
    check_secrets(text, "note")
}

/// Refuses a `forget` that does not say why, or whose reason holds a
/// secret (the reason is logged).
pub(crate) fn check_reason(reason: &str) -> Result<(), StoreError> {
    if reason.trim().is_empty() {
        return Err(refused(
            "reason",
            "--reason",
            None,
            "say why the memory is forgotten",
        ));
    }
    check_secrets(reason, "--reason")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_of(r: Result<(), StoreError>) -> String {
        match r {
            Err(StoreError::Refused { rule, .. }) => rule,
            other => format!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_note_must_hold_text_within_the_limit_and_no_nul() {
        assert!(check_note("use pnpm").is_ok());
        assert_eq!(rule_of(check_note(" \n\t")), "empty");
        assert_eq!(rule_of(check_note(&"a".repeat(MAX_NOTE_BYTES + 1))), "size");
        assert!(check_note(&"a".repeat(MAX_NOTE_BYTES)).is_ok());
        assert_eq!(rule_of(check_note("a\0b")), "control");
    }

    #[test]
    fn a_forget_must_say_why() {
        assert!(check_reason("superseded").is_ok());
        assert_eq!(rule_of(check_reason("  ")), "reason");
    }
}
