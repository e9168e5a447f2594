//! A Claude Code hook's JSON payload (`memoir::integration::hook_input`):
//! see `checks::hook`. Any bytes: a harness may send anything on stdin.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
#[allow(dead_code)] // each target uses one of the checks
mod checks;

fuzz_target!(|data: &[u8]| {
    checks::hook(data);
});
