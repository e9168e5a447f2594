//! Rendering what the store holds for readers: the generated block of
//! `MEMORY.md`.

pub(crate) mod memory_md;
