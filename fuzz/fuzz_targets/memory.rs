//! The memory-file parser (`memoir::memory::split`, `Memory::parse`) and
//! render round trip: see `checks::memory`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks.rs"]
#[allow(dead_code)] // each target uses one of the checks
mod checks;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Known hang, pending a fix (regressions-pending/memory/flow-nesting-hang):
    // the YAML scanner is quadratic in flow nesting depth, so the fuzzer finds
    // it again within minutes and stops. Skip deep nesting until it is fixed;
    // then drop this filter.
    if flow_depth(text) > 1000 {
        return;
    }
    checks::memory(text);
});

/// The deepest nesting of `[` and `{`, ignoring quotes (an over-estimate).
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}
