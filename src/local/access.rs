//! The access signal: per memory, when it was last recalled and how many
//! times `context` injected it, kept in the local state as `access.bin`
//! (format in `docs/format.md`, section 7).
//!
//! Small and rewritten whole, atomically, by each command that changes it
//! (under the receipts' lock, `StateDir::seen_lock_path`). It is a hint,
//! not a record: a missing, damaged or foreign file reads as empty, and
//! every clone has its own (it is never committed).

use crate::model::time::DAY_MS;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

/// The file's first bytes: what tells it from anything else.
const MAGIC: &[u8; 8] = b"memoirA\n";
/// The file's layout version, after the magic.
const VERSION: u32 = 1;
/// The half-life of the access weight, in days ([`weight`]).
pub const HALF_LIFE_DAYS: f64 = 30.0;

/// What the access signal knows of one memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AccessStat {
    /// When it was last injected by `context` or listed by `recall`
    /// (ms since the epoch).
    pub last_recalled_ms: i64,
    /// How many `context` calls injected it.
    pub times_injected: u32,
}

/// `context` calls that injected nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Abstentions {
    /// How many.
    pub count: u64,
    /// When the last was (ms since the epoch; 0: never).
    pub last_ms: i64,
}

/// The access signal of one store, in this clone.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Access {
    /// Layout version ([`VERSION`]).
    version: u32,
    /// By key (`scope/slug`).
    keys: BTreeMap<String, AccessStat>,
    /// Context calls that injected nothing.
    abstentions: Abstentions,
    /// When keys whose memory is gone were last dropped (ms).
    pruned_ms: i64,
}

/// Reads the access signal at `path`: empty when there is no file or it
/// is not one this version wrote.
pub fn load(path: &Path) -> Access {
    let Ok(bytes) = std::fs::read(path) else {
        return Access::default();
    };
    decode(&bytes).unwrap_or_default()
}

fn decode(bytes: &[u8]) -> Option<Access> {
    let body = bytes.strip_prefix(MAGIC)?;
    let (access, rest): (Access, _) = postcard::take_from_bytes(body).ok()?;
    (rest.is_empty() && access.version == VERSION).then_some(access)
}

impl Access {
    /// What is known of `key` (`scope/slug`).
    pub fn get(&self, key: &str) -> Option<AccessStat> {
        self.keys.get(key).copied()
    }

    /// Nothing is known of any memory.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// How many memories it knows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The context calls that injected nothing.
    pub fn abstentions(&self) -> Abstentions {
        self.abstentions
    }

    /// A context call at `now_ms` injected `keys`.
    pub fn injected<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>, now_ms: i64) {
        for k in keys {
            let s = self.keys.entry(k.to_string()).or_default();
            s.times_injected = s.times_injected.saturating_add(1);
            s.last_recalled_ms = s.last_recalled_ms.max(now_ms);
        }
    }

    /// A `recall` at `now_ms` listed `keys`.
    pub fn recalled<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>, now_ms: i64) {
        for k in keys {
            let s = self.keys.entry(k.to_string()).or_default();
            s.last_recalled_ms = s.last_recalled_ms.max(now_ms);
        }
    }

    /// A context call at `now_ms` injected nothing.
    pub fn abstained(&mut self, now_ms: i64) {
        self.abstentions.count = self.abstentions.count.saturating_add(1);
        self.abstentions.last_ms = self.abstentions.last_ms.max(now_ms);
    }

    /// Writes the signal to `path` atomically (temporary file, rename).
    /// Once a day (by `now_ms`; or if the clock went back), keys for which
    /// `live` says no are dropped first: checking every key on every
    /// prompt would cost a stat per memory ever injected.
    pub fn save(
        &mut self,
        path: &Path,
        now_ms: i64,
        mut live: impl FnMut(&str) -> bool,
    ) -> io::Result<()> {
        if now_ms < self.pruned_ms || now_ms - self.pruned_ms >= DAY_MS {
            self.keys.retain(|k, _| live(k));
            self.pruned_ms = now_ms;
        }
        self.version = VERSION;
        let mut bytes = MAGIC.to_vec();
        bytes.extend(postcard::to_allocvec(self).map_err(io::Error::other)?);
        crate::local::state::write_replace(path, &bytes)
    }
}

/// How much access multiplies a memory's confidence when capacity evicts
/// (`docs/format.md`, section 9): `1 + ln(1 + n) × 2^(−d / 30)`, where `n`
/// is how many times `context` injected it and `d` the days (fractional,
/// at least 0) from its last recall or its last update, whichever is
/// later, to `now_ms`. Exactly 1 without access data or never injected,
/// so that eviction then orders as MEMORY.md does.
pub fn weight(stat: Option<AccessStat>, updated_ms: i64, now_ms: i64) -> f64 {
    let Some(s) = stat.filter(|s| s.times_injected > 0) else {
        return 1.0;
    };
    let last = s.last_recalled_ms.max(updated_ms);
    let days = (now_ms.saturating_sub(last)).max(0) as f64 / DAY_MS as f64;
    1.0 + f64::from(s.times_injected).ln_1p() * (-days / HALF_LIFE_DAYS).exp2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signal_counts_and_reads_back_and_a_bad_file_is_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("access.bin");
        assert!(load(&path).is_empty(), "no file");
        let mut a = load(&path);
        a.injected(["project/a", "project/b"], 1_000);
        a.injected(["project/a"], 2_000);
        a.recalled(["project/b", "project/c"], 3_000);
        // An older time never moves `last_recalled` back.
        a.recalled(["project/a"], 500);
        a.abstained(2_500);
        a.save(&path, 3_000, |_| true).expect("save");
        let b = load(&path);
        assert_eq!(b, a);
        let stat = |last_recalled_ms, times_injected| {
            Some(AccessStat {
                last_recalled_ms,
                times_injected,
            })
        };
        assert_eq!(b.get("project/a"), stat(2_000, 2));
        assert_eq!(b.get("project/b"), stat(3_000, 1));
        assert_eq!(b.get("project/c"), stat(3_000, 0));
        assert_eq!(b.get("project/d"), None);
        assert_eq!(
            b.abstentions(),
            Abstentions {
                count: 1,
                last_ms: 2_500
            }
        );
        for bad in [
            &b""[..],
            b"memoirA\n",
            b"memoirA\n\x02",
            b"garbage!!",
            &[0xff; 40],
        ] {
            std::fs::write(&path, bad).expect("write");
            assert!(load(&path).is_empty(), "{bad:?}");
        }
        // Trailing bytes after a valid signal: not one this version wrote.
        let mut bytes = MAGIC.to_vec();
        bytes.extend(postcard::to_allocvec(&a).expect("encode"));
        bytes.push(0);
        std::fs::write(&path, &bytes).expect("write");
        assert!(load(&path).is_empty());
    }

    #[test]
    fn gone_memories_are_dropped_at_the_first_save_of_a_day() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("access.bin");
        let mut a = Access::default();
        a.injected(["project/a", "project/gone"], 10);
        let live = |k: &str| k != "project/gone";
        a.save(&path, DAY_MS, live).expect("save");
        assert_eq!(load(&path).len(), 1, "the first save prunes");
        a.injected(["project/gone"], DAY_MS + 1);
        a.save(&path, DAY_MS + 2, live).expect("save");
        assert_eq!(load(&path).len(), 2, "not again the same day");
        a.save(&path, 2 * DAY_MS, live).expect("save");
        assert_eq!(load(&path).len(), 1, "a day later");
        a.injected(["project/gone"], 5);
        a.save(&path, 5, live).expect("save");
        assert_eq!(load(&path).len(), 1, "the clock went back: prunes");
    }

    #[test]
    fn the_weight_is_one_without_injections_and_halves_its_boost_in_30_days() {
        let now = 100 * DAY_MS;
        assert_eq!(weight(None, 0, now), 1.0);
        let recalled_only = AccessStat {
            last_recalled_ms: now,
            times_injected: 0,
        };
        assert_eq!(weight(Some(recalled_only), 0, now), 1.0);
        let used = |n, last| {
            Some(AccessStat {
                last_recalled_ms: last,
                times_injected: n,
            })
        };
        let fresh = weight(used(10, now), 0, now);
        assert!((fresh - (1.0 + 11f64.ln())).abs() < 1e-12, "{fresh}");
        let month = weight(used(10, now - 30 * DAY_MS), 0, now);
        assert!((month - (1.0 + 11f64.ln() / 2.0)).abs() < 1e-12, "{month}");
        // A later update counts as fresh as a recall; the future is now.
        assert_eq!(weight(used(10, now - 30 * DAY_MS), now, now), fresh);
        assert_eq!(weight(used(10, now + DAY_MS), 0, now), fresh);
        assert!(weight(used(100, now), 0, now) > fresh, "more is more");
    }
}
