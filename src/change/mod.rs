//! The engines that several commands share, filed by what they do rather
//! than by the command that first needed them: `batch` (the events, views,
//! journal and index every change writes), `append_only` (the logs'
//! rule, and the one rewrite `redact` may make), `drift` (the scan of how the
//! memory files differ from what the logs give, which `check`, `record`,
//! `rebuild`, `rollback` and every write read), `event` (the one way a
//! change starts a log entry), `memory_md` (MEMORY.md as it should be,
//! and its write), `rebuild` (views and MEMORY.md written again from the
//! logs), `version` (what a version commits, and the gate it passes).

pub mod append_only;
pub mod batch;
pub mod drift;
pub mod event;
pub mod memory_md;
pub mod rebuild;
pub mod resolve;
pub mod version;
