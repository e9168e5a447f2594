//! What memoir reads of a Claude Code hook's payload on stdin (the
//! fields its hooks documentation gives every event, and the ones of the
//! events memoir hooks: UserPromptSubmit's prompt, SessionEnd's reason).
//! The CLI's `--from-hook` commands are shims over it.

use std::io::Read;

/// The most of a hook's payload memoir reads: a prompt hook must never
/// wait on an endless stdin.
pub const MAX_HOOK_INPUT: u64 = 4 << 20;

/// What memoir reads of a Claude Code hook's payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct HookInput {
    /// The user's prompt (UserPromptSubmit); none at SessionStart.
    pub prompt: Option<String>,
    /// Where the agent works: finds the store.
    pub cwd: Option<std::path::PathBuf>,
    /// The session's transcript, JSONL (every event).
    pub transcript_path: Option<std::path::PathBuf>,
    /// The session's id.
    pub session_id: Option<String>,
    /// Why the session ended (SessionEnd).
    pub reason: Option<String>,
    /// The event: `UserPromptSubmit`, `SessionStart`, ….
    pub hook_event_name: Option<String>,
}

impl HookInput {
    /// The hook is about a prompt (UserPromptSubmit), even an empty one
    /// (an image alone): not a session's start.
    pub fn is_prompt(&self) -> bool {
        self.prompt.is_some() || self.hook_event_name.as_deref() == Some("UserPromptSubmit")
    }

    /// The payload at the start of `input`: its first JSON value, read up
    /// to its end only (a harness may keep the pipe open) and at most
    /// [`MAX_HOOK_INPUT`] bytes. `None` when there is none; an error when
    /// it is not JSON, or not an object of these fields' types.
    pub fn read(input: impl Read) -> Result<Option<HookInput>, serde_json::Error> {
        serde_json::Deserializer::from_reader(input.take(MAX_HOOK_INPUT))
            .into_iter::<HookInput>()
            .next()
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_is_read_to_its_end_and_no_further() {
        let input =
            br#"{"prompt": "hi", "hook_event_name": "UserPromptSubmit", "extra": 1} trailing"#;
        let h = HookInput::read(&input[..])
            .ok()
            .flatten()
            .unwrap_or_default();
        assert_eq!(h.prompt.as_deref(), Some("hi"));
        assert!(h.is_prompt());
        assert!(matches!(HookInput::read(&b""[..]), Ok(None)));
        assert!(HookInput::read(&b"[1, 2"[..]).is_err());
        assert!(HookInput::read(&br#"{"prompt": 3}"#[..]).is_err());
        // An endless stdin is read only up to the cap.
        let endless = std::io::repeat(b' ');
        assert!(matches!(HookInput::read(endless), Ok(None)));
    }
}
