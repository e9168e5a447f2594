//! A person's stores asked together: the repository's, shared with the
//! team, and their own (`user/` memories, never committed to a project).
//!
//! `recall` answers from both in one list, merged by where each answer
//! stands in its own store (the relevant before the weaker, then by rank),
//! and records what each store answered with in its access signal.
//! `context` lets the person's own store speak first (their preferences
//! shape the work) within a third of the budget, the repository's within
//! the rest, and leaves each store its receipt. What cannot be recorded is
//! a warning: recording never fails a query.

use super::record::{self, Asked};
use super::{as_personal, context_with, recall_with, Readers};
use crate::model::key::Key;
use crate::model::time::Timestamp;
use crate::search::reader::Rerank;
use crate::search::results::{Hit, Item, NoteHit, Options, Results};
use crate::search::semantic::{Mode, Semantic};
use crate::store::{Origin, Store, StoreError};
use std::collections::VecDeque;

/// What a search across stores says of a personal store it could not
/// read beside the repository's: the answer is the repository's alone.
pub const WITHOUT_PERSONAL: &str = "leaving your personal store out";

/// A store's search result, or, for a personal store searched beside the
/// repository's, `None` and a warning: what the team knows is still
/// answered (a prompt hook that fails injects nothing at all).
pub fn unless_personal<T>(
    found: Result<T, StoreError>,
    origin: Origin,
    many: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<T>, StoreError> {
    match found {
        Ok(found) => Ok(Some(found)),
        Err(e) if many && origin == Origin::Personal => {
            warnings.push(format!("{e}; {WITHOUT_PERSONAL}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// What a store answered with: a memory or a note.
#[derive(Debug, Clone)]
pub enum Found {
    /// A memory.
    Memory(Hit),
    /// A note (or a piece of MEMORY.md's own text).
    Note(NoteHit),
}

impl Found {
    /// As the search's results show it.
    pub fn item(&self) -> Item<'_> {
        match self {
            Found::Memory(h) => Item::Memory(h),
            Found::Note(n) => Item::Note(n),
        }
    }
}

/// One answer of a recall across stores.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The memory or note.
    pub found: Found,
    /// The store it is in.
    pub origin: Origin,
    /// How its store answered: by keywords, or fused with embeddings.
    pub mode: Mode,
}

/// A recall across a person's stores.
#[derive(Debug, Clone, Default)]
pub struct StoresRecall {
    /// The answers, the relevant first, at most the limit asked for.
    pub answers: Vec<Answer>,
    /// Some answer is relevant: what was asked (filters included) has an
    /// answer.
    pub answered: bool,
    /// Every store's index vouches for what it answered with (see
    /// [`super::Recall::vouched`]).
    pub vouched: bool,
    /// One line per file that could not be read, store by store, and per
    /// store whose recall could not be recorded.
    pub warnings: Vec<String>,
}

/// Recalls `query` from each of `stores` (the repository's first), each
/// with its own embeddings when its config names them (`api_key` gives a
/// variable the config names, as `embeddings.api_key_env`), merges their
/// answers and records, in each store, what it answered with as recalled
/// at `now`.
pub fn recall(
    stores: &[(Store, Origin)],
    query: &str,
    opts: &Options,
    api_key: &dyn Fn(&str) -> Option<String>,
    now: Timestamp,
) -> Result<StoresRecall, StoreError> {
    let mut out = StoresRecall {
        vouched: true,
        ..StoresRecall::default()
    };
    let mut lists: Vec<VecDeque<Answer>> = Vec::new();
    let many = stores.len() > 1;
    for (store, origin) in stores {
        let semantic = Semantic::of(store, api_key);
        let found = recall_with(store, query, opts, semantic.as_ref());
        let Some(found) = unless_personal(found, *origin, many, &mut out.warnings)? else {
            continue;
        };
        out.vouched &= found.vouched;
        out.warnings.extend(found.warnings);
        let mode = found.mode;
        let results = Results {
            hits: found.hits,
            notes: found.notes,
            ..Results::default()
        };
        // What the store answered with was recalled; a weaker match only shown.
        let keys: Vec<Key> = results
            .hits
            .iter()
            .filter(|h| h.relevant)
            .map(|h| h.key.clone())
            .collect();
        if let Err(e) = record::record_recall(store, &keys, now) {
            out.warnings.push(format!("{e}; recall not recorded"));
        }
        let answer = |found: Found| Answer {
            found,
            origin: *origin,
            mode,
        };
        let list = results
            .ranked()
            .into_iter()
            .map(|item| match item {
                Item::Memory(h) => answer(Found::Memory(h.clone())),
                Item::Note(n) => answer(Found::Note(n.clone())),
            })
            .collect();
        lists.push(list);
    }
    out.answers = merge(lists, opts.limit);
    out.answered = out
        .answers
        .first()
        .is_some_and(|a| a.found.item().relevant());
    Ok(out)
}

/// Where an answer stands: the relevant first, then by rank.
fn place(a: &Answer) -> (bool, f64) {
    let item = a.found.item();
    (item.relevant(), item.rank())
}

/// The stores' lists merged by place, each list keeping its own order, at
/// most `limit` answers; of equal places, the earlier store's first.
fn merge(mut lists: Vec<VecDeque<Answer>>, limit: usize) -> Vec<Answer> {
    let mut out = Vec::new();
    while out.len() < limit {
        let best = lists
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.front().map(|a| (i, place(a))))
            .fold(
                None,
                |best: Option<(usize, (bool, f64))>, (i, p)| match best {
                    Some((_, b)) if b >= p => best,
                    _ => Some((i, p)),
                },
            );
        let Some((i, _)) = best else { break };
        out.extend(lists[i].pop_front());
    }
    out
}

/// A context call across a person's stores: what was asked.
#[derive(Debug, Clone, Copy)]
pub struct ContextAsked<'a> {
    /// The query; none for the hot memory.
    pub query: Option<&'a str>,
    /// The token budget for all stores together.
    pub budget: usize,
    /// A Claude Code hook asked (the receipts say so).
    pub hook: bool,
    /// When.
    pub now: Timestamp,
}

/// The block across a person's stores.
#[derive(Debug, Clone, Default)]
pub struct StoresContext {
    /// The blocks, the person's own first; empty when nothing is said.
    pub text: String,
    /// Their estimated size in tokens.
    pub tokens: usize,
    /// Memories relevant (or indexed) that did not fit.
    pub omitted: usize,
    /// The memories injected, in order.
    pub memories: Vec<Key>,
    /// Those of them from the person's own store.
    pub personal: Vec<Key>,
    /// Every store's index vouches for its block (see
    /// [`super::Context::vouched`]).
    pub vouched: bool,
    /// One line per file that could not be read, and per store whose
    /// receipt could not be recorded.
    pub warnings: Vec<String>,
}

/// The block to inject for `asked` from each of `stores` (the
/// repository's first): the person's own store speaks first within a
/// third of the budget (all of it when it is the only store), the
/// repository's within the rest, each with the embeddings and reranker
/// its config names; each store records its receipt.
pub fn context(
    stores: &[(Store, Origin)],
    asked: ContextAsked<'_>,
    api_key: &dyn Fn(&str) -> Option<String>,
) -> Result<StoresContext, StoreError> {
    let mut out = StoresContext {
        vouched: true,
        ..StoresContext::default()
    };
    let many = stores.len() > 1;
    for (store, origin) in stores.iter().rev() {
        let share = if many && *origin == Origin::Personal {
            asked.budget / 3
        } else {
            asked.budget.saturating_sub(out.tokens)
        };
        let semantic = Semantic::of(store, api_key);
        let rerank = Rerank::of(store, api_key);
        let readers = Readers {
            semantic: semantic.as_ref(),
            rerank: rerank.as_ref(),
        };
        let ctx = context_with(store, asked.query, share, asked.now, readers);
        let Some(mut ctx) = unless_personal(ctx, *origin, many, &mut out.warnings)? else {
            continue;
        };
        if *origin == Origin::Personal {
            ctx = as_personal(ctx);
        }
        out.warnings.append(&mut ctx.warnings);
        out.vouched &= ctx.vouched;
        let receipt = Asked {
            query: asked.query,
            budget: asked.budget,
            share,
            hook: asked.hook,
            now: asked.now,
        };
        if let Err(e) = record::record_context(store, &receipt, &ctx) {
            out.warnings.push(format!("{e}; no receipt recorded"));
        }
        out.text.push_str(&ctx.text);
        out.tokens += ctx.tokens;
        out.omitted += ctx.omitted;
        if *origin == Origin::Personal {
            out.personal.extend(ctx.memories.iter().cloned());
        }
        out.memories.extend(ctx.memories);
    }
    Ok(out)
}
