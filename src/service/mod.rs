//! The byte-level transports the optional services share: the embedding
//! service (`embed`) and the rerank service (`rerank`). Each speaks its own
//! JSON over the same two ways of reaching a service: a `POST` over plain
//! HTTP/1.1 (`http`), or a program run per call with the request on its
//! stdin and the answer on its stdout (`command`).
//!
//! A call here knows bytes, not JSON: it returns the answer's body, bounded
//! in time (the whole call within its timeout) and in size (at most the cap
//! given, `MAX_ANSWER_BYTES` outside tests), or a `CallError` that the
//! service's own error type names after its service. No message holds the
//! API key or the bytes sent. Every program memoir runs is started and
//! killed through `process` (its own process group, killed whole).

pub(crate) mod command;
pub(crate) mod http;
pub mod process;
#[cfg(test)]
pub(crate) mod test_server;

/// The most bytes an answer may take (64 MiB): 2,048 texts of 8,192
/// dimensions as JSON fit, an endless answer does not.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// Why a call brought back no answer body. Each service maps it one to one
/// onto its own error (`EmbedError`, `RerankError`), whose messages say
/// which service it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The service could not be reached (connection refused, no such host,
    /// the connection broke); the URL, never the key.
    Unreachable(String),
    /// The call took longer than its timeout, in milliseconds.
    Timeout {
        /// The timeout, in milliseconds.
        ms: u64,
    },
    /// The service answered with an HTTP status other than 200.
    Status(u16),
    /// The answer is no answer: not HTTP/1, badly framed, over the cap.
    BadResponse(String),
    /// The program could not run or failed: "`program` why".
    Command(String),
}

/// The timeout error of a call given `timeout`.
fn timed_out(timeout: std::time::Duration) -> CallError {
    CallError::Timeout {
        ms: timeout.as_millis().try_into().unwrap_or(u64::MAX),
    }
}

/// The error of an answer over `max` bytes.
fn too_large(max: usize) -> CallError {
    CallError::BadResponse(format!("more than {} MiB", max >> 20))
}

/// `text` cut to at most `max` characters, on one line, with any
/// occurrence of `secret` blanked: what an error may quote of another
/// program's words.
pub(crate) fn quote(text: &str, max: usize, secret: Option<&str>) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let line = match secret {
        Some(s) if !s.is_empty() => line.replace(s, "[redacted]"),
        _ => line.to_string(),
    };
    let mut out: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect();
    if line.chars().count() > max {
        out.push('…');
    }
    out
}
