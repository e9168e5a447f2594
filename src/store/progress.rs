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

/// One piece of long work as it reports itself: its task, its size, and
/// the [`Progress`] it reports to when it is large enough to be worth a
/// line (`Store::meter` makes one); otherwise it says nothing.
#[derive(Clone, Copy, Debug)]
pub struct Meter<'a> {
    progress: Option<&'a dyn Progress>,
    task: &'static str,
    total: usize,
}

impl<'a> Meter<'a> {
    /// Work of `total` units of `task`, reported to `progress` if `large`.
    pub(crate) fn new(
        progress: Option<&'a dyn Progress>,
        task: &'static str,
        total: usize,
        large: bool,
    ) -> Meter<'a> {
        Meter {
            progress: progress.filter(|_| large),
            task,
            total,
        }
    }

    /// `done` of the units are done.
    pub fn advance(&self, done: usize) {
        if let Some(p) = self.progress {
            p.advance(self.task, done.min(self.total), self.total);
        }
    }

    /// The work is over: whatever was shown goes.
    pub fn finish(self) {
        if let Some(p) = self.progress {
            p.finish();
        }
    }
}
