//! Reranking: a service the store's config names (`rerank` in
//! `memory/config.yaml`) that scores candidate texts against a query,
//! usually a cross-encoder reading both together, which judges relevance
//! more finely than keywords or embeddings compared apart.
//!
//! Optional and outside the truth: nothing is cached or written, and a
//! caller that gets an error decides without the scores. Two transports
//! speak the common `/v1/rerank` JSON (`wire`): a `POST` over plain HTTP
//! (`http`) and a program run per call with the request on its stdin
//! (`command`), both the byte-level calls of `service`, shared with
//! `embed`. Every answer is checked before a score is returned: one
//! finite score per text, mapped back by its index, never by the order or
//! the count the server chose.
//!
//! The library reads no environment: the CLI passes the API key in, read
//! from the variable the config names.

mod command;
mod http;
mod wire;

pub use command::CommandReranker;
pub use http::HttpReranker;

use crate::model::config::{Endpoint, RerankConfig};
use crate::service::CallError;
use std::path::Path;

/// Scores texts against a query.
pub trait Reranker {
    /// The relevance of each of `documents` to `query`, one score per
    /// document in the documents' order, in one call to the service (the
    /// caller cuts the documents to `rerank.top_n` first). Higher is more
    /// relevant; the scale is the model's own (logits, or 0 to 1), so only
    /// the order within one answer means anything.
    fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f64>, RerankError>;
}

/// Why texts could not be reranked. No message holds the API key, the
/// query or the texts sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RerankError {
    /// The service could not be reached (connection refused, no such host,
    /// the connection broke).
    #[error("the rerank service is unreachable: {0}")]
    Unreachable(String),
    /// The call took longer than `timeout_ms`.
    #[error("the rerank service did not answer within {ms} ms")]
    Timeout {
        /// The timeout, in milliseconds.
        ms: u64,
    },
    /// The service answered with an HTTP status other than 200.
    #[error("the rerank service answered HTTP status {0}")]
    Status(u16),
    /// The answer is not what was asked for: not the JSON, too large, a
    /// document without a score or with two, an index out of range, a
    /// score not finite.
    #[error("the rerank service's answer is unusable: {0}")]
    BadResponse(String),
    /// The rerank command could not run or failed.
    #[error("the rerank service's command {0}")]
    Command(String),
}

impl From<CallError> for RerankError {
    fn from(e: CallError) -> RerankError {
        match e {
            CallError::Unreachable(m) => RerankError::Unreachable(m),
            CallError::Timeout { ms } => RerankError::Timeout { ms },
            CallError::Status(code) => RerankError::Status(code),
            CallError::BadResponse(m) => RerankError::BadResponse(m),
            CallError::Command(m) => RerankError::Command(m),
        }
    }
}

/// The reranker `config` names: its command runs in `store_root`; an HTTP
/// request carries `api_key` as a bearer token (the CLI reads it from the
/// variable in `api_key_env`; a command reads its own environment, and the
/// key is only kept to be blanked out of its error messages).
pub fn reranker(
    config: &RerankConfig,
    store_root: &Path,
    api_key: Option<String>,
) -> Box<dyn Reranker> {
    match &config.endpoint {
        Endpoint::Http(url) => Box::new(HttpReranker::new(
            url.clone(),
            config.model.as_deref(),
            api_key,
            config.timeout(),
        )),
        Endpoint::Command(argv) => Box::new(CommandReranker::new(
            argv.clone(),
            store_root,
            config.model.as_deref(),
            api_key,
            config.timeout(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;

    #[test]
    fn rerank_errors_say_which_service() {
        let e: RerankError = CallError::Timeout { ms: 300 }.into();
        assert_eq!(
            e.to_string(),
            "the rerank service did not answer within 300 ms"
        );
        let e: RerankError = CallError::Command("`sh` failed (exit status: 1)".into()).into();
        assert_eq!(
            e.to_string(),
            "the rerank service's command `sh` failed (exit status: 1)"
        );
        assert_eq!(
            RerankError::from(CallError::Status(503)).to_string(),
            "the rerank service answered HTTP status 503"
        );
    }

    #[test]
    fn rerank_reranker_follows_the_config() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_reranker.py");
        let config = Config::parse(&format!(
            "rerank:\n  command: [python3, {}]\n  model: fake\n",
            script.display()
        ))
        .unwrap()
        .rerank
        .unwrap();
        let r = reranker(&config, &std::env::temp_dir(), None);
        let scores = r
            .rerank(
                "staging database url",
                &[
                    "the database of staging".into(),
                    "deploys on fridays".into(),
                ],
            )
            .unwrap();
        // Two of the query's three words; the fake's floats pass through
        // JSON, so within a hair.
        assert!(
            (scores[0] - 2.0 / 3.0).abs() < 1e-12 && scores[1] == 0.0,
            "{scores:?}"
        );
        // Nothing to score, nothing run.
        let config = Config::parse("rerank:\n  command: [/no/such/program]\n")
            .unwrap()
            .rerank
            .unwrap();
        let r = reranker(&config, &std::env::temp_dir(), None);
        assert_eq!(r.rerank("q", &[]), Ok(Vec::new()));
        assert!(matches!(
            r.rerank("q", &["d".into()]),
            Err(RerankError::Command(m)) if m.contains("cannot run")
        ));
    }
}
