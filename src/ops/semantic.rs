//! Semantic recall: the keyword answer of a search fused with embeddings,
//! when the store's config names an embedder (`embeddings:`), with the
//! keyword answer alone whenever the embedder cannot answer.
//!
//! A query costs one embedding call over a warm cache: the memories'
//! vectors are cached in the local state by the fingerprint of their file
//! (`embed::Vectors`), and those missing (new or changed memories) ride in
//! the same call as the query while they fit one batch.

use crate::embed::{EmbedError, Embedder, Vectors};
use crate::model::config::EmbeddingsConfig;
use crate::search::hybrid;
use crate::search::rank::{self, Corpus, Options, Results};
use crate::store::Store;
use std::collections::{HashMap, HashSet};

/// A memory is embedded in pieces of this many characters of its body
/// (each after its description): embedding models read a few hundred
/// tokens, and a conversation's answer may sit anywhere in it. Its
/// similarity is its best piece's.
pub const CHUNK_CHARS: usize = 1200;
/// How much consecutive pieces overlap, in characters.
pub const CHUNK_OVERLAP: usize = 200;
/// The most pieces of a memory embedded (its first 16,000 characters or so).
pub const MAX_CHUNKS: usize = 16;

/// How a search was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// By the keyword model alone.
    #[default]
    Keyword,
    /// By the keyword model fused with embeddings.
    Hybrid,
}

impl Mode {
    /// Its name in JSON: `keyword` or `hybrid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Keyword => "keyword",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// What semantic recall needs beyond the store: its embedder settings and
/// the API key the CLI read from the variable they name.
#[derive(Debug, Clone)]
pub struct Semantic {
    /// The store's `embeddings:` section.
    pub config: EmbeddingsConfig,
    /// The key, if the section names a variable and it is set.
    pub api_key: Option<String>,
}

impl Semantic {
    /// The semantic recall a store's config asks for, if any; `api_key`
    /// reads an environment variable by name (the library reads none).
    pub fn of(store: &Store, api_key: impl Fn(&str) -> Option<String>) -> Option<Semantic> {
        let config = store.config.embeddings.clone()?;
        let api_key = config.api_key_env.as_deref().and_then(api_key);
        Some(Semantic { config, api_key })
    }
}

/// The search's answer: keyword, or hybrid when `semantic` is set and its
/// embedder answers; on any failure, the keyword answer and the warning
/// saying why.
pub fn search(
    store: &Store,
    corpus: &Corpus,
    query: &str,
    opts: &Options,
    semantic: Option<&Semantic>,
) -> (Results, Mode, Option<String>) {
    let texts = |path: &str| store.read_memory_file(path).ok().flatten();
    let keyword = rank::search(corpus, query, opts, &texts);
    let (mut found, mode, warning) = match semantic {
        None => (keyword, Mode::Keyword, None),
        Some(semantic) => {
            let embedder =
                crate::embed::embedder(&semantic.config, &store.root, semantic.api_key.clone());
            let similar = similarities(
                store,
                corpus,
                query,
                opts,
                &semantic.config,
                embedder.as_ref(),
            );
            match similar {
                Ok(similar) => (fused(corpus, keyword, &similar, opts), Mode::Hybrid, None),
                Err(e) => (
                    keyword,
                    Mode::Keyword,
                    Some(format!(
                        "semantic recall unavailable ({e}); keyword results only"
                    )),
                ),
            }
        }
    };
    break_ties_by_access(store, &mut found.hits, opts);
    (found, mode, warning)
}

/// Among hits of equal rank, the one this clone's agents were given more,
/// and more lately, first (`local::access::weight`; then by path, as
/// before). The access file is read only when there is a tie to break.
fn break_ties_by_access(store: &Store, hits: &mut [rank::Hit], opts: &Options) {
    if !hits.windows(2).any(|w| w[0].rank == w[1].rank) {
        return;
    }
    const DAY_MS: i64 = 86_400_000;
    let access = crate::local::access::load(&store.state.access_path());
    let now_ms = opts.today.0.saturating_mul(DAY_MS);
    let weight = |h: &rank::Hit| {
        let stat = access.get(&h.key.to_string());
        crate::local::access::weight(stat, h.summary.updated, now_ms)
    };
    // Stable: only runs of equal rank are reordered.
    hits.sort_by(|a, b| {
        b.rank
            .total_cmp(&a.rank)
            .then_with(|| weight(b).total_cmp(&weight(a)))
    });
}

/// The keyword answer fused with the similarities (see `search::hybrid`).
fn fused(corpus: &Corpus, keyword: Results, similar: &[(&str, f64)], opts: &Options) -> Results {
    let sims: Vec<f64> = similar.iter().map(|(_, s)| *s).collect();
    let answered = !keyword.is_empty();
    let semantic = hybrid::relevant(&sims, answered, keyword.best)
        .into_iter()
        .filter_map(|i| {
            let (path, sim) = similar[i];
            rank::memory_hit(corpus, path, sim.clamp(0.0, 1.0), 0.0, opts)
        })
        .collect();
    let by_similarity: Vec<&str> = similar.iter().map(|(p, _)| *p).collect();
    let mut found = hybrid::fuse(keyword, semantic, &by_similarity, opts.limit);
    let similarity: HashMap<&str, f64> = similar.iter().copied().collect();
    for hit in &mut found.hits {
        hit.similarity = similarity.get(hit.path.as_str()).copied();
    }
    found
}

/// Every live memory's similarity to the query, most similar first (by
/// path); the pieces of memories not cached yet are embedded in the same
/// calls as the query, and the cache saved.
fn similarities<'a>(
    store: &Store,
    corpus: &'a Corpus,
    query: &str,
    opts: &Options,
    config: &EmbeddingsConfig,
    embedder: &dyn Embedder,
) -> Result<Vec<(&'a str, f64)>, EmbedError> {
    let live = rank::live_memories(corpus, opts.today);
    // A piece's vector is cached by its memory file's fingerprint, its
    // place and the prefix it was embedded with.
    let key = |hash: u64, piece: usize| {
        crate::embed::text_hash(&format!(
            "{}\u{0}{hash:016x}\u{0}{piece}",
            config.document_prefix
        ))
    };
    let path = store.vectors_path(&config.model);
    let mut vectors = Vectors::load(&path, &config.model);
    let mut missing: Vec<(u64, String)> = Vec::new();
    for (rel, hash) in &live {
        if vectors.get_key(key(*hash, 0)).is_some() {
            continue;
        }
        // The first piece last: a memory whose first piece is cached has
        // all its pieces cached (calls are made in order).
        let pieces = embedded_pieces(store, config, rel).unwrap_or_default();
        for (i, text) in pieces.into_iter().enumerate().rev() {
            missing.push((key(*hash, i), text));
        }
    }
    let items: Vec<(u64, &str)> = missing.iter().map(|(k, t)| (*k, t.as_str())).collect();
    let result =
        crate::embed::embed_query(&mut vectors, embedder, &items, &config.query_text(query));
    if vectors.changed() {
        let keep: HashSet<u64> = live
            .iter()
            .flat_map(|(_, h)| (0..MAX_CHUNKS).map(|i| key(*h, i)))
            .collect();
        // A cache that cannot be written costs only calls next time.
        let _ = vectors.save(&path, |k| keep.contains(&k));
    }
    let (query_vector, _calls) = result?;
    let mut similar: Vec<(&'a str, f64)> = live
        .iter()
        .filter_map(|(rel, hash)| {
            let best = (0..MAX_CHUNKS)
                .map_while(|i| vectors.get_key(key(*hash, i)))
                .map(|v| f64::from(crate::embed::cosine(&query_vector, v)))
                .reduce(f64::max)?;
            Some((*rel, best))
        })
        .collect();
    similar.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    Ok(similar)
}

/// The texts embedded for the memory at `path`: its description, then a
/// piece of its body ([`CHUNK_CHARS`], overlapping by [`CHUNK_OVERLAP`],
/// at most [`MAX_CHUNKS`]), each after the configured prefix; none if it
/// cannot be read or parsed now.
fn embedded_pieces(store: &Store, config: &EmbeddingsConfig, path: &str) -> Option<Vec<String>> {
    let content = store.read_memory_file(path).ok()??;
    let m = crate::model::memory::Memory::parse(&content).ok()?;
    let body: Vec<char> = m.body.trim().chars().collect();
    let step = CHUNK_CHARS - CHUNK_OVERLAP;
    let pieces = (0..body.len().max(1))
        .step_by(step)
        // A piece that would only repeat the last one's overlap is none.
        .take_while(|&at| at == 0 || at + CHUNK_OVERLAP < body.len())
        .take(MAX_CHUNKS)
        .map(|at| {
            let piece: String = body[at.min(body.len())..(at + CHUNK_CHARS).min(body.len())]
                .iter()
                .collect();
            config.document_text(&format!("{}\n\n{piece}", m.description))
        })
        .collect();
    Some(pieces)
}
