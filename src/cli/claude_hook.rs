//! Reading a Claude Code hook's payload on stdin for a `--from-hook`
//! command (the payload itself: `memoir::integration::hook_input`).

use super::output::warn;
pub use memoir::integration::hook_input::HookInput;

/// The hook's payload on stdin; `None`, after a warning ending with what
/// the hook then does not do, when there is none or it is not JSON.
pub fn read_hook(quiet: bool, not_done: &str) -> Option<HookInput> {
    match HookInput::read(std::io::stdin().lock()) {
        Ok(Some(h)) => Some(h),
        Ok(None) => {
            warn(quiet, &format!("no hook input on stdin; {not_done}"));
            None
        }
        Err(e) => {
            // JSON of other fields' types is not what Claude Code sends.
            let what = match e.classify() {
                serde_json::error::Category::Data => "not a hook payload",
                _ => "not JSON",
            };
            warn(
                quiet,
                &format!("hook input on stdin is {what} ({e}); {not_done}"),
            );
            None
        }
    }
}
