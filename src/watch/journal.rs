//! The watcher's record of what changed: per path, the count of events
//! when it last changed, within one generation. Pure: the watcher's loop
//! (`ops::watch`) feeds it events and asks it for answers.
//!
//! A generation ends when the watcher can no longer vouch for every
//! change (an overflowed queue, an event it cannot attribute to paths, a
//! folder moved away): every token of the old one is answered `reset`.

use crate::watch::protocol::{Answer, Token};
use std::collections::HashMap;

/// More distinct changed paths than this in one generation: start a new
/// one rather than grow without bound (a client then scans once).
pub const MAX_PATHS: usize = 1 << 20;

/// What changed since this watcher started, by path.
#[derive(Debug)]
pub struct Journal {
    instance: u64,
    /// Events counted so far.
    seq: u64,
    /// The count at which this generation started.
    start: u64,
    /// Each changed path with the count when it last changed.
    changed: HashMap<String, u64>,
}

impl Journal {
    /// A journal of the watcher `instance` (random, unique per run).
    pub fn new(instance: u64) -> Journal {
        Journal {
            instance,
            seq: 0,
            start: 0,
            changed: HashMap::new(),
        }
    }

    /// The token as of now.
    pub fn token(&self) -> Token {
        Token {
            instance: self.instance,
            seq: self.seq,
        }
    }

    /// Records that `path` changed.
    pub fn changed(&mut self, path: String) {
        if self.changed.len() >= MAX_PATHS && !self.changed.contains_key(&path) {
            self.reset();
            return;
        }
        self.seq += 1;
        self.changed.insert(path, self.seq);
    }

    /// Starts a new generation: every earlier token is answered `reset`.
    pub fn reset(&mut self) {
        self.seq += 1;
        self.start = self.seq;
        self.changed.clear();
    }

    /// How many paths changed since `since` (none when it is not this
    /// generation's).
    pub fn changed_since(&self, since: &Token) -> usize {
        match self.answer(Some(since)) {
            Answer::Changes { paths, .. } => paths.len(),
            Answer::Reset { .. } => 0,
        }
    }

    /// The answer to `since`: the paths changed after it, sorted, or
    /// `reset` for a token of another watcher or generation.
    pub fn answer(&self, since: Option<&Token>) -> Answer {
        let token = self.token();
        let Some(since) = since
            .filter(|t| t.instance == self.instance && t.seq >= self.start && t.seq <= self.seq)
        else {
            return Answer::Reset { token };
        };
        let mut paths: Vec<String> = self
            .changed
            .iter()
            .filter(|(_, &at)| at > since.seq)
            .map(|(p, _)| p.clone())
            .collect();
        paths.sort_unstable();
        Answer::Changes { token, paths }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_gets_what_changed_after_it_until_the_generation_ends() {
        let mut j = Journal::new(7);
        let t0 = j.token();
        j.changed("memory/project/a.md".into());
        let t1 = j.token();
        j.changed("memory/project/b.md".into());
        j.changed("memory/project/a.md".into());
        let paths = |a: Answer| match a {
            Answer::Changes { paths, .. } => paths,
            Answer::Reset { .. } => panic!("reset"),
        };
        assert_eq!(
            paths(j.answer(Some(&t0))),
            ["memory/project/a.md", "memory/project/b.md"]
        );
        assert_eq!(
            paths(j.answer(Some(&t1))),
            ["memory/project/a.md", "memory/project/b.md"]
        );
        assert!(paths(j.answer(Some(&j.token()))).is_empty());
        assert_eq!(j.changed_since(&t1), 2);
        // No token, another watcher's, one from the future: reset.
        assert!(matches!(j.answer(None), Answer::Reset { .. }));
        let other = Token { instance: 8, ..t1 };
        assert!(matches!(j.answer(Some(&other)), Answer::Reset { .. }));
        let ahead = Token { seq: 99, ..t1 };
        assert!(matches!(j.answer(Some(&ahead)), Answer::Reset { .. }));
        // A new generation: the old tokens are reset, the new one works.
        j.reset();
        assert!(matches!(j.answer(Some(&t1)), Answer::Reset { .. }));
        let t2 = j.token();
        j.changed("memory/project/c.md".into());
        assert_eq!(paths(j.answer(Some(&t2))), ["memory/project/c.md"]);
    }
}
