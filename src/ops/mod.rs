//! The operations: each command's work over a store, one module each.

pub mod check;
pub mod consolidate;
pub mod diff;
pub mod export;
pub mod history;
pub mod import;
pub mod query;
pub mod recall;
pub mod record;
pub mod redact;
pub mod reindex;
pub mod resolve;
pub mod rollback;
pub mod seen;
#[cfg(unix)]
pub mod watch;
pub mod write;
