//! How far long work has come: the library reports it, the CLI shows it
//! (on a terminal only), so the core still never prints.

/// Where long work reports how far it is. A command that runs for seconds
/// on a large store (building the persistent index from nothing) calls
/// [`Progress::advance`] as it goes and [`Progress::finish`] at its end.
pub trait Progress: Send + Sync + std::fmt::Debug {
    /// `done` of `total` units of `task` (a few words: "indexing memory
    /// files") are done.
    fn advance(&self, task: &str, done: usize, total: usize);
    /// The work is over: whatever was shown goes.
    fn finish(&self);
}
