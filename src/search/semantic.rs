//! Semantic recall: the keyword answer of a search fused with embeddings,
//! when the store's config names an embedder (`embeddings:`), with the
//! keyword answer alone whenever the embedder cannot answer.
//!
//! A query costs one embedding call over a warm cache: the memories'
//! vectors are cached in the local state by the fingerprint of their file
//! (`embed::Vectors`), and those missing (new or changed memories) ride in
//! the same call as the query while they fit one batch.

use crate::embed::{EmbedError, Embedder, Vectors};
use crate::index::Corpus;
use crate::model::config::EmbeddingsConfig;
use crate::search::hybrid;
use crate::search::rank;
use crate::search::results::{Hit, Options, Results};
use crate::store::Store;
use std::collections::{HashMap, HashSet};

/// A passage embedded is at most this many characters: embedding models
/// read a few hundred tokens, and a conversation's answer may sit anywhere
/// in it. A memory's similarity is its best piece's.
pub const CHUNK_CHARS: usize = 1200;
/// Consecutive short blocks of a body are joined into a passage of at
/// least this many characters (a one-line paragraph says too little to
/// embed alone).
pub const PASSAGE_MIN_CHARS: usize = 200;
/// The most pieces of a memory embedded (its description and the first
/// 63 passages of its body).
pub const MAX_CHUNKS: usize = 64;
/// What the cached vectors of a memory's pieces are keyed with besides its
/// fingerprint: a new way of cutting pieces must not reuse old vectors.
const PIECES_VERSION: &str = "passages-1";

/// A hybrid search fuses at least this many keyword candidates with the
/// similarities (more when the limit is higher).
pub const FUSION_CANDIDATES: usize = 100;

/// A wide keyword answer as `opts` asked for it: the weaker matches only
/// if asked, at most `opts.limit` items.
fn cut(keyword: Results, opts: &Options) -> Results {
    let mut keyword = if opts.weaker {
        keyword
    } else {
        keyword.relevant_only()
    };
    keyword.truncate(opts.limit);
    keyword
}

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
    // Fusion ranks every candidate, weaker keyword matches too.
    let wide = match semantic {
        None => opts.clone(),
        Some(_) => wide(opts),
    };
    let keyword = rank::search(corpus, query, &wide, &texts);
    with_keyword(store, corpus, query, keyword, opts, semantic)
}

/// The options a keyword search for a fusion runs with: at least
/// [`FUSION_CANDIDATES`] items, the weaker matches too.
pub fn wide(opts: &Options) -> Options {
    Options {
        limit: opts.limit.max(FUSION_CANDIDATES),
        weaker: true,
        ..opts.clone()
    }
}

/// [`search`] with the keyword answer given (searched with [`wide`]
/// options when `semantic` is set): the answer fused with the embeddings'
/// when their embedder answers, else the keyword answer as `opts` asks.
pub fn with_keyword(
    store: &Store,
    corpus: &Corpus,
    query: &str,
    keyword: Results,
    opts: &Options,
    semantic: Option<&Semantic>,
) -> (Results, Mode, Option<String>) {
    let (mut found, mode, warning) = match semantic {
        None => (cut(keyword, opts), Mode::Keyword, None),
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
                    cut(keyword, opts),
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
fn break_ties_by_access(store: &Store, hits: &mut [Hit], opts: &Options) {
    if !hits.windows(2).any(|w| w[0].rank == w[1].rank) {
        return;
    }
    let access = crate::local::access::load(&store.state.access_path());
    let now_ms = opts.today.0.saturating_mul(crate::model::time::DAY_MS);
    let weight = |h: &Hit| {
        let stat = access.get(&h.key.to_string());
        crate::local::access::weight(stat, h.summary.updated, now_ms)
    };
    // Stable: only runs of equal rank are reordered.
    hits.sort_by(|a, b| {
        b.relevant
            .cmp(&a.relevant)
            .then_with(|| b.rank.total_cmp(&a.rank))
            .then_with(|| weight(b).total_cmp(&weight(a)))
    });
}

/// The keyword answer fused with the similarities (see `search::hybrid`):
/// `keyword` holds every keyword candidate (searched with
/// [`FUSION_CANDIDATES`] and the weaker matches), `similar` every live
/// memory's similarity, most similar first.
fn fused(corpus: &Corpus, keyword: Results, similar: &[(&str, f64)], opts: &Options) -> Results {
    let sims: Vec<f64> = similar.iter().map(|(_, s)| *s).collect();
    let semantic: HashSet<&str> = hybrid::relevant(&sims, keyword.answered, keyword.best)
        .into_iter()
        .map(|i| similar[i].0)
        .collect();
    let found: HashSet<&str> = keyword.hits.iter().map(|h| h.path.as_str()).collect();
    // Memories no keyword found: the semantically relevant, and, for a
    // reader, the most similar up to the limit (unless no word of the
    // query is in the store at all: then it has nothing to say).
    let reader = if opts.weaker && !keyword.is_empty() {
        opts.limit
    } else {
        0
    };
    let similar_only: Vec<Hit> = similar
        .iter()
        .enumerate()
        .filter(|(i, (path, _))| {
            !found.contains(path) && (*i < reader + found.len() || semantic.contains(path))
        })
        .filter_map(|(_, &(path, sim))| {
            rank::memory_hit(corpus, path, sim.clamp(0.0, 1.0), 0.0, opts)
        })
        .collect();
    let similarity = hybrid::normalised(similar);
    let mut found = hybrid::fuse(
        keyword,
        similar_only,
        &similarity,
        &semantic,
        opts.limit,
        opts.weaker,
    );
    let cosine: HashMap<&str, f64> = similar.iter().copied().collect();
    for hit in &mut found.hits {
        hit.similarity = cosine.get(hit.path.as_str()).copied();
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
            "{}\u{0}{PIECES_VERSION}\u{0}{hash:016x}\u{0}{piece}",
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

/// The texts embedded for the memory at `path`, each after the
/// configured prefix; none if it cannot be read or parsed now. A memory
/// whose body fits one passage ([`CHUNK_CHARS`]) is one text, its
/// description and body; a longer one is its description, then each
/// passage of its body (`model::markdown::passages`: its paragraphs, lists
/// and code blocks, short ones joined up to [`PASSAGE_MIN_CHARS`]), at most
/// [`MAX_CHUNKS`] in all, so its similarity is its best passage's: the
/// turn of a conversation that answers, not a window's average.
fn embedded_pieces(store: &Store, config: &EmbeddingsConfig, path: &str) -> Option<Vec<String>> {
    let content = store.read_memory_file(path).ok()??;
    let m = crate::model::memory::Memory::parse(&content).ok()?;
    let body = m.body.trim();
    if body.chars().count() <= CHUNK_CHARS {
        let text = if body.is_empty() {
            m.description.clone()
        } else {
            format!("{}\n\n{body}", m.description)
        };
        return Some(vec![config.document_text(&text)]);
    }
    let passages = crate::model::markdown::passages(body, PASSAGE_MIN_CHARS, CHUNK_CHARS);
    let pieces = std::iter::once(m.description.clone())
        .chain(passages)
        .take(MAX_CHUNKS)
        .map(|text| config.document_text(&text))
        .collect();
    Some(pieces)
}
