//! What a `recall` or a `context` leaves in the local state: the receipt
//! of each `context` call that injected something, and the access signal
//! both update (`local::receipts`, `local::access`; `memoir seen` reads
//! them back). None of it is needed to answer a query: a caller turns an
//! error here into a warning, so recording can never fail a prompt.
//!
//! Receipts are written only for calls that injected something; a call
//! that injected nothing is counted in the access signal instead
//! (`Access::abstentions`), so `seen` can say how often the context had
//! nothing to say without a line per silent prompt.

use crate::local::access;
use crate::local::lock::StoreLock;
use crate::local::receipts::{self, Injected, Kind, Receipt, MAX_QUERY_CHARS, RECEIPT_VERSION};
use crate::model::config::Receipts;
use crate::model::key::Key;
use crate::model::time::Timestamp;
use crate::ops::recall::Context;
use crate::store::{Store, StoreError};

/// A `context` call to record: what it was asked, and how.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The query; none for the hot memory.
    pub query: Option<&'a str>,
    /// The token budget as set.
    pub budget: usize,
    /// The part of it this store had (the whole budget unless the
    /// person's own store shared it).
    pub share: usize,
    /// A Claude Code hook asked.
    pub hook: bool,
    /// When.
    pub now: Timestamp,
}

/// Records a `context` call: a receipt if it injected something (as the
/// store's `receipts` setting says), and the access signal of what it
/// injected (or, for nothing, an abstention), whatever that setting.
pub fn record_context(store: &Store, asked: &Asked<'_>, ctx: &Context) -> Result<(), StoreError> {
    let _lock = lock(store)?;
    if !ctx.text.is_empty() && store.config.receipts != Receipts::Off {
        let receipt = receipt(asked, ctx, store.config.receipts);
        let path = store.state.receipts_path();
        receipts::append(&path, &receipt).map_err(StoreError::io(&path))?;
    }
    let path = store.state.access_path();
    let mut signal = access::load(&path);
    let now = asked.now.0;
    if ctx.text.is_empty() {
        signal.abstained(now);
    } else {
        let keys: Vec<String> = ctx.memories.iter().map(Key::to_string).collect();
        signal.injected(keys.iter().map(String::as_str), now);
    }
    save(store, &mut signal, now)
}

/// Records that `recall` listed `keys` at `now` (their last recall).
pub fn record_recall(store: &Store, keys: &[Key], now: Timestamp) -> Result<(), StoreError> {
    if keys.is_empty() {
        return Ok(());
    }
    let _lock = lock(store)?;
    let mut signal = access::load(&store.state.access_path());
    let keys: Vec<String> = keys.iter().map(Key::to_string).collect();
    signal.recalled(keys.iter().map(String::as_str), now.0);
    save(store, &mut signal, now.0)
}

/// The receipts' lock (see [`receipts::lock`]), an error naming its file.
fn lock(store: &Store) -> Result<StoreLock, StoreError> {
    let path = store.state.seen_lock_path();
    receipts::lock(&path, receipts::LOCK_WAIT).map_err(StoreError::io(&path))
}

/// Writes the access signal, dropping (once a day) the memories whose
/// file is gone.
fn save(store: &Store, signal: &mut access::Access, now: i64) -> Result<(), StoreError> {
    let path = store.state.access_path();
    let live = |key: &str| {
        Key::parse(key)
            .is_ok_and(|(k, _)| std::fs::symlink_metadata(store.path(&k.rel_path())).is_ok())
    };
    signal.save(&path, now, live).map_err(StoreError::io(&path))
}

/// The receipt of a call that injected something.
fn receipt(asked: &Asked<'_>, ctx: &Context, keep: Receipts) -> Receipt {
    let query = asked
        .query
        .filter(|_| keep == Receipts::Full)
        .map(|q| cut(&crate::policy::secrets::redacted(q), MAX_QUERY_CHARS));
    let hash = asked.query.map(|q| {
        format!(
            "{:016x}",
            crate::model::fingerprint::fingerprint(q.as_bytes())
        )
    });
    // Versions are looked up by key: `versions` follows `memories`, but a
    // receipt must name every memory injected even if it did not.
    let versions = |key: &Key| {
        ctx.versions
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Receipt {
        v: RECEIPT_VERSION,
        time: asked.now,
        kind: if asked.query.is_some() {
            Kind::Query
        } else {
            Kind::Hot
        },
        query,
        query_hash: hash,
        memories: ctx
            .memories
            .iter()
            .map(|k| Injected {
                key: k.to_string(),
                versions: versions(k),
            })
            .collect(),
        notes: ctx.notes.clone(),
        budget: asked.budget,
        share: (asked.share != asked.budget).then_some(asked.share),
        tokens: ctx.tokens,
        omitted: ctx.omitted,
        hook: asked.hook,
    }
}

/// `text` cut to `max` characters, ending in `…` if it was cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((i, _)) if text.chars().count() > max => format!("{}…", &text[..i]),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::seen::seen;
    use crate::testing::TempStore;

    fn asked(query: Option<&str>, hook: bool) -> Asked<'_> {
        Asked {
            query,
            budget: 1500,
            share: 1500,
            hook,
            now: Timestamp::parse("2026-11-29T10:41:07Z").expect("a time"),
        }
    }

    #[test]
    fn a_context_call_leaves_a_receipt_with_each_memory_s_heads() {
        let mut t = TempStore::new();
        t.memory("project/db", "Postgres 16 on port 5433")
            .memory("project/cache", "Redis for the session cache");
        // After the index is saved, so that only its tail knows the head.
        let mut index = crate::index::Index::refreshed(&t.store).expect("indexed");
        index.save(&t.store);
        t.replace("project/db", "Postgres 17 on port 5433");
        let q = asked(Some("which postgres port"), false);
        let ctx = crate::ops::recall::context(&t.store, q.query, q.budget, q.now).expect("context");
        record_context(&t.store, &q, &ctx).expect("recorded");
        let hot = asked(None, true);
        let ctx_hot = crate::ops::recall::context(&t.store, None, 1500, hot.now).expect("context");
        record_context(&t.store, &hot, &ctx_hot).expect("recorded");
        let got = seen(&t.store, 10);
        assert_eq!(got.receipts.len(), 2);
        let (newest, first) = (&got.receipts[0], &got.receipts[1]);
        assert_eq!(
            (newest.kind, newest.hook, newest.query.as_deref()),
            (Kind::Hot, true, None)
        );
        assert_eq!(first.kind, Kind::Query);
        assert_eq!(first.query.as_deref(), Some("which postgres port"));
        assert_eq!((first.tokens, first.budget), (ctx.tokens, 1500));
        let (replay, _) = crate::log::read::replay(&t.store).expect("replayed");
        let db = Key::parse("project/db").expect("a key").0;
        let want = Injected {
            key: "project/db".into(),
            versions: replay.memories[&db].heads.clone(),
        };
        assert_eq!(first.memories, std::slice::from_ref(&want));
        assert!(newest.memories.contains(&want), "{:?}", newest.memories);
        assert_eq!(newest.memories.len(), 2);
        assert_eq!(seen(&t.store, 1).receipts, std::slice::from_ref(newest));
        // The access signal counts both injections.
        let signal = access::load(&t.store.state.access_path());
        let stat = signal.get("project/db").expect("known");
        assert_eq!((stat.times_injected, stat.last_recalled_ms), (2, q.now.0));
    }

    #[test]
    fn the_receipts_setting_keeps_the_query_its_hash_or_nothing() {
        let t = TempStore::new();
        let ctx = Context {
            text: "<relevant_memories>\n</relevant_memories>\n".into(),
            memories: vec![Key::parse("project/db").expect("a key").0],
            ..Context::default()
        };
        let q = asked(Some("the secret plan"), false);
        let full = receipt(&q, &ctx, Receipts::Full);
        let hash = receipt(&q, &ctx, Receipts::Hash);
        assert_eq!(full.query.as_deref(), Some("the secret plan"));
        assert_eq!(hash.query, None);
        assert_eq!(hash.query_hash, full.query_hash);
        assert_eq!(hash.query_hash.as_ref().map(String::len), Some(16));
        assert_eq!(hash.memories[0].versions, Vec::<String>::new());
        // A long prompt is cut; a secret in it is not kept.
        let secret = ["AKIA", "Z7QRSTUVWXYZ2345"].concat();
        let long = format!("{secret} {}", "word ".repeat(1000));
        let cut_down = receipt(&asked(Some(&long), false), &ctx, Receipts::Full);
        let kept = cut_down.query.expect("a query");
        assert_eq!(kept.chars().count(), MAX_QUERY_CHARS);
        assert!(kept.ends_with('…') && !kept.contains(&secret), "{kept}");
        // Nothing injected: no receipt, an abstention.
        record_context(&t.store, &q, &Context::default()).expect("recorded");
        let got = seen(&t.store, 10);
        assert!(got.receipts.is_empty());
        assert_eq!(got.abstentions.count, 1);
    }

    #[test]
    fn a_held_lock_records_nothing_and_says_which_lock() {
        let t = TempStore::new();
        let held = StoreLock::acquire(&t.store.state.seen_lock_path(), receipts::LOCK_WAIT)
            .expect("taken");
        let ctx = Context {
            text: "<hot_memory>\n</hot_memory>\n".into(),
            ..Context::default()
        };
        let err =
            record_context(&t.store, &asked(None, false), &ctx).expect_err("waits, then gives up");
        let message = err.to_string();
        assert!(
            message.contains("seen.lock") && message.contains("held by another memoir process"),
            "{message}"
        );
        drop(held);
        assert!(!t.store.state.receipts_path().exists());
        record_context(&t.store, &asked(None, false), &ctx).expect("recorded");
        assert_eq!(seen(&t.store, 10).receipts.len(), 1);
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        assert_eq!(cut("日本語です", 4), "日本語…");
        assert_eq!(cut("", 3), "");
    }
}
