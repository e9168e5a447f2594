//! The model: what memory is, with no I/O. Keys, timestamps, text
//! normalization, memory files, log entries (events) and the store's
//! configuration are parsed and rendered here from bytes already read.

pub mod config;
pub mod event;
pub mod fingerprint;
pub mod key;
pub mod markdown;
pub mod memory;
pub mod remember;
pub mod stamp;
pub mod text;
pub mod time;
pub mod version_message;
pub mod yaml_bounds;
