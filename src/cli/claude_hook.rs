//! What memoir reads of a Claude Code hook's payload on stdin (the
//! fields its hooks documentation gives every event, and the ones of the
//! events memoir hooks: UserPromptSubmit's prompt, SessionEnd's reason).

use super::output::warn;
use std::io::Read;

/// What memoir reads of a Claude Code hook's payload.
#[derive(serde::Deserialize)]
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
}

/// The hook's payload on stdin; `None`, after a warning ending with what
/// the hook then does not do, when there is none or it is not JSON.
pub fn read_hook(quiet: bool, not_done: &str) -> Option<HookInput> {
    // A hook's payload is one JSON object of a prompt and a few fields:
    // read up to its end only (a harness may keep the pipe open), and at
    // most 4 MiB (a prompt hook must never wait on an endless stdin).
    const MAX_HOOK_INPUT: u64 = 4 << 20;
    let stdin = std::io::stdin().lock().take(MAX_HOOK_INPUT);
    let first = serde_json::Deserializer::from_reader(stdin)
        .into_iter::<HookInput>()
        .next();
    match first {
        Some(Ok(h)) => Some(h),
        Some(Err(e)) => {
            warn(
                quiet,
                &format!("hook input on stdin is not JSON ({e}); {not_done}"),
            );
            None
        }
        None => {
            warn(quiet, &format!("no hook input on stdin; {not_done}"));
            None
        }
    }
}
