//! Which of a person's stores something is in.

/// Which store a memory or a hit is in: the repository's, shared with the
/// team, or the person's own (`user/` memories, never committed to a
/// project).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The repository's store.
    Repo,
    /// The person's own store.
    Personal,
}

impl Origin {
    /// As JSON and text say it: `repo`, `personal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Repo => "repo",
            Origin::Personal => "personal",
        }
    }
}
