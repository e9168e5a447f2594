//! memoir: git-native memory for AI agents.
//!
//! Memory is plain markdown in a git work tree: one file per memory under
//! `memory/<scope>/`, append-only daily logs under `memory/log/` that are the
//! source of truth, and a generated `MEMORY.md` index. This crate is the core:
//! it never prints, never reads the environment or the clock (time and
//! identity come in through [`store::Ctx`]), and returns data for the CLI to
//! render.

pub mod config;
pub mod consolidate;
pub mod diff;
pub mod drift;
pub mod event;
pub mod flat;
mod folder;
pub mod git;
pub mod history;
pub mod hooks;
pub mod index;
pub mod key;
pub mod lock;
pub mod memory;
pub mod merge;
pub mod policy;
pub mod query;
pub mod recall;
pub mod redact;
pub mod replay;
pub mod resolve;
pub mod rollback;
pub mod safe_file;
pub mod search;
pub mod snapshot;
pub mod state;
pub mod store;
pub mod text;
pub mod time;
pub mod write;
pub mod yaml_bounds;

/// Threads for work spread over the cores (stats, file writes, tokenizing):
/// one a core, at most 4; past that the file system's locks, not the
/// cores, bound the kernel's share of it.
pub(crate) fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
}
