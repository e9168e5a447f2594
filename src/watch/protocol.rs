//! The watcher's wire: one request line, an answer of lines ending in
//! `end`. Pure.
//!
//! ```text
//! client: since <token>|-
//! server: changes <token>      or      reset <token>
//!         <path>                       end
//!         ...
//!         end
//! ```
//!
//! Paths are relative to the store's root, with `/`. An answer cut short
//! (no `end`) is no answer: the client falls back to its full scan.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A point in one watcher's stream of events: its instance (random, so
/// that a restarted watcher or another clone's never matches) and how
/// many events it had counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    /// The watcher's instance.
    pub instance: u64,
    /// Its count of events at that point.
    pub seq: u64,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}:{}", self.instance, self.seq)
    }
}

impl Token {
    /// Parses `<16 hex>:<decimal>`.
    pub fn parse(s: &str) -> Option<Token> {
        let (instance, seq) = s.split_once(':')?;
        if instance.len() != 16 {
            return None;
        }
        Some(Token {
            instance: u64::from_str_radix(instance, 16).ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

/// The watcher's answer to `since`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Every path changed since the token asked about, as of `token`.
    Changes {
        /// The token to ask with next time.
        token: Token,
        /// The paths, relative to the store's root.
        paths: Vec<String>,
    },
    /// The watcher cannot say what changed since the token: scan
    /// everything; `token` vouches for what comes after.
    Reset {
        /// The token to ask with next time.
        token: Token,
    },
}

impl Answer {
    /// The token the answer is as of.
    pub fn token(&self) -> Token {
        match self {
            Answer::Changes { token, .. } | Answer::Reset { token } => *token,
        }
    }

    /// The answer as sent.
    pub fn render(&self) -> String {
        match self {
            Answer::Reset { token } => format!("reset {token}\nend\n"),
            Answer::Changes { token, paths } => {
                let mut out = format!("changes {token}\n");
                for p in paths {
                    out.push_str(p);
                    out.push('\n');
                }
                out.push_str("end\n");
                out
            }
        }
    }

    /// Parses an answer; `None` unless it is whole (ends in `end`).
    pub fn parse(text: &str) -> Option<Answer> {
        let body = text.strip_suffix("end\n")?;
        let mut lines = body.lines();
        let (kind, token) = lines.next()?.split_once(' ')?;
        let token = Token::parse(token)?;
        match kind {
            "reset" => lines.next().is_none().then_some(Answer::Reset { token }),
            "changes" => Some(Answer::Changes {
                token,
                paths: lines.map(str::to_string).collect(),
            }),
            _ => None,
        }
    }
}

/// The request line for `since` (`None`: the client has no token yet).
pub fn request(since: Option<&Token>) -> String {
    match since {
        Some(t) => format!("since {t}\n"),
        None => "since -\n".to_string(),
    }
}

/// Parses a request line: `Some(None)` for `since -`.
pub fn parse_request(line: &str) -> Option<Option<Token>> {
    let token = line.trim_end_matches('\n').strip_prefix("since ")?;
    if token == "-" {
        return Some(None);
    }
    Token::parse(token).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_requests_and_answers_read_back_as_written() {
        let t = Token {
            instance: 0xdead_beef,
            seq: 42,
        };
        assert_eq!(t.to_string(), "00000000deadbeef:42");
        assert_eq!(Token::parse(&t.to_string()), Some(t));
        assert_eq!(Token::parse("beef:42"), None);
        assert_eq!(parse_request(&request(Some(&t))), Some(Some(t)));
        assert_eq!(parse_request(&request(None)), Some(None));
        assert_eq!(parse_request("stop\n"), None);
        let changes = Answer::Changes {
            token: t,
            paths: vec!["memory/project/a.md".into(), "memory/log/d/w.md".into()],
        };
        assert_eq!(Answer::parse(&changes.render()), Some(changes.clone()));
        let reset = Answer::Reset { token: t };
        assert_eq!(Answer::parse(&reset.render()), Some(reset));
        // Cut short: no answer.
        let text = changes.render();
        assert_eq!(Answer::parse(&text[..text.len() - 4]), None);
        assert_eq!(Answer::parse("changes 00000000deadbeef:42\n"), None);
    }
}
