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
