//! The merge drivers (`memoir::integration::merge::memory`, `index`,
//! `has_conflict_markers`, `settled_memory_md`): see `checks::merge`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
#[allow(dead_code)] // each target uses one of the checks
mod checks;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    checks::merge(text);
});
