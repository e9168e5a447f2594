//! File stamps: size and modification time, enough to tell that a file has
//! not changed since it was read.

use serde::{Deserialize, Serialize};
use std::fs;

/// Size and modification time: enough to tell that a file has not changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Length in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime: i128,
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &fs::Metadata) -> Stamp {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        Stamp {
            size: meta.len(),
            mtime,
        }
    }

    /// Whether a file whose stamp is now `self` is still as it was when
    /// `recorded` was taken, by a record written at `written_at` (ns since
    /// the epoch). git's racy rule: a file changed in the same tick as the
    /// record was written may carry the recorded stamp yet other content,
    /// so it is not trusted. The one form of the rule every reader of the
    /// persistent index uses.
    pub fn still_as(self, recorded: Stamp, written_at: i128) -> bool {
        self == recorded && self.mtime < written_at
    }

    /// The stamp of a size and a modification time in seconds and
    /// nanoseconds since the epoch; as [`Stamp::of`], a time before the
    /// epoch counts as the epoch.
    pub fn from_parts(size: u64, secs: i64, nanos: u32) -> Stamp {
        let mtime = if secs < 0 {
            0
        } else {
            i128::from(secs) * 1_000_000_000 + i128::from(nanos)
        };
        Stamp { size, mtime }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_vouches_only_when_older_than_the_record_and_unchanged() {
        let recorded = Stamp {
            size: 10,
            mtime: 100,
        };
        assert!(recorded.still_as(recorded, 101));
        // Changed in the tick the record was written: not trusted.
        assert!(!recorded.still_as(recorded, 100));
        assert!(!Stamp {
            size: 11,
            mtime: 100
        }
        .still_as(recorded, 200));
        assert!(!Stamp {
            size: 10,
            mtime: 99
        }
        .still_as(recorded, 200));
    }
}
