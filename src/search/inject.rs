//! What `context <prompt>` injects: the decision for a prompt that no
//! reader sees between memoir and the model.
//!
//! `recall` answers a reader, who can pass over a weaker match; `context`
//! puts what it finds into every prompt, so a wrong memory costs attention
//! each time and a long prompt must still find the one fact it needs. The
//! prompts agents send are task instructions, questions, bug reports with
//! pasted output, and long requests of several parts. So:
//!
//! - **Pasted output does not decide.** Code blocks and lines that read as
//!   logs, stack frames or compiler output (`model::markdown::prose`) are
//!   left out of the decision: their identifiers and numbers are words no
//!   memory has, and they held the share of a bug report under the
//!   threshold. They do name the memory, though (the pasted `buf
//!   breaking` command, the failing test's name): once the prose has made
//!   the store answer, a prompt with pasted output is ranked as a whole.
//! - **Any clause may answer.** The prose is also cut into its sentences
//!   and clauses ([`clauses`]); each is asked of the store as its own query,
//!   at the store's threshold, so one sentence of a long request about
//!   the test command finds it however much else the request says.
//! - **Few, and only the strong.** Of what any of them found, a memory is
//!   kept when its rank is at least [`KEEP`] of the best's (each query's
//!   ranks normalised by its own best), at most [`MAX_INJECTED`] memories
//!   and notes: an injection is a few facts, not every memory near the
//!   prompt.
//!
//! Measured on `fixtures/recall-agent` (`bench/context_eval.py`): see
//! `docs/search.md`, Context.

use crate::index::Corpus;
use crate::model::markdown;
use crate::model::text::words;
use crate::search::rank;
use crate::search::results::{Hit, NoteHit, Options, Results};
use std::collections::HashMap;

/// The most memories and notes one injection holds.
pub const MAX_INJECTED: usize = 3;
/// A memory is injected when its normalised rank is at least this share
/// of the best one's.
pub const KEEP: f64 = 0.7;
/// A clause of fewer terms than this is joined to the next: "then" or
/// "please" alone asks nothing.
const MIN_CLAUSE_TERMS: usize = 2;
/// The most clauses asked of the store (a pasted essay is not a prompt
/// of forty questions).
const MAX_CLAUSES: usize = 12;

/// The queries a prompt is decided by: its prose (code and pasted output
/// left out; the whole prompt if that leaves no words), then, when it has
/// more than one, each of its clauses.
pub fn decision_queries(prompt: &str) -> Vec<String> {
    let prose = markdown::prose(prompt);
    let prose = if words(&prose).is_empty() {
        prompt.to_string()
    } else {
        prose
    };
    let parts = clauses(&prose);
    let mut out = vec![prose];
    if parts.len() > 1 {
        out.extend(parts.into_iter().take(MAX_CLAUSES));
    }
    out
}

/// The sentences and clauses of `text`: cut at sentence ends, semicolons,
/// colons, line ends and their CJK forms, a clause of too few terms joined
/// to the next.
pub fn clauses(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = String::new();
    let flush = |open: &mut String, out: &mut Vec<String>, force: bool| {
        if words(open).len() >= MIN_CLAUSE_TERMS || (force && !open.trim().is_empty()) {
            out.push(open.trim().to_string());
            open.clear();
        }
    };
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let end = match c {
            '\n' | ';' | '。' | '？' | '！' | '；' | '：' => true,
            '.' | '?' | '!' | ':' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        open.push(c);
        if end {
            flush(&mut open, &mut out, false);
        }
    }
    if !open.trim().is_empty() {
        if words(&open).len() < MIN_CLAUSE_TERMS {
            if let Some(last) = out.last_mut() {
                last.push(' ');
                last.push_str(open.trim());
                return out;
            }
        }
        flush(&mut open, &mut out, true);
    }
    out
}

/// The keyword decision for a prompt: every memory and note any of
/// [`decision_queries`] finds relevant, with its best normalised rank
/// (0..1) over them, relevant; then the whole prompt's weaker matches
/// (for a fusion with embeddings to rank), not relevant. Best first.
pub fn keyword_decision(
    corpus: &Corpus,
    prompt: &str,
    opts: &Options,
    texts: &dyn Fn(&str) -> Option<String>,
) -> Results {
    let mut hits: HashMap<String, Hit> = HashMap::new();
    let mut notes: HashMap<String, NoteHit> = HashMap::new();
    let mut best = 0.0f64;
    let mut answered = false;
    let mut keep = |found: Results, relevant_only: bool| {
        let found = if relevant_only {
            found.relevant_only()
        } else {
            found
        };
        // Each query's ranks on one scale: its best is 1.
        let top = found
            .hits
            .iter()
            .map(|h| h.rank)
            .chain(found.notes.iter().map(|n| n.rank))
            .fold(0.0, f64::max);
        let norm = |r: f64| if top > 0.0 { r / top } else { 0.0 };
        for mut h in found.hits {
            h.rank = norm(h.rank);
            keep_best(&mut hits, h.path.clone(), h, |h| (h.relevant, h.rank));
        }
        for mut n in found.notes {
            n.rank = norm(n.rank);
            keep_best(&mut notes, n.id.clone(), n, |n| (n.relevant, n.rank));
        }
    };
    let decide = Options {
        weaker: false,
        ..opts.clone()
    };
    let queries = decision_queries(prompt);
    let pasted = queries
        .first()
        .is_some_and(|prose| words(prose) != words(prompt));
    for query in &queries {
        let found = rank::search(corpus, query, &decide, texts);
        best = best.max(found.best);
        answered |= found.answered;
        if !pasted {
            keep(found, true);
        }
    }
    if pasted && answered {
        // The prose decided that the store knows this; which memory it is
        // the whole report says best: the pasted command or error names it.
        let all = Options {
            weaker: true,
            ..opts.clone()
        };
        let mut whole = rank::search(corpus, prompt, &all, texts);
        for h in &mut whole.hits {
            h.relevant = true;
        }
        for n in &mut whole.notes {
            n.relevant = true;
        }
        keep(whole, true);
    }
    if opts.weaker {
        keep(rank::search(corpus, prompt, opts, texts), false);
    }
    let mut out = Results {
        hits: hits.into_values().collect(),
        notes: notes.into_values().collect(),
        best,
        answered,
    };
    out.sort();
    out.truncate(opts.limit);
    out
}

/// Puts `item` under `id` unless what is there already places higher
/// (relevant before weaker, then by rank).
fn keep_best<T>(map: &mut HashMap<String, T>, id: String, item: T, place: fn(&T) -> (bool, f64)) {
    match map.get_mut(&id) {
        Some(old) if place(old) >= place(&item) => {}
        Some(old) => *old = item,
        None => {
            map.insert(id, item);
        }
    }
}

/// What is injected of a decision: its relevant memories and notes whose
/// rank is at least [`KEEP`] of the best's, at most [`MAX_INJECTED`].
pub fn injected(found: Results) -> Results {
    let mut found = found.relevant_only();
    let best = found
        .hits
        .iter()
        .map(|h| h.rank)
        .chain(found.notes.iter().map(|n| n.rank))
        .fold(0.0, f64::max);
    let keep = KEEP * best;
    found.hits.retain(|h| h.rank + 1e-9 >= keep);
    found.notes.retain(|n| n.rank + 1e-9 >= keep);
    found.truncate(MAX_INJECTED);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_cut_into_clauses_of_some_words() {
        assert_eq!(
            clauses("Refactor the payments module. Then add tests; run them: ok"),
            [
                "Refactor the payments module.",
                "Then add tests;",
                "run them: ok"
            ]
        );
        assert_eq!(clauses("fix it"), ["fix it"]);
        assert_eq!(
            clauses("部署流程是什么？测试命令呢"),
            ["部署流程是什么？", "测试命令呢"]
        );
        // A version number is not a sentence end.
        assert_eq!(
            clauses("bump node to 20.1 and rerun"),
            ["bump node to 20.1 and rerun"]
        );
    }

    #[test]
    fn pasted_output_does_not_decide() {
        let q = decision_queries(
            "why does the payments test fail?\n2026-11-30T10:00:01Z ERROR charge timed out\n",
        );
        assert_eq!(q, ["why does the payments test fail?\n"]);
    }
}
