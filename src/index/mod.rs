//! The persistent index: every memory file's stamp, summary and terms, and
//! every memory's heads, saved in local state so that reads and writes need
//! not replay the logs or read every file.

pub mod cache;
pub mod file;
pub mod layout;
pub mod refresh;
pub mod snapshot;
