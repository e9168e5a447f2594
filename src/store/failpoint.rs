//! Failpoints: places where a test stops a command as a crash there would,
//! to check that what is left is what `check` explains and `rebuild`
//! repairs. Only a debug build (the tests') can be given one; a release
//! build never stops at any.

/// Where a command can be stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    /// A write, after its log append and before any memory file.
    AfterLogAppend,
    /// A write of several memory files, after the first of them.
    MidViewUpdate,
    /// A consolidation, after its views and before its commit.
    BeforeCommit,
    /// A consolidation's commit, after git's index and before HEAD moves.
    AfterIndex,
    /// `redact`'s rewrite of a log, its temporary file written and not yet
    /// renamed: the process is killed there (`kill -9`), not stopped by an
    /// error, which would remove the temporary file a kill leaves.
    KilledBeforeRename,
}

impl Failpoint {
    /// Every failpoint.
    pub const ALL: [Failpoint; 5] = [
        Failpoint::AfterLogAppend,
        Failpoint::MidViewUpdate,
        Failpoint::BeforeCommit,
        Failpoint::AfterIndex,
        Failpoint::KilledBeforeRename,
    ];

    /// The failpoint of this name (`MEMOIR_FAILPOINT`'s value).
    pub fn parse(name: &str) -> Option<Failpoint> {
        Failpoint::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Failpoint::AfterLogAppend => "after-log-append",
            Failpoint::MidViewUpdate => "mid-view-update",
            Failpoint::BeforeCommit => "before-commit",
            Failpoint::AfterIndex => "after-index",
            Failpoint::KilledBeforeRename => "killed-before-rename",
        }
    }

    /// What a command stopped there did not do.
    pub fn skipped(self) -> &'static str {
        match self {
            Failpoint::AfterLogAppend => "stopped before writing views",
            Failpoint::MidViewUpdate => "stopped between views",
            Failpoint::BeforeCommit => "stopped before the commit",
            Failpoint::AfterIndex => "stopped before moving HEAD",
            Failpoint::KilledBeforeRename => "killed before the rename",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failpoint_is_found_by_its_name() {
        for f in Failpoint::ALL {
            assert_eq!(Failpoint::parse(f.name()), Some(f));
        }
        assert_eq!(Failpoint::parse("after-everything"), None);
    }
}
