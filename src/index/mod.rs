//! The persistent index: every memory file's stamp, summary and terms, and
//! every memory's heads, saved in local state so that reads and writes need
//! not replay the logs or read every file.

pub(crate) mod cache;
pub mod corpus;
pub(crate) mod file;
pub(crate) mod layout;
pub(crate) mod listing;
pub mod refresh;
pub(crate) mod snapshot;
pub(crate) mod terms;
pub(crate) mod watched;
