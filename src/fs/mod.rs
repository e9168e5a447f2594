//! File system access that never follows a link, never blocks on a FIFO
//! and never reads past a cap: what every layer that reads the work tree
//! (the store, the logs, git's view of the store) goes through; and the
//! one way a file is replaced (`replace`), which never writes through a
//! planted link, and knows what a replacement killed before its rename
//! leaves and where (`replace::remove_leftovers`).

pub(crate) mod folder;
pub(crate) mod replace;
pub mod safe_file;
