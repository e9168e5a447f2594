//! Claude Code topic files, OpenClaw workspaces, session transcripts and
//! the MCP wire (`memoir::interop`, `integration::claude_code`,
//! `memoir::mcp`): see `checks::interop`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
#[allow(dead_code)] // each target uses one of the checks
mod checks;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    checks::interop(text);
});
