//! Integration with git beyond commits: installing hooks and merge
//! drivers, and what each hook does (the hooks are one-line shims that run
//! `memoir hook <name>`; their behaviour lives here); and with Claude Code
//! (the project files setup writes, the note of a session).

pub mod claude_code;
pub mod hook_input;
pub mod hooks;
pub mod merge;
pub mod post_merge;
pub mod pre_commit;
