//! Other tools' memory formats, read and written as text (no I/O):
//! Claude Code's auto memory folder and OpenClaw's workspace. `ops::import`
//! and `ops::export` move memory between them and the store.

pub mod claude_code;
pub mod openclaw;
