//! Embeddings for semantic recall: the texts of memories and queries
//! turned into vectors by a service the store's config names
//! (`embeddings` in `memory/config.yaml`), and a local cache of them.
//!
//! Optional and outside the truth: the vectors live only in local state
//! (`vectors-<model>.bin`), keyed by the exact text embedded, so a cache
//! lost, damaged or of another version only costs calls to the service.
//! Two transports speak the same OpenAI-shaped JSON: a small HTTP/1.1
//! client for local servers (`http`: no TLS, no new dependency), and a
//! program run per call with the request on its stdin (`command`: anything
//! else, https providers through curl included); both are the byte-level
//! calls of `service`, shared with `rerank`. Every answer is checked
//! (`wire`) before it is cached (`vectors`).
//!
//! The library reads no environment: the CLI passes the API key in, read
//! from the variable the config names.

mod command;
mod http;
mod vectors;
mod wire;

pub use command::CommandEmbedder;
pub use http::HttpEmbedder;
pub use vectors::{cosine, embed_query, text_hash, Vectors};
pub use wire::check_vectors;

use crate::model::config::{EmbeddingsConfig, Endpoint};
use crate::service::quote;
use crate::service::CallError;
pub use crate::service::MAX_ANSWER_BYTES;
use std::path::Path;

/// The most dimensions a vector may have.
pub const MAX_DIM: usize = 8192;

/// Turns texts into vectors: one per text, in order, all of one dimension.
pub trait Embedder {
    /// Embeds `texts` in one call to the service.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// How many texts one call may carry ([`embed_query`] splits by it).
    fn batch_size(&self) -> usize {
        crate::model::config::DEFAULT_EMBED_BATCH
    }
}

/// Why texts could not be embedded. No message holds the API key or the
/// texts sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    /// The service could not be reached (connection refused, no such host,
    /// the connection broke).
    #[error("the embedding service is unreachable: {0}")]
    Unreachable(String),
    /// The call took longer than `timeout_ms`.
    #[error("the embedding service did not answer within {ms} ms")]
    Timeout {
        /// The timeout, in milliseconds.
        ms: u64,
    },
    /// The service answered with an HTTP status other than 200.
    #[error("the embedding service answered HTTP status {0}")]
    Status(u16),
    /// The answer is not what was asked for: not the JSON, too large, a
    /// vector missing, of mixed or impossible dimensions, not finite.
    #[error("the embedding service's answer is unusable: {0}")]
    BadResponse(String),
    /// The vectors' dimension is not the cached vectors': a new model
    /// behind the same name. The cache was emptied and is filled again.
    #[error(
        "the embedding model's vectors have {got} dimensions where the cache has {expected}: \
         the cached vectors were dropped and are embedded again"
    )]
    WrongDimension {
        /// The dimension of the cached vectors.
        expected: usize,
        /// The dimension of the vectors just received.
        got: usize,
    },
    /// The embedding command could not run or failed.
    #[error("the embedding command {0}")]
    Command(String),
}

/// The embedder `config` names: its command runs in `store_root`; an HTTP
/// request carries `api_key` as a bearer token (the CLI reads it from the
/// variable in `api_key_env`; a command reads its own environment, and the
/// key is only kept to be blanked out of its error messages).
pub fn embedder(
    config: &EmbeddingsConfig,
    store_root: &Path,
    api_key: Option<String>,
) -> Box<dyn Embedder> {
    match &config.endpoint {
        Endpoint::Http(url) => Box::new(HttpEmbedder::new(
            url.clone(),
            &config.model,
            api_key,
            config.timeout(),
            config.batch,
        )),
        Endpoint::Command(argv) => Box::new(CommandEmbedder::new(
            argv.clone(),
            store_root,
            &config.model,
            api_key,
            config.timeout(),
            config.batch,
        )),
    }
}

impl From<CallError> for EmbedError {
    fn from(e: CallError) -> EmbedError {
        match e {
            CallError::Unreachable(m) => EmbedError::Unreachable(m),
            CallError::Timeout { ms } => EmbedError::Timeout { ms },
            CallError::Status(code) => EmbedError::Status(code),
            CallError::BadResponse(m) => EmbedError::BadResponse(m),
            CallError::Command(m) => EmbedError::Command(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embed_quote_is_one_short_line_without_the_secret() {
        assert_eq!(
            quote("\n  boom: sk-1 bad\nmore", 200, Some("sk-1")),
            "boom: [redacted] bad"
        );
        assert_eq!(quote(&"x".repeat(300), 200, None).chars().count(), 201);
        assert_eq!(quote("a\u{1b}[31mb", 200, None), "a [31mb");
    }
}
