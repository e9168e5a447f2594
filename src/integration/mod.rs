//! Integration with git beyond commits: hooks and merge drivers.

pub mod hooks;
pub mod merge;
