//! `recall` and `context`: reading memory back for an agent.
//!
//! Both read through the persistent index and never fail because one file
//! or one log is broken: what cannot be read is skipped and reported as a
//! warning. `context` renders the block an agent injects into its prompt,
//! within a token budget (format in `docs/search.md`).

use crate::index::cache::Cache;
use crate::index::layout::View;
use crate::index::refresh::summaries;
use crate::model::event::Op;
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::model::time::{Date, Timestamp};
use crate::render::memory_md;
use crate::search::rank::{self, estimate_tokens, Corpus, Fresh, Hit, Options};
use crate::store::{Store, StoreError};

/// The default token budget of `context`.
pub const DEFAULT_BUDGET: usize = 1500;

/// What `recall` found.
#[derive(Debug, Clone, Default)]
pub struct Recall {
    /// Relevant memories, most relevant first.
    pub hits: Vec<Hit>,
    /// One line per memory file or log that could not be read.
    pub warnings: Vec<String>,
}

/// A context block for injection, or nothing.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The block; empty when there is nothing to say.
    pub text: String,
    /// Its estimated size in tokens.
    pub tokens: usize,
    /// The memories it includes.
    pub memories: Vec<Key>,
    /// Memories that were relevant (or indexed) but did not fit.
    pub omitted: usize,
    /// One line per file or log that could not be read.
    pub warnings: Vec<String>,
}

/// Neutralizes anything in memory text that could open or close one of the
/// context's own elements (`<relevant_memories>`, `<memory …>`, …), so a
/// memory cannot forge or end the block it sits in.
pub fn neutralize(text: &str) -> String {
    // "memory" also covers memory_index; each is matched as a prefix.
    const TAGS: [&str; 5] = [
        "relevant_memories",
        "memory",
        "open_conflicts",
        "recent_notes",
        "hot_memory",
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let name = after.strip_prefix('/').unwrap_or(after);
        let forged = TAGS.iter().any(|t| {
            name.len() >= t.len()
                && name.is_char_boundary(t.len())
                && name[..t.len()].eq_ignore_ascii_case(t)
        });
        out.push_str(if forged { "&lt;" } else { "<" });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A warning that a file was skipped: `path:line: message (skipped)`.
fn skipped(path: &str, error: &str) -> String {
    let error = error.strip_prefix(path).unwrap_or(error);
    let sep = if error.starts_with(':') { "" } else { ": " };
    format!("{path}{sep}{error} (skipped)")
}

fn attr(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('\n', " ")
}

/// Lines added to a block while they fit a token budget.
struct Budget {
    lines: Vec<String>,
    used: usize,
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Budget {
        Budget {
            lines: Vec::new(),
            used: 0,
            limit,
        }
    }

    fn cost(line: &str) -> usize {
        estimate_tokens(line) + 1
    }

    /// Adds the line if it fits with `reserve` tokens left over.
    fn push(&mut self, line: String, reserve: usize) -> bool {
        let c = Budget::cost(&line);
        if self.used + c + reserve > self.limit {
            return false;
        }
        self.used += c;
        self.lines.push(line);
        true
    }

    /// Ends the block with its closing tag (reserved for all along) and
    /// puts the text into `ctx`.
    fn close(mut self, tag: &str, mut ctx: Context) -> Context {
        self.push(tag.into(), 0);
        ctx.text = self.lines.join("\n");
        ctx.text.push('\n');
        ctx.tokens = self.used;
        ctx
    }
}

/// The warning for a recalled memory whose text held a secret.
fn holds_a_secret(path: &str) -> String {
    format!("{path}: holds a secret, shown as [redacted:<rule>]; `memoir redact` removes it")
}

/// The persistent index, refreshed; a broken log only costs conflict flags.
fn read_index(store: &Store) -> Result<(Cache, Vec<String>), StoreError> {
    let mut cache = crate::index::file::load(&store.state);
    let mut warnings = Vec::new();
    if let Err(e) = crate::index::refresh::refresh_logs(store, &mut cache) {
        warnings.push(format!("{e} (conflicts may not be flagged)"));
    }
    crate::index::refresh::refresh_files(store, &mut cache)?;
    crate::index::refresh::save_if_dirty(store, &mut cache);
    for (rel, e) in &cache.files {
        if let Some(err) = &e.error {
            let err = err
                .strip_prefix(rel.as_str())
                .unwrap_or(err)
                .trim_start_matches(':');
            warnings.push(format!("{rel}:{err} (skipped)"));
        }
    }
    Ok((cache, warnings))
}

/// What a search runs over. Fast path: the index file read in place,
/// with the few memory files changed since read directly; log entries
/// appended since that only move memories forward leave it valid.
/// Anything more refreshes and rewrites the index first.
pub fn corpus(store: &Store) -> Result<(Corpus, Vec<String>), StoreError> {
    if let Some(found) = corpus_in_place(store)? {
        return Ok(found);
    }
    // read_index saved the refreshed index: read it back from the file
    // (the page cache has it) rather than hold a second copy; encode in
    // memory only if it could not be written.
    let encoded = |cache: &Cache| {
        let version = crate::index::cache::CACHE_VERSION;
        View::parse(crate::index::layout::encode(cache, version), version)
    };
    let (cache, warnings) = read_index(store)?;
    let view = if cache.dirty {
        encoded(&cache)
    } else {
        // Let go of the decoded index before reading the file back.
        drop(cache);
        match crate::index::file::open_view(&store.state, crate::index::layout::Load::Query) {
            Some((view, _)) => Some(view),
            // Replaced or removed by another process meanwhile.
            None => encoded(&read_index(store)?.0),
        }
    };
    let view = view.ok_or(StoreError::Internal(
        "the persistent index could not be encoded",
    ))?;
    Ok((Corpus::of(view), warnings))
}

/// The fast path of [`corpus`], or `None` when it does not apply.
fn corpus_in_place(store: &Store) -> Result<Option<(Corpus, Vec<String>)>, StoreError> {
    /// More changed files than this: refresh and rewrite the index instead.
    const MAX_FRESH: usize = 256;
    // Stat the memory files (most of the time, in the kernel) while the
    // index is read.
    let (files, view) = std::thread::scope(|s| {
        let files = s.spawn(|| crate::index::refresh::memory_files(store));
        let view = crate::index::file::open_view(&store.state, crate::index::layout::Load::Query);
        (files.join(), view)
    });
    let files = files.map_err(|_| StoreError::Io {
        path: store.path("memory"),
        source: std::io::Error::other("listing the memory files failed"),
    })??;
    let Some((view, index_mtime)) = view else {
        return Ok(None);
    };
    // Entries appended since the index was saved change nothing a search
    // reads (changed files are read below) unless they fork a memory.
    if crate::index::snapshot::tail(store, &view)?.is_none() {
        return Ok(None);
    }
    let mut corpus = Corpus::of(view);
    let mut warnings = Vec::new();
    let view = &corpus.view;
    let mut skip = vec![false; view.len()];
    let mut fresh_paths = Vec::new();
    let mut i = 0;
    for (path, stamp) in &files {
        while i < view.len() && view.path(i) < path.as_str() {
            skip[i] = true;
            i += 1;
        }
        if i < view.len() && view.path(i) == path {
            let r = view.rec(i);
            // git's racy rule: changed in the tick the index was written? Re-read.
            if r.stamp != *stamp || stamp.mtime >= index_mtime {
                skip[i] = true;
                fresh_paths.push(path.clone());
            } else if !r.valid {
                let err = view.entry(i).1.unwrap_or_default();
                warnings.push(skipped(path, &err));
            }
            i += 1;
        } else {
            fresh_paths.push(path.clone());
        }
        if fresh_paths.len() > MAX_FRESH {
            return Ok(None);
        }
    }
    skip[i..].iter_mut().for_each(|s| *s = true);
    for path in fresh_paths {
        let f = fresh(store, &path);
        if let Some(e) = &f.error {
            warnings.push(skipped(&path, e));
        }
        corpus.fresh.push(f);
    }
    corpus.skip = skip;
    Ok(Some((corpus, warnings)))
}

/// A memory file as it is now, for a search.
fn fresh(store: &Store, path: &str) -> Fresh {
    // Removed since the listing (a `forget` beside this query): not
    // there, rather than a warning.
    let parsed = match store.read_memory_file(path) {
        Ok(None) => Err(None),
        Ok(Some(c)) => crate::policy::memory::validate_file(&c, path).map_err(Some),
        Err(e) => Err(Some(e)),
    };
    match parsed {
        Ok(m) => {
            let (terms, len) = rank::term_counts(&m);
            Fresh {
                path: path.to_string(),
                summary: Some(crate::model::memory::Summary::of(&m)),
                error: None,
                terms,
                len,
            }
        }
        Err(e) => Fresh {
            path: path.to_string(),
            summary: None,
            error: e.map(|e| e.to_string()),
            terms: Default::default(),
            len: 0,
        },
    }
}

/// The memories relevant to `query`.
pub fn recall(store: &Store, query: &str, opts: &Options) -> Result<Recall, StoreError> {
    let (corpus, mut warnings) = corpus(store)?;
    let mut hits = rank::search(&corpus, query, opts);
    // A file written around the policy (a hand edit not yet checked)
    // must not hand its secret to whoever asked.
    for hit in &mut hits {
        let s = &mut hit.summary;
        for text in std::iter::once(&mut s.description).chain(s.source.as_mut()) {
            if let std::borrow::Cow::Owned(r) = crate::policy::secrets::redacted(text) {
                *text = r;
                warnings.push(holds_a_secret(&hit.path));
            }
        }
    }
    warnings.dedup();
    Ok(Recall { hits, warnings })
}

/// The block to inject before a model call: the memories relevant to
/// `query`, or, without a query, the hot memory for a session's start.
pub fn context(
    store: &Store,
    query: Option<&str>,
    budget: usize,
    now: Timestamp,
) -> Result<Context, StoreError> {
    let mut ctx = match query {
        Some(q) => {
            let (corpus, mut warnings) = corpus(store)?;
            let mut ctx = relevant_context(store, &corpus, q, budget, now.date(), &mut warnings);
            ctx.warnings = warnings;
            ctx
        }
        None => {
            let (cache, mut warnings) = read_index(store)?;
            let mut ctx = hot_context(store, &cache, budget, now, &mut warnings);
            ctx.warnings = warnings;
            ctx
        }
    };
    // What goes into a prompt is sent to a model provider: a secret in
    // a memory or a note written around the policy is replaced there.
    if let std::borrow::Cow::Owned(r) = crate::policy::secrets::redacted(&ctx.text) {
        ctx.text = r;
        ctx.warnings.push(
            "something injected held a secret, replaced by [redacted:<rule>]; `memoir check` names it, `memoir redact` removes it".into(),
        );
    }
    ctx.warnings.dedup();
    Ok(ctx)
}

fn relevant_context(
    store: &Store,
    corpus: &Corpus,
    query: &str,
    budget: usize,
    today: Date,
    warnings: &mut Vec<String>,
) -> Context {
    let opts = Options {
        limit: 20,
        min_score: rank::DEFAULT_MIN_SCORE,
        scope: None,
        kind: None,
        tag: None,
        today,
    };
    let hits = rank::search(corpus, query, &opts);
    let mut ctx = Context::default();
    if hits.is_empty() {
        return ctx;
    }
    const OPEN: &str = "<relevant_memories>";
    const CLOSE: &str = "</relevant_memories>";
    let mut b = Budget::new(budget);
    if !b.push(OPEN.into(), Budget::cost(CLOSE)) {
        return ctx;
    }
    for (i, hit) in hits.iter().enumerate() {
        let content = match store.read_memory_file(&hit.path) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(e) => {
                warnings.push(format!("{e} (skipped)"));
                continue;
            }
        };
        let Ok(m) = Memory::parse(&content) else {
            continue;
        };
        let s = &hit.summary;
        let mut head = format!(
            "<memory key=\"{}\" updated=\"{}\" source=\"{}\" confidence=\"{}\"",
            hit.key,
            if s.updated > 0 {
                Timestamp(s.updated).date().to_string()
            } else {
                String::new()
            },
            attr(s.source.as_deref().unwrap_or("")),
            s.confidence
        );
        if hit.conflict {
            head.push_str(" conflict=\"open\"");
        }
        if hit.stale {
            head.push_str(" review=\"overdue\"");
        }
        head.push('>');
        let tail = "</memory>";
        let reserve = Budget::cost(tail) + Budget::cost(CLOSE);
        let description = neutralize(&m.description);
        // A memory needs at least its heading and description to be useful.
        if Budget::cost(&head) + Budget::cost(&description) + reserve + b.used > b.limit {
            ctx.omitted = hits.len() - i;
            break;
        }
        b.push(head, reserve);
        b.push(description, reserve);
        let body = neutralize(m.body.trim_matches('\n'));
        let mut cut = false;
        for line in body.lines() {
            if !b.push(line.trim_end_matches('\r').to_string(), reserve) {
                cut = true;
                break;
            }
        }
        b.push(tail.into(), Budget::cost(CLOSE));
        ctx.memories.push(hit.key.clone());
        if cut {
            ctx.omitted = hits.len() - i - 1;
            break;
        }
    }
    if ctx.memories.is_empty() {
        return Context::default();
    }
    b.close(CLOSE, ctx)
}

fn hot_context(
    store: &Store,
    cache: &Cache,
    budget: usize,
    now: Timestamp,
    warnings: &mut Vec<String>,
) -> Context {
    const OPEN: &str = "<hot_memory>";
    const CLOSE: &str = "</hot_memory>";
    let mut ctx = Context::default();
    let mut b = Budget::new(budget);
    if !b.push(OPEN.into(), Budget::cost(CLOSE)) {
        return ctx;
    }
    // The index: MEMORY.md's generated block for the memory files; past
    // the token budget, the block for fewer lines, which keeps the most
    // valuable memories and says how many more there are.
    const INDEX_OPEN: &str = "<memory_index>";
    const INDEX_CLOSE: &str = "</memory_index>";
    let all = summaries(cache);
    let items = || all.iter().map(|(k, s)| (k, *s));
    let available = budget.saturating_sub(
        b.used + Budget::cost(INDEX_OPEN) + Budget::cost(INDEX_CLOSE) + Budget::cost(CLOSE),
    );
    let cost = |block: &memory_md::Block| -> usize {
        block
            .text
            .lines()
            .map(|l| Budget::cost(&neutralize(l)))
            .sum()
    };
    let mut block = memory_md::render_block(items(), store.config.index_budget);
    if cost(&block) > available {
        // The largest line budget whose block fits: binary search.
        let (mut lo, mut hi) = (0, store.config.index_budget);
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            if cost(&memory_md::render_block(items(), mid)) <= available {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        block = memory_md::render_block(items(), lo);
    }
    if !all.is_empty() && cost(&block) <= available && b.push(INDEX_OPEN.into(), 0) {
        for line in block.text.lines() {
            b.push(neutralize(line), 0);
            let key = line
                .strip_prefix("- [")
                .and_then(|l| l.split("](").nth(1))
                .and_then(|r| r.split(')').next())
                .and_then(Key::from_rel_path);
            ctx.memories.extend(key);
        }
        b.push(INDEX_CLOSE.into(), 0);
        ctx.omitted = block.omitted;
    }
    // Open conflicts.
    let conflicts: Vec<&String> = cache
        .keys
        .iter()
        .filter(|(_, k)| k.conflict)
        .map(|(k, _)| k)
        .collect();
    if !conflicts.is_empty() {
        let close = "</open_conflicts>";
        let reserve = Budget::cost(close) + Budget::cost(CLOSE);
        if b.push("<open_conflicts>".into(), reserve + 10) {
            for k in conflicts {
                if !b.push(format!("- {k}: versions disagree; the file shows what they agreed on (`memoir resolve {k}`)"), reserve) {
                    break;
                }
            }
            b.push(close.into(), Budget::cost(CLOSE));
        }
    }
    // Recent notes: today's and yesterday's logs of every writer, newest first.
    let notes = recent_notes(store, now, warnings);
    if !notes.is_empty() {
        let close = "</recent_notes>";
        let reserve = Budget::cost(close) + Budget::cost(CLOSE);
        if b.push("<recent_notes>".into(), reserve + 10) {
            'notes: for (time, actor, text) in notes {
                let actor = actor.split(" <").next().unwrap_or(&actor).to_string();
                let text = neutralize(text.trim_matches('\n'));
                let mut lines = text.lines();
                let first = format!(
                    "- {} {}: {}",
                    time.seconds(),
                    actor,
                    lines.next().unwrap_or("")
                );
                if !b.push(first, reserve) {
                    break;
                }
                for l in lines {
                    if !b.push(format!("  {}", l.trim_end_matches('\r')), reserve) {
                        break 'notes;
                    }
                }
            }
            b.push(close.into(), Budget::cost(CLOSE));
        }
    }
    if b.lines.len() == 1 {
        return Context::default();
    }
    b.close(CLOSE, ctx)
}

/// Notes from today's and yesterday's logs, newest first (equal times:
/// the later entry in its log first).
fn recent_notes(
    store: &Store,
    now: Timestamp,
    warnings: &mut Vec<String>,
) -> Vec<(Timestamp, String, String)> {
    // (time, position in reading order, id, actor, text)
    let mut notes: Vec<(Timestamp, usize, String, String, String)> = Vec::new();
    let Ok(files) = crate::log::files::log_files(store) else {
        return Vec::new();
    };
    let today = now.date();
    let days = [today.to_string(), Date(today.0 - 1).to_string()];
    for f in files {
        let Some(day) = f
            .rel
            .strip_prefix("memory/log/")
            .and_then(|r| r.split('/').next())
        else {
            continue;
        };
        if !days.iter().any(|d| d == day) {
            continue;
        }
        let parsed = crate::log::files::read_log(store, &f.rel)
            .and_then(|t| crate::log::files::parse_log(store, &f.rel, &t))
            .map_err(|e| e.to_string());
        match parsed {
            Ok(p) => {
                for e in p.events.into_iter().filter(|e| e.op == Op::Note) {
                    notes.push((e.time, notes.len(), e.id, e.actor, e.body));
                }
            }
            Err(e) => warnings.push(format!("{e} (skipped)")),
        }
    }
    // A note copied into another log (a cherry-pick) is one note.
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.2.clone()));
    notes.sort_by_key(|n| std::cmp::Reverse((n.0, n.1)));
    notes.into_iter().map(|(t, _, _, a, b)| (t, a, b)).collect()
}
