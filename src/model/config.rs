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
    /// What `memoir context` keeps of each injection in the local state
    /// (`memoir seen`): the query, only its hash, or nothing.
    pub receipts: Receipts,
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
        }
    }
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
}
