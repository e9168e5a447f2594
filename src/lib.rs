//! memoir: git-native memory for AI agents.
//!
//! Memory is plain markdown in a git work tree: one file per memory under
//! `memory/<scope>/`, append-only daily logs under `memory/log/` that are the
//! source of truth, and a generated `MEMORY.md` index. This crate is the core:
//! it never prints, never reads the environment or the clock (time and
//! identity come in through [`store::Ctx`]), and returns data for the CLI to
//! render.
//!
//! The modules are layered, each using only those below it: `mcp` (the
//! Model Context Protocol server, whose tools the CLI runs) and `extract`
//! (the extractor `consolidate --extract-cmd` runs: its answers become
//! `remember` requests) over `ops` (one module per operation) and
//! `integration` (what git's hooks do) over
//! `policy`, `search`, `render`, `index` (the persistent index), `log` (the
//! logs, replay and the one transition), `store`, `git`, `embed` (optional
//! embeddings for semantic recall: the service, the vector cache), `rerank`
//! (an optional service scoring candidates against a query), both over
//! `service` (the HTTP and command calls they share), and `local`, over the
//! pure `model`. `docs/architecture.md` draws them, defines each word,
//! and walks a `remember` and a `consolidate` through them.

#![deny(missing_docs)]

pub mod change;
pub mod embed;
pub mod extract;
pub mod fs;
pub mod git;
pub mod index;
pub mod integration;
pub mod interop;
pub mod local;
pub mod log;
pub mod mcp;
pub mod model;
pub mod ops;
mod parallel;
pub mod policy;
pub(crate) mod render;
pub mod rerank;
pub mod search;
pub mod service;
pub mod store;
#[cfg(test)]
mod testing;
pub mod watch;
