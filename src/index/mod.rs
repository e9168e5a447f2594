//! The persistent index: every memory file's stamp, summary and terms, and
//! every memory's heads, saved in local state so that reads and writes need
//! not replay the logs or read every file.
//!
//! Commands open it through one door, [`Index`] (see `whole`), with the
//! constructor of their use; what it keeps, its file, and how it is brought
//! up to date are private to this folder. What a search reads of it
//! ([`Corpus`] and the index read in place, [`OpenIndex`]) and what a write
//! holds ([`Snapshot`]) are the types those constructors return.

mod cache;
mod corpus;
mod file;
mod layout;
mod refresh;
mod snapshot;
mod terms;
mod watched;
mod whole;

pub use cache::{Cache, FileEntry, NoteEntry, WatchMark};
pub use corpus::{Corpus, Fresh, NoteDoc, NoteSource};
pub use layout::{NoteRec, OpenIndex, Rec, DESCRIPTION};
pub use snapshot::Snapshot;
pub use terms::Terms;
pub use whole::{Index, Written};

/// What tests elsewhere build on: a persistent index made by hand, and the
/// incremental paths the transition's property test compares with a
/// replay.
#[cfg(test)]
pub(crate) mod testing {
    pub(crate) use super::cache::CACHE_VERSION;
    pub(crate) use super::layout::encode;
    pub(crate) use super::refresh::{apply_events, entry_for};
    pub(crate) use super::snapshot::Tail;
    pub(crate) use super::terms::term_counts;
}
