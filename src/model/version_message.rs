//! The message of a version commit: what a consolidation or a rollback
//! says in git, rendered by the commands that commit one and parsed by
//! `memoir versions` (`git::history`).
//!
//! ```text
//! memoir: consolidate (1 added, 1 changed, 0 forgotten)     summary
//!                                                           blank
//! The store's set-up: memory/config.yaml                    prose (optional)
//!                                                           blank
//! + project/db                                              changes (optional)
//! ~ project/ci (written directly)
//!                                                           blank
//! Memoir-Consolidation: 01K…                                trailers
//! Memoir-Counts: added=1 changed=1 forgotten=0 conflicts=0
//! ```
//!
//! The trailers are git trailers (the last paragraph, `Name: value`), so
//! `git log --format=%(trailers)` reads them too. A message is memoir's
//! when it carries `Memoir-Consolidation` or `Memoir-Rollback`; the last
//! line of a name wins, so a body line that looks like a trailer does not.

/// A memory a version changed, as its message lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What happened to it.
    pub sign: Sign,
    /// Its key, `scope/slug`.
    pub key: String,
    /// Written by `remember`, `forget` or `resolve` since the last
    /// version, not by this consolidation's plan.
    pub direct: bool,
}

/// The mark of a listed change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// `+`: a memory added.
    Added,
    /// `~`: a memory changed (merged, decided, restored).
    Changed,
    /// `-`: a memory forgotten (expired, evicted, rolled away).
    Forgotten,
}

impl Sign {
    fn mark(self) -> char {
        match self {
            Sign::Added => '+',
            Sign::Changed => '~',
            Sign::Forgotten => '-',
        }
    }

    fn of(mark: char) -> Option<Sign> {
        match mark {
            '+' => Some(Sign::Added),
            '~' => Some(Sign::Changed),
            '-' => Some(Sign::Forgotten),
            _ => None,
        }
    }
}

/// What made the version: its trailers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made {
    /// A consolidation: the id of its `consolidate` log event.
    Consolidation {
        /// The event id (`Memoir-Consolidation`).
        event: String,
    },
    /// A rollback: the revision it rolled back to.
    Rollback {
        /// The revision as given (`Memoir-Rollback`).
        target: String,
    },
}

/// The suffix of a change written directly since the last version.
const DIRECT: &str = " (written directly)";
const CONSOLIDATION: &str = "Memoir-Consolidation:";
const ROLLBACK: &str = "Memoir-Rollback:";
const COUNTS: &str = "Memoir-Counts:";

/// A version commit's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionMessage {
    /// The first line (a message given with `-m` may hold more).
    pub summary: String,
    /// A paragraph before the changes: why an interrupted consolidation
    /// ran, what set-up a first version commits.
    pub prose: Option<String>,
    /// The memories it changed, in the order listed.
    pub changes: Vec<Change>,
    /// What made it.
    pub made: Made,
    /// `Memoir-Counts`: `name=n` pairs in their order (`added`, `changed`,
    /// `forgotten`, `conflicts`; a rollback's `restored`, `forgotten`);
    /// empty for none.
    pub counts: Vec<(String, u64)>,
}

impl VersionMessage {
    /// The message as committed: summary, prose, changes and trailers,
    /// each part followed by a blank line but the last.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n\n", self.summary.trim_end());
        if let Some(prose) = &self.prose {
            out.push_str(prose.trim_end());
            out.push_str("\n\n");
        }
        for c in &self.changes {
            let direct = if c.direct { DIRECT } else { "" };
            out.push_str(&format!("{} {}{direct}\n", c.sign.mark(), c.key));
        }
        if !self.changes.is_empty() {
            out.push('\n');
        }
        match &self.made {
            Made::Consolidation { event } => out.push_str(&format!("{CONSOLIDATION} {event}\n")),
            Made::Rollback { target } => out.push_str(&format!("{ROLLBACK} {target}\n")),
        }
        if !self.counts.is_empty() {
            let pairs: Vec<String> = self
                .counts
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            out.push_str(&format!("{COUNTS} {}\n", pairs.join(" ")));
        }
        out
    }

    /// A commit message read back; `None` unless memoir made it (a
    /// `Memoir-Consolidation` or `Memoir-Rollback` trailer). Lenient with
    /// what it does not need: a change line it cannot read is skipped.
    pub fn parse(message: &str) -> Option<VersionMessage> {
        let made = match (trailer(message, CONSOLIDATION), trailer(message, ROLLBACK)) {
            (Some(event), _) => Made::Consolidation { event },
            (None, Some(target)) => Made::Rollback { target },
            (None, None) => return None,
        };
        let counts = trailer(message, COUNTS)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|pair| {
                let (name, n) = pair.split_once('=')?;
                Some((name.to_string(), n.parse().ok()?))
            })
            .collect();
        let mut lines = message.lines();
        let summary = lines.next().unwrap_or("").to_string();
        let mut prose: Vec<&str> = Vec::new();
        let mut changes = Vec::new();
        for line in lines {
            if line.starts_with("Memoir-") {
                continue;
            }
            match change(line) {
                Some(c) => changes.push(c),
                None if changes.is_empty() && !line.trim().is_empty() => prose.push(line),
                None => {}
            }
        }
        Some(VersionMessage {
            summary,
            prose: (!prose.is_empty()).then(|| prose.join("\n")),
            changes,
            made,
            counts,
        })
    }
}

/// A change line: `+ key`, `~ key (written directly)`.
fn change(line: &str) -> Option<Change> {
    let mut chars = line.chars();
    let sign = Sign::of(chars.next()?)?;
    let rest = chars.as_str().strip_prefix(' ')?;
    let (key, direct) = match rest.strip_suffix(DIRECT) {
        Some(key) => (key, true),
        None => (rest, false),
    };
    // A key is `scope/slug`, one word.
    if !key.contains('/') || key.contains(char::is_whitespace) {
        return None;
    }
    Some(Change {
        sign,
        key: key.to_string(),
        direct,
    })
}

/// The value of the last `name` line of a message.
fn trailer(message: &str, name: &str) -> Option<String> {
    message
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consolidation() -> VersionMessage {
        VersionMessage {
            summary: "memoir: consolidate (1 added, 1 changed, 0 forgotten)".into(),
            prose: Some("The store's set-up: memory/config.yaml".into()),
            changes: vec![
                Change {
                    sign: Sign::Added,
                    key: "project/db".into(),
                    direct: false,
                },
                Change {
                    sign: Sign::Changed,
                    key: "project/ci".into(),
                    direct: true,
                },
            ],
            made: Made::Consolidation {
                event: "01KB0000000000000000000000".into(),
            },
            counts: vec![
                ("added".into(), 1),
                ("changed".into(), 1),
                ("forgotten".into(), 0),
                ("conflicts".into(), 0),
            ],
        }
    }

    #[test]
    fn a_message_renders_as_documented_and_parses_back() {
        let m = consolidation();
        let text = m.render();
        assert_eq!(
            text,
            "memoir: consolidate (1 added, 1 changed, 0 forgotten)\n\n\
             The store's set-up: memory/config.yaml\n\n\
             + project/db\n~ project/ci (written directly)\n\n\
             Memoir-Consolidation: 01KB0000000000000000000000\n\
             Memoir-Counts: added=1 changed=1 forgotten=0 conflicts=0\n"
        );
        assert_eq!(VersionMessage::parse(&text), Some(m));
        let rollback = VersionMessage {
            summary: "memoir: rollback to abc1234 (0 restored, 1 forgotten)".into(),
            prose: None,
            changes: vec![Change {
                sign: Sign::Forgotten,
                key: "task/x".into(),
                direct: false,
            }],
            made: Made::Rollback {
                target: "abc1234".into(),
            },
            counts: vec![("restored".into(), 0), ("forgotten".into(), 1)],
        };
        assert_eq!(VersionMessage::parse(&rollback.render()), Some(rollback));
    }

    #[test]
    fn only_memoirs_messages_parse_and_the_last_trailer_wins() {
        assert_eq!(
            VersionMessage::parse("hand edit\n\nMemoir-Counts: x=1\n"),
            None
        );
        let text = "s\n\n+ project/a\nMemoir-Counts: a line of the body\n\n\
                    Memoir-Consolidation: ev\nMemoir-Counts: added=1\n";
        let m = VersionMessage::parse(text).expect("memoir's");
        assert_eq!(m.counts, vec![("added".to_string(), 1)]);
        assert_eq!(m.changes.len(), 1);
        // A message with nothing but its summary and trailer.
        let bare = VersionMessage {
            summary: "memoir: consolidate (finished after an interruption)".into(),
            prose: None,
            changes: Vec::new(),
            made: Made::Consolidation { event: "ev".into() },
            counts: Vec::new(),
        };
        assert_eq!(
            bare.render(),
            "memoir: consolidate (finished after an interruption)\n\nMemoir-Consolidation: ev\n"
        );
        assert_eq!(VersionMessage::parse(&bare.render()), Some(bare));
    }
}
