//! The optional reader for injection: when the store's config names a
//! reranker (`rerank:`), `context` sends the prompt and its best
//! candidates to it in one call and injects what it scores at least
//! `rerank.min_score`; any failure is one warning and the keyword (or
//! hybrid) decision without it, as embeddings fall back.
//!
//! A cross-encoder reads the prompt and each memory together, which is
//! what words and cosines cannot do: tell "what is a feature flag, in
//! general" from "which feature-flag service do we use". No reranker
//! weights can be fetched in this workplace, so the gain is not measured
//! here (`docs/search.md`); the tests use a deterministic fake.

use crate::model::config::RerankConfig;
use crate::model::memory::Memory;
use crate::rerank::Reranker;
use crate::search::inject::MAX_INJECTED;
use crate::search::results::{Item, Results};
use crate::store::Store;

/// What the reranker needs beyond the store: its settings and the API key
/// the CLI read from the variable they name.
#[derive(Debug, Clone)]
pub struct Rerank {
    /// The store's `rerank:` section.
    pub config: RerankConfig,
    /// The key, if the section names a variable and it is set.
    pub api_key: Option<String>,
}

impl Rerank {
    /// The reranker a store's config asks for, if any; `api_key` reads an
    /// environment variable by name (the library reads none).
    pub fn of(store: &Store, api_key: impl Fn(&str) -> Option<String>) -> Option<Rerank> {
        let config = store.config.rerank.clone()?;
        let api_key = config.api_key_env.as_deref().and_then(api_key);
        Some(Rerank { config, api_key })
    }
}

/// The candidates `found` (relevant and weaker, best first) decided by the
/// reranker: the first `top_n` are scored in one call, and those scoring
/// at least `min_score` are relevant, best score first, at most
/// [`MAX_INJECTED`]. `Err` holds the warning when it could not answer.
pub fn decide(
    store: &Store,
    query: &str,
    found: &Results,
    rerank: &Rerank,
) -> Result<Results, String> {
    let reranker = crate::rerank::reranker(&rerank.config, &store.root, rerank.api_key.clone());
    decide_with(store, query, found, &rerank.config, reranker.as_ref())
}

/// [`decide`] with the reranker given.
fn decide_with(
    store: &Store,
    query: &str,
    found: &Results,
    config: &RerankConfig,
    reranker: &dyn Reranker,
) -> Result<Results, String> {
    let items: Vec<Item> = found.ranked().into_iter().take(config.top_n).collect();
    if items.is_empty() {
        return Ok(Results::default());
    }
    // What the reader reads of each: a memory's description and body, a
    // note's text.
    let documents: Vec<String> = items
        .iter()
        .map(|item| match item {
            Item::Memory(h) => store
                .read_memory_file(&h.path)
                .ok()
                .flatten()
                .and_then(|c| Memory::parse(&c).ok())
                .map_or_else(
                    || h.summary.description.clone(),
                    |m| format!("{}\n\n{}", m.description, m.body.trim()),
                ),
            Item::Note(n) => n.text.clone(),
        })
        .collect();
    let scores = reranker
        .rerank(query, &documents)
        .map_err(|e| format!("reranking unavailable ({e}); injecting without it"))?;
    let mut scored: Vec<(f64, &Item)> = scores
        .into_iter()
        .zip(&items)
        .filter(|(s, _)| *s >= config.min_score)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out = Results {
        best: found.best,
        ..Results::default()
    };
    for (score, item) in scored.into_iter().take(MAX_INJECTED) {
        match item {
            Item::Memory(h) => {
                let mut h = (*h).clone();
                h.rank = score;
                h.relevant = true;
                out.hits.push(h);
            }
            Item::Note(n) => {
                let mut n = (*n).clone();
                n.rank = score;
                n.relevant = true;
                out.notes.push(n);
            }
        }
    }
    out.answered = !out.is_empty();
    Ok(out)
}
