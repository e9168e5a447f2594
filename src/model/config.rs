//! The store's configuration: `memory/config.yaml`, versioned with the store.

use crate::model::key::check_scope;
use serde::Deserialize;

/// The config file's path relative to the store root.
pub const CONFIG_PATH: &str = "memory/config.yaml";

/// Settings shared by everyone who uses the store.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Scope folders a memory may live in.
    pub scopes: Vec<String>,
    /// Writes with a lower confidence are refused.
    pub min_confidence: f64,
    /// Lines MEMORY.md's generated block may take.
    pub index_budget: usize,
    /// Word-set similarity (0..1) at which another memory is a near-duplicate.
    pub near_duplicate: f64,
    /// Most memories a scope may hold; consolidation evicts the least
    /// valuable past it. Off (empty) by default.
    pub capacity: std::collections::BTreeMap<String, usize>,
    /// Where memory texts are embedded for semantic recall (`embeddings`);
    /// off (`None`) by default.
    pub embeddings: Option<EmbeddingsConfig>,
    /// The service that scores candidates against a query (`rerank`);
    /// off (`None`) by default.
    pub rerank: Option<RerankConfig>,
    /// What `memoir context` keeps of each injection in the local state
    /// (`memoir seen`): the query, only its hash, or nothing.
    pub receipts: Receipts,
    /// Where `user`-scope memories are written: each person's own store
    /// (the default), or this repository, shared with everyone.
    pub user_store: UserStore,
    /// Log entries no reader can use (malformed, or for an unknown scope)
    /// that the team has looked at and accepts, by the blob id of the
    /// entry's bytes: history keeps them, and `check` passes them.
    pub accepted_entries: Vec<String>,
}

/// Where `user/…` memories live (`user_store:` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UserStore {
    /// In the person's own store, outside the repository (shared by all of
    /// their projects, never committed here).
    #[default]
    Personal,
    /// In this repository's `memory/user/`, as any scope.
    Shared,
}

/// How much of a `context` call its receipt keeps (`receipts:` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Receipts {
    /// The query text itself (secrets redacted).
    #[default]
    Full,
    /// Only a hash of the query: a teammate's prompts are not kept verbatim.
    Hash,
    /// No receipt at all.
    Off,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            scopes: vec!["user".into(), "project".into(), "task".into()],
            min_confidence: 0.0,
            index_budget: 200,
            near_duplicate: 0.8,
            capacity: Default::default(),
            receipts: Receipts::Full,
            embeddings: None,
            rerank: None,
            user_store: UserStore::Personal,
            accepted_entries: Vec::new(),
        }
    }
}

/// How long one embedding call may take by default, in milliseconds.
pub const DEFAULT_EMBED_TIMEOUT_MS: u64 = 5000;
/// How many texts one embedding call sends by default.
pub const DEFAULT_EMBED_BATCH: usize = 64;
/// The longest `query_prefix` or `document_prefix`, in bytes.
const MAX_PREFIX: usize = 256;
/// The longest `model` name, in bytes.
const MAX_MODEL: usize = 256;
/// How long one rerank call may take by default, in milliseconds.
pub const DEFAULT_RERANK_TIMEOUT_MS: u64 = DEFAULT_EMBED_TIMEOUT_MS;
/// How many candidates one rerank call sends at most by default.
pub const DEFAULT_RERANK_TOP_N: usize = 10;
/// The most candidates `rerank.top_n` may allow.
pub const MAX_RERANK_TOP_N: usize = 100;

/// The `embeddings` section: the service that turns memory texts and
/// queries into vectors for semantic recall. Only names and places live
/// here: the file is committed, so the API key never does (`api_key_env`
/// names the environment variable the CLI reads it from).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawEmbeddings")]
pub struct EmbeddingsConfig {
    /// Where the texts are sent: `url` or `command`, exactly one.
    pub endpoint: Endpoint,
    /// The model's name, sent as `"model"`; the vector cache is kept per
    /// model name.
    pub model: String,
    /// The name of the environment variable holding the API key, if any.
    pub api_key_env: Option<String>,
    /// How long one call may take, in milliseconds (1..=600000).
    pub timeout_ms: u64,
    /// Texts per call (1..=2048).
    pub batch: usize,
    /// Prepended to a query before it is embedded (e5 models want `query: `).
    pub query_prefix: String,
    /// Prepended to a memory's text before it is embedded (`passage: `).
    pub document_prefix: String,
}

/// Where a service's requests go (`embeddings`, `rerank`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An endpoint over plain HTTP/1.1 (`url`): OpenAI-compatible for
    /// embeddings, of the common `/v1/rerank` shape for rerank.
    Http(HttpUrl),
    /// A program (`command`, its argv) that reads the request on stdin and
    /// writes the answer on stdout.
    Command(Vec<String>),
}

/// A parsed `http://` URL: what a request needs to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// The host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// The port (80 when the URL names none).
    pub port: u16,
    /// The path and query, starting with `/`.
    pub path: String,
}

impl HttpUrl {
    /// Parses `http://host[:port][/path]`. Only plain HTTP: memoir speaks
    /// to local servers itself and leaves TLS to a `command` (curl).
    pub fn parse(url: &str) -> Result<HttpUrl, String> {
        HttpUrl::parse_field(url, "url")
    }

    /// [`HttpUrl::parse`], its errors naming `field` (`embeddings.url`).
    pub fn parse_field(url: &str, field: &str) -> Result<HttpUrl, String> {
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(format!(
                "`{field}` must start with http:// (memoir speaks plain HTTP to a local \
                 server; for https, use `command` with curl, see docs/format.md), not `{}`",
                url.split("://").next().unwrap_or(url)
            ));
        };
        let rest = rest.split('#').next().unwrap_or("");
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => rest.split_at(i),
            None => (rest, "/"),
        };
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        // The path goes on the request line as it is: a space or a line
        // break there would let the config forge headers.
        if !path.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "`{field}`'s path must be printable ASCII without spaces"
            ));
        }
        if authority.contains('@') {
            return Err(format!(
                "`{field}` must not hold credentials (the file is committed): \
                 name an environment variable in `api_key_env`"
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(format!("`{field}` has an unclosed `[`"));
            };
            if host.is_empty()
                || !host
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            {
                return Err(format!("`{field}` has a bad IPv6 address `{host}`"));
            }
            match after.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None if after.is_empty() => (host, None),
                None => return Err(format!("`{field}` has text after its IPv6 address")),
            }
        } else {
            let (host, port) = match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            };
            let host_ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_');
            if host.is_empty() || !host.bytes().all(host_ok) {
                return Err(format!("`{field}` needs a host: http://HOST[:PORT]/PATH"));
            }
            (host, port)
        };
        let port = match port {
            None => 80,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => return Err(format!("`{field}` has a bad port `{p}`")),
            },
        };
        Ok(HttpUrl {
            host: host.to_string(),
            port,
            path,
        })
    }

    /// The `Host` header's value: `host:port`, an IPv6 address bracketed.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority(), self.path)
    }
}

impl EmbeddingsConfig {
    /// The text embedded for the query `query`: the query prefix and it.
    pub fn query_text(&self, query: &str) -> String {
        format!("{}{query}", self.query_prefix)
    }

    /// The text embedded for a memory's text: the document prefix and it.
    pub fn document_text(&self, text: &str) -> String {
        format!("{}{text}", self.document_prefix)
    }

    /// How long one call may take.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms)
    }
}

/// The `embeddings` section as written, before it is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEmbeddings {
    url: Option<String>,
    command: Option<Vec<String>>,
    model: Option<String>,
    api_key_env: Option<String>,
    timeout_ms: Option<u64>,
    batch: Option<usize>,
    query_prefix: Option<String>,
    document_prefix: Option<String>,
}

impl TryFrom<RawEmbeddings> for EmbeddingsConfig {
    type Error = String;

    fn try_from(raw: RawEmbeddings) -> Result<EmbeddingsConfig, String> {
        const SECTION: &str = "embeddings";
        let endpoint = endpoint(SECTION, raw.url, raw.command)?;
        let model = raw.model.unwrap_or_default();
        if model.trim().is_empty() {
            return Err(
                "`embeddings.model` must name the model (it is sent, and keys the cache)".into(),
            );
        }
        check_model(SECTION, &model)?;
        check_api_key_env(SECTION, raw.api_key_env.as_deref())?;
        let timeout_ms = timeout_ms(SECTION, raw.timeout_ms, DEFAULT_EMBED_TIMEOUT_MS)?;
        let batch = raw.batch.unwrap_or(DEFAULT_EMBED_BATCH);
        if !(1..=2048).contains(&batch) {
            return Err("`embeddings.batch` must be between 1 and 2048".into());
        }
        let query_prefix = raw.query_prefix.unwrap_or_default();
        let document_prefix = raw.document_prefix.unwrap_or_default();
        if query_prefix.len() > MAX_PREFIX || document_prefix.len() > MAX_PREFIX {
            return Err(format!(
                "`embeddings.query_prefix` and `document_prefix` are at most {MAX_PREFIX} bytes"
            ));
        }
        Ok(EmbeddingsConfig {
            endpoint,
            model,
            api_key_env: raw.api_key_env,
            timeout_ms,
            batch,
            query_prefix,
            document_prefix,
        })
    }
}

/// The reranker's score a candidate needs to be injected, by default.
pub const DEFAULT_RERANK_MIN_SCORE: f64 = 0.5;

/// The `rerank` section: the service that scores candidate memories
/// against a query (the common `/v1/rerank` shape of llama.cpp's server,
/// vLLM, LocalAI, Jina and Cohere). As with `embeddings`, only names and
/// places live here, never the API key.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawRerank")]
pub struct RerankConfig {
    /// Where the candidates are sent: `url` or `command`, exactly one.
    pub endpoint: Endpoint,
    /// The model's name, sent as `"model"` when set (a server that serves
    /// one model needs none).
    pub model: Option<String>,
    /// The name of the environment variable holding the API key, if any.
    pub api_key_env: Option<String>,
    /// How long one call may take, in milliseconds (1..=600000).
    pub timeout_ms: u64,
    /// The most candidates one call sends (1..=100; 10 by default): the
    /// caller cuts its candidates to it before calling.
    pub top_n: usize,
    /// A candidate is injected when the reranker scores it at least this
    /// (0.5 by default: a cross-encoder's probability that it is relevant).
    pub min_score: f64,
}

impl RerankConfig {
    /// How long one call may take.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms)
    }
}

/// The `rerank` section as written, before it is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRerank {
    url: Option<String>,
    command: Option<Vec<String>>,
    model: Option<String>,
    api_key_env: Option<String>,
    timeout_ms: Option<u64>,
    top_n: Option<usize>,
    min_score: Option<f64>,
}

impl TryFrom<RawRerank> for RerankConfig {
    type Error = String;

    fn try_from(raw: RawRerank) -> Result<RerankConfig, String> {
        const SECTION: &str = "rerank";
        let endpoint = endpoint(SECTION, raw.url, raw.command)?;
        if let Some(model) = &raw.model {
            if model.trim().is_empty() {
                return Err(
                    "`rerank.model` must name the model, or be left out (it is optional)".into(),
                );
            }
            check_model(SECTION, model)?;
        }
        check_api_key_env(SECTION, raw.api_key_env.as_deref())?;
        let timeout_ms = timeout_ms(SECTION, raw.timeout_ms, DEFAULT_RERANK_TIMEOUT_MS)?;
        let top_n = raw.top_n.unwrap_or(DEFAULT_RERANK_TOP_N);
        if !(1..=MAX_RERANK_TOP_N).contains(&top_n) {
            return Err(format!(
                "`rerank.top_n` must be between 1 and {MAX_RERANK_TOP_N}"
            ));
        }
        let min_score = raw.min_score.unwrap_or(DEFAULT_RERANK_MIN_SCORE);
        if !min_score.is_finite() {
            return Err("`rerank.min_score` must be a number".into());
        }
        Ok(RerankConfig {
            endpoint,
            model: raw.model,
            api_key_env: raw.api_key_env,
            timeout_ms,
            top_n,
            min_score,
        })
    }
}

// The checks a service's section shares, each message naming the
// section's field (`embeddings.url`, `rerank.url`).

/// The endpoint of `section`: its `url` or its `command`, exactly one.
fn endpoint(
    section: &str,
    url: Option<String>,
    command: Option<Vec<String>>,
) -> Result<Endpoint, String> {
    match (url, command) {
        (Some(url), None) => Ok(Endpoint::Http(HttpUrl::parse_field(
            &url,
            &format!("{section}.url"),
        )?)),
        (None, Some(argv)) => {
            if argv.first().is_none_or(|a| a.is_empty()) {
                return Err(format!(
                    "`{section}.command` must name a program: [program, args...]"
                ));
            }
            if argv.iter().any(|a| a.contains('\0')) {
                return Err(format!("`{section}.command` must not hold a NUL byte"));
            }
            Ok(Endpoint::Command(argv))
        }
        (Some(_), Some(_)) => Err(format!("`{section}` takes `url` or `command`, not both")),
        (None, None) => Err(format!(
            "`{section}` needs `url` (an http:// endpoint) or `command` (argv)"
        )),
    }
}

/// A model name that can go into a request: printable, bounded.
fn check_model(section: &str, model: &str) -> Result<(), String> {
    if model.len() > MAX_MODEL || model.chars().any(char::is_control) {
        return Err(format!(
            "`{section}.model` must be printable and at most {MAX_MODEL} bytes"
        ));
    }
    Ok(())
}

/// `api_key_env`, when set, is a variable's name, not a key pasted in.
fn check_api_key_env(section: &str, name: Option<&str>) -> Result<(), String> {
    let Some(name) = name else {
        return Ok(());
    };
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !first_ok || !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') || name.len() > 128 {
        return Err(format!(
            "`{section}.api_key_env` is the *name* of an environment variable \
             (letters, digits, `_`), never the key itself"
        ));
    }
    Ok(())
}

/// `timeout_ms`, or `default` when unset: 1 ms to 10 minutes.
fn timeout_ms(section: &str, ms: Option<u64>, default: u64) -> Result<u64, String> {
    let ms = ms.unwrap_or(default);
    if !(1..=600_000).contains(&ms) {
        return Err(format!(
            "`{section}.timeout_ms` must be between 1 and 600000"
        ));
    }
    Ok(ms)
}

/// Why the config file is unusable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ConfigError {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Config {
    /// Whether `scope` is one of the scope folders a memory may live in.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Parses and validates the config file's text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        crate::model::yaml_bounds::check(text).map_err(|e| ConfigError {
            line: Some(e.line + 1),
            message: e.message,
        })?;
        let config: Config = serde_yaml::from_str(text).map_err(|e| ConfigError {
            line: e.location().map(|l| l.line()),
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_string(),
        })?;
        let bad = |message: String| ConfigError {
            line: None,
            message,
        };
        for s in &config.scopes {
            check_scope(s).map_err(|e| bad(e.to_string()))?;
        }
        if !(0.0..=1.0).contains(&config.min_confidence) {
            return Err(bad("`min_confidence` must be between 0 and 1".into()));
        }
        if !(0.0..=1.0).contains(&config.near_duplicate) {
            return Err(bad("`near_duplicate` must be between 0 and 1".into()));
        }
        if let Some(s) = config.capacity.keys().find(|s| !config.scopes.contains(s)) {
            return Err(bad(format!(
                "`capacity` names `{s}`, which is not a configured scope"
            )));
        }
        if let Some(at) = config
            .accepted_entries
            .iter()
            .position(|id| id.len() != 40 || !id.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(bad(format!(
                "`accepted_entries` item {} is not an entry's blob id (40 hex digits, as `check` prints it)",
                at + 1
            )));
        }
        if config.index_budget < 10 {
            return Err(bad("`index_budget` must be at least 10 lines".into()));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_entries_are_blob_ids() {
        let id = "93a1fa5b186a7f3943dde341e8ede20651975257";
        let c = Config::parse(&format!("accepted_entries: [{id}]\n")).expect("parses");
        assert_eq!(c.accepted_entries, [id]);
        let e =
            Config::parse(&format!("accepted_entries: [{id}, not-an-id]\n")).expect_err("refused");
        assert!(
            e.message.contains("item 2") && !e.message.contains("not-an-id"),
            "{}",
            e.message
        );
    }

    #[test]
    fn user_store_defaults_to_personal_and_takes_shared() {
        assert_eq!(
            Config::parse("").map(|c| c.user_store).ok(),
            Some(UserStore::Personal)
        );
        assert_eq!(
            Config::parse("user_store: shared\n")
                .map(|c| c.user_store)
                .ok(),
            Some(UserStore::Shared)
        );
        assert!(Config::parse("user_store: team\n").is_err());
    }

    #[test]
    fn receipts_default_to_full_and_take_the_three_documented_values() {
        assert_eq!(
            Config::parse("").map(|c| c.receipts).ok(),
            Some(Receipts::Full)
        );
        for (text, want) in [
            ("full", Receipts::Full),
            ("hash", Receipts::Hash),
            ("off", Receipts::Off),
        ] {
            let c = Config::parse(&format!("receipts: {text}\n")).expect("parses");
            assert_eq!(c.receipts, want, "{text}");
        }
        assert!(Config::parse("receipts: some\n").is_err());
    }

    fn embeddings(section: &str) -> Result<EmbeddingsConfig, ConfigError> {
        Config::parse(&format!("embeddings:\n{section}")).map(|c| c.embeddings.unwrap())
    }

    #[test]
    fn embeddings_section_parses_with_defaults() {
        let e = embeddings("  url: http://127.0.0.1:8080/v1/embeddings\n  model: m\n").unwrap();
        assert_eq!(
            e.endpoint,
            Endpoint::Http(HttpUrl {
                host: "127.0.0.1".into(),
                port: 8080,
                path: "/v1/embeddings".into()
            })
        );
        assert_eq!((e.timeout_ms, e.batch), (5000, 64));
        assert_eq!(e.query_text("q"), "q");
        let e = embeddings(
            "  command: [python3, scripts/embed.py]\n  model: multilingual-e5-small\n  \
             api_key_env: OPENAI_API_KEY\n  timeout_ms: 100\n  batch: 2\n  \
             query_prefix: \"query: \"\n  document_prefix: \"passage: \"\n",
        )
        .unwrap();
        assert_eq!(
            e.endpoint,
            Endpoint::Command(vec!["python3".into(), "scripts/embed.py".into()])
        );
        assert_eq!(e.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert_eq!(e.query_text("db"), "query: db");
        assert_eq!(e.document_text("db"), "passage: db");
        assert_eq!(Config::parse("scopes: [a]\n").unwrap().embeddings, None);
    }

    #[test]
    fn embeddings_section_is_checked() {
        let cases = [
            ("  model: m\n", "`url`"),
            ("  url: http://h/\n  command: [x]\n  model: m\n", "not both"),
            ("  url: https://api.example.com/v1\n  model: m\n", "http://"),
            ("  url: http://h/\n", "`embeddings.model`"),
            ("  url: http://h/\n  model: \" \"\n", "`embeddings.model`"),
            (
                "  url: http://h/\n  model: m\n  timeout_ms: 0\n",
                "timeout_ms",
            ),
            (
                "  url: http://h/\n  model: m\n  timeout_ms: 600001\n",
                "timeout_ms",
            ),
            ("  url: http://h/\n  model: m\n  batch: 0\n", "batch"),
            ("  url: http://h/\n  model: m\n  batch: 2049\n", "batch"),
            ("  command: []\n  model: m\n", "program"),
            (
                "  url: http://h/\n  model: m\n  api_key_env: sk-live-123\n",
                "never the key",
            ),
            (
                "  url: http://h/\n  model: m\n  colour: red\n",
                "unknown field",
            ),
            ("  url: http://u:p@h/\n  model: m\n", "credentials"),
            ("  url: \"http://h/a b\"\n  model: m\n", "path"),
            ("  url: http://h:99999/\n  model: m\n", "port"),
            ("  url: http://:80/\n  model: m\n", "host"),
        ];
        for (section, says) in cases {
            let e = embeddings(section).unwrap_err();
            assert!(e.to_string().contains(says), "{section:?}: {e}");
        }
    }

    #[test]
    fn embeddings_curl_drop_in_of_the_docs_parses() {
        // As docs/format.md gives it: the key stays in the environment.
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/format.md"),
        )
        .unwrap();
        let line = docs
            .lines()
            .find(|l| l.trim_start().starts_with("command: [sh, -c, 'curl"))
            .unwrap();
        let e = embeddings(&format!("{line}\n  model: text-embedding-3-small\n")).unwrap();
        let Endpoint::Command(argv) = e.endpoint else {
            panic!("{:?}", e.endpoint)
        };
        assert_eq!(argv[..2], ["sh", "-c"]);
        assert!(
            argv[2].contains("Bearer $OPENAI_API_KEY\" -d @-"),
            "{}",
            argv[2]
        );
    }

    fn rerank(section: &str) -> Result<RerankConfig, ConfigError> {
        Config::parse(&format!("rerank:\n{section}")).map(|c| c.rerank.unwrap())
    }

    #[test]
    fn rerank_section_parses_with_defaults() {
        let r = rerank("  url: http://127.0.0.1:8012/v1/rerank\n").unwrap();
        assert_eq!(
            r.endpoint,
            Endpoint::Http(HttpUrl {
                host: "127.0.0.1".into(),
                port: 8012,
                path: "/v1/rerank".into()
            })
        );
        assert_eq!(
            (r.model, r.api_key_env, r.timeout_ms, r.top_n),
            (None, None, 5000, 10)
        );
        let r = rerank(
            "  command: [python3, scripts/rerank.py]\n  model: bge-reranker-v2-m3\n  \
             api_key_env: JINA_API_KEY\n  timeout_ms: 250\n  top_n: 100\n",
        )
        .unwrap();
        assert_eq!(
            r.endpoint,
            Endpoint::Command(vec!["python3".into(), "scripts/rerank.py".into()])
        );
        assert_eq!(r.model.as_deref(), Some("bge-reranker-v2-m3"));
        assert_eq!(r.api_key_env.as_deref(), Some("JINA_API_KEY"));
        assert_eq!((r.timeout_ms, r.top_n), (250, 100));
        assert_eq!(r.timeout(), std::time::Duration::from_millis(250));
        // Independent of `embeddings`, and off by default.
        let c = Config::parse("scopes: [a]\n").unwrap();
        assert_eq!((c.rerank, c.embeddings), (None, None));
        let c = Config::parse(
            "embeddings:\n  url: http://h/e\n  model: m\nrerank:\n  url: http://h/r\n",
        )
        .unwrap();
        assert!(c.embeddings.is_some() && c.rerank.is_some());
    }

    #[test]
    fn rerank_curl_drop_in_of_the_docs_parses() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/format.md"),
        )
        .unwrap();
        let line = docs
            .lines()
            .find(|l| l.trim_start().starts_with("command: [sh, -c, 'curl") && l.contains("rerank"))
            .unwrap();
        let r = rerank(&format!("{line}\n  api_key_env: JINA_API_KEY\n")).unwrap();
        let Endpoint::Command(argv) = r.endpoint else {
            panic!("{:?}", r.endpoint)
        };
        assert!(
            argv[2].contains("Bearer $JINA_API_KEY\" -d @-"),
            "{}",
            argv[2]
        );
    }

    #[test]
    fn rerank_section_is_checked() {
        let cases = [
            ("  model: m\n", "`rerank` needs `url`"),
            (
                "  url: http://h/\n  command: [x]\n",
                "`rerank` takes `url` or `command`, not both",
            ),
            (
                "  url: https://api.jina.ai/v1/rerank\n",
                "`rerank.url` must start with http://",
            ),
            (
                "  url: http://u:p@h/\n",
                "`rerank.url` must not hold credentials",
            ),
            ("  url: \"http://h/a b\"\n", "`rerank.url`'s path"),
            ("  url: http://h:0/\n", "`rerank.url` has a bad port"),
            ("  url: http://[::1/\n", "`rerank.url` has an unclosed"),
            ("  command: []\n", "`rerank.command` must name a program"),
            (
                "  command: [\"\"]\n",
                "`rerank.command` must name a program",
            ),
            (
                "  url: http://h/\n  model: \"\"\n",
                "`rerank.model` must name the model",
            ),
            (
                "  url: http://h/\n  model: \"a\\nb\"\n",
                "`rerank.model` must be printable",
            ),
            (
                "  url: http://h/\n  api_key_env: sk-live-123\n",
                "`rerank.api_key_env`",
            ),
            (
                "  url: http://h/\n  timeout_ms: 0\n",
                "`rerank.timeout_ms` must be between 1 and 600000",
            ),
            (
                "  url: http://h/\n  timeout_ms: 600001\n",
                "`rerank.timeout_ms`",
            ),
            (
                "  url: http://h/\n  top_n: 0\n",
                "`rerank.top_n` must be between 1 and 100",
            ),
            ("  url: http://h/\n  top_n: 101\n", "`rerank.top_n`"),
            ("  url: http://h/\n  top_n: -1\n", "top_n"),
            (
                "  url: http://h/\n  min_score: .nan\n",
                "`rerank.min_score` must be a number",
            ),
            ("  url: http://h/\n  min_score: high\n", "min_score"),
            ("  url: http://h/\n  batch: 4\n", "unknown field `batch`"),
        ];
        for (section, says) in cases {
            let e = rerank(section).unwrap_err();
            assert!(e.to_string().contains(says), "{section:?}: {e}");
            assert_eq!(e.to_string().lines().count(), 1, "{e}");
        }
        // The URL's own errors name the field they are about.
        let e = embeddings("  url: https://h/\n  model: m\n").unwrap_err();
        assert!(e.to_string().contains("`embeddings.url` must start"), "{e}");
    }

    #[test]
    fn embeddings_urls_parse() {
        let u = HttpUrl::parse("http://localhost").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("localhost", 80, "/")
        );
        let u = HttpUrl::parse("http://[::1]:11434/api/embed?x=1#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 11434, "/api/embed?x=1")
        );
        assert_eq!(u.authority(), "[::1]:11434");
        assert_eq!(u.to_string(), "http://[::1]:11434/api/embed?x=1");
        let u = HttpUrl::parse("http://h:8080?q").unwrap();
        assert_eq!(u.path, "/?q");
        assert!(HttpUrl::parse("http://a:b:c/").is_err());
        assert!(HttpUrl::parse("http://h/\r\nX: y").is_err());
    }
}
