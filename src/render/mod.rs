//! Rendering what the store holds for readers, pure (data in, text out):
//! the block `context` injects into a prompt, and the generated block of
//! `MEMORY.md`.

pub(crate) mod context;
pub(crate) mod memory_md;
