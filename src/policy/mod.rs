//! The write policy: what may enter the store, on every path that writes.
//!
//! Secret formats follow gitleaks' rule set (MIT licensed,
//! github.com/gitleaks/gitleaks), with formats from trufflehog's detectors
//! and GitHub's secret-scanning list, plus generic rules: a secret-looking
//! name with a value that looks like one (gated by Shannon entropy and the
//! value's shape), passwords in URLs, `Authorization` headers, docker's
//! `"auth"`. Before the rules run, what a secret may hide in is decoded
//! (base64, YAML escapes and block scalars, see [`decode`]). A refusal
//! names the rule and the line, never the secret.

mod decode;
mod gate;
mod rules;
#[cfg(test)]
mod tests;

pub use gate::entropy;

use regex::Regex;
use rules::{Def, RULES};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

/// The largest note, in bytes.
pub const MAX_NOTE_BYTES: usize = 64 * 1024;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 400;
/// The longest source, in characters.
pub const MAX_SOURCE_CHARS: usize = 400;

/// How many times decoded text is decoded again (base64 in base64, or
/// base64 behind a YAML escape).
const DECODE_DEPTH: u8 = 2;
/// How far before a keyword a match may start (names before separators,
/// the 76 characters before an Azure DevOps token's `AZDO`).
const BACK: usize = 256;
/// How far after a keyword a match may end (long JWTs, Fly macaroons).
const FORWARD: usize = 8192;

/// A secret found in text: which rule matched, on which line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's id, e.g. `github-pat`.
    pub rule: &'static str,
    /// The line within the scanned text.
    pub line: usize,
}

/// A match that passed its gate: the rule's index in [`RULES`] and the
/// span of the secret's value in the scanned text.
#[derive(Debug, Clone)]
struct Hit {
    rule: usize,
    span: Range<usize>,
}

/// The compiled rules, each compiled on first use.
struct Engine {
    /// All keywords, one alternation (an Aho-Corasick search inside regex).
    keywords: Regex,
    /// For a keyword found, the rules to run near it: its own, and those of
    /// keywords it contains or overlaps into (a leftmost search reports one
    /// keyword per position and none that start inside it).
    by_keyword: HashMap<&'static str, Vec<usize>>,
    /// Rules with no keyword, run over the whole text.
    always: Vec<usize>,
    compiled: Vec<OnceLock<Option<Regex>>>,
}

fn engine() -> Option<&'static Engine> {
    static ENGINE: OnceLock<Option<Engine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut words: Vec<&'static str> =
                RULES.iter().flat_map(|r| r.kw.iter().copied()).collect();
            words.sort_unstable();
            words.dedup();
            // Longest first: the alternation prefers earlier branches.
            words.sort_by_key(|w| std::cmp::Reverse(w.len()));
            let alternation: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
            let keywords = Regex::new(&alternation.join("|")).ok()?;
            let mut by_keyword: HashMap<&'static str, Vec<usize>> = HashMap::new();
            for &w in &words {
                let mut rules: Vec<usize> = Vec::new();
                for (i, r) in RULES.iter().enumerate() {
                    if r.kw.iter().any(|k| related(w, k)) {
                        rules.push(i);
                    }
                }
                by_keyword.insert(w, rules);
            }
            let always = (0..RULES.len())
                .filter(|&i| RULES[i].kw.is_empty())
                .collect();
            Some(Engine {
                keywords,
                by_keyword,
                always,
                compiled: RULES.iter().map(|_| OnceLock::new()).collect(),
            })
        })
        .as_ref()
}

/// Whether finding `found` must also wake the rules of keyword `k`: `k` is
/// inside `found`, or starts in `found`'s tail.
fn related(found: &str, k: &str) -> bool {
    found.contains(k)
        || (1..found.len()).any(|i| found.is_char_boundary(i) && k.starts_with(&found[i..]))
}

impl Engine {
    fn regex(&self, i: usize) -> Option<&Regex> {
        self.compiled[i]
            .get_or_init(|| {
                // Secrets are ASCII: ASCII classes and word boundaries compile
                // far faster than Unicode ones (milliseconds for a Unicode
                // `\w` here), and this runs on every `note`. The patterns
                // are constants, each compiled by a test; a bad one is
                // skipped, not a panic.
                regex::RegexBuilder::new(RULES[i].re)
                    .unicode(false)
                    .size_limit(4 << 20)
                    .build()
                    .ok()
            })
            .as_ref()
    }
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The text a rule must see for a keyword at `at..end`: from `BACK` before
/// to `FORWARD` after, within the line unless the rule spans lines.
fn window(text: &str, def: &Def, at: usize, end: usize) -> Range<usize> {
    let mut lo = floor_boundary(text, at.saturating_sub(BACK));
    let mut hi = ceil_boundary(text, end.saturating_add(FORWARD));
    if !def.multiline {
        if let Some(nl) = text[lo..at].rfind('\n') {
            lo += nl + 1;
        }
        if let Some(nl) = text[end..hi].find('\n') {
            hi = end + nl;
        }
    }
    lo..hi
}

/// The rules' matches in `text` itself (nothing decoded).
fn scan_direct(e: &Engine, text: &str, out: &mut Vec<Hit>) {
    let lower = text.to_ascii_lowercase();
    // Windows per rule, merged as they come (keywords are found in order).
    let mut windows: Vec<Vec<Range<usize>>> = vec![Vec::new(); RULES.len()];
    let mut pos = 0;
    while let Some(m) = e.keywords.find_at(&lower, pos) {
        if let Some(rules) = e.by_keyword.get(m.as_str()) {
            for &r in rules {
                let w = window(text, &RULES[r], m.start(), m.end());
                let list = &mut windows[r];
                match list.last_mut() {
                    Some(last) if last.end >= w.start => last.end = last.end.max(w.end),
                    _ => list.push(w),
                }
            }
        }
        pos = m.end().max(m.start() + 1);
        pos = ceil_boundary(&lower, pos);
        if pos >= lower.len() {
            break;
        }
    }
    for &r in &e.always {
        windows[r].push(0..text.len());
    }
    for (r, list) in windows.iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        let Some(re) = e.regex(r) else { continue };
        let def = &RULES[r];
        for w in list {
            let hay = &text[w.clone()];
            for c in re.captures_iter(hay) {
                let Some(value) = c.name("v").or_else(|| c.get(1)).or_else(|| c.get(0)) else {
                    continue;
                };
                let name = c.name("n").map(|n| n.as_str());
                if gate::passes(def.gate, name, value.as_str()) {
                    out.push(Hit {
                        rule: r,
                        span: w.start + value.start()..w.start + value.end(),
                    });
                }
            }
        }
    }
}

/// Every secret in `text`, decoded text included, as spans of `text`.
fn scan(text: &str, depth: u8, out: &mut Vec<Hit>) {
    let Some(e) = engine() else { return };
    scan_direct(e, text, out);
    if depth == 0 {
        return;
    }
    let derived = decode::derive(text);
    if derived.pieces.is_empty() {
        return;
    }
    let mut inner = Vec::new();
    scan(&derived.buf, depth - 1, &mut inner);
    for hit in inner {
        if let Some(orig) = derived.origin(hit.span.start) {
            out.push(Hit {
                rule: hit.rule,
                span: orig,
            });
        }
    }
}

/// Finds secrets in `text`, one finding per line at most (the first rule
/// of the table wins: the specific formats come before the generic ones),
/// in line order. A secret found in decoded text (base64, a YAML escape or
/// block scalar) is reported at the line of its encoded form.
pub fn find_secrets(text: &str) -> Vec<Finding> {
    let mut hits = Vec::new();
    scan(text, DECODE_DEPTH, &mut hits);
    if hits.is_empty() {
        return Vec::new();
    }
    let newlines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    let mut best: Vec<(usize, usize)> = hits
        .iter()
        .map(|h| (newlines.partition_point(|&n| n < h.span.start) + 1, h.rule))
        .collect();
    best.sort_unstable();
    best.dedup_by_key(|(line, _)| *line);
    best.into_iter()
        .map(|(line, rule)| Finding {
            rule: RULES[rule].id,
            line,
        })
        .collect()
}

/// `text` with every secret [`find_secrets`] finds replaced by
/// `[redacted:<rule>]`: the matched value, or the whole encoded run (or
/// quoted scalar) a decoded secret came from. For error messages that echo
/// input (clap's "unexpected argument '…'"). Linear in the text, whatever
/// it holds.
pub fn redact(text: &str) -> String {
    let mut hits = Vec::new();
    scan(text, DECODE_DEPTH, &mut hits);
    if hits.is_empty() {
        return text.to_string();
    }
    for h in &mut hits {
        h.span = floor_boundary(text, h.span.start)..ceil_boundary(text, h.span.end);
    }
    hits.sort_by_key(|h| (h.span.start, h.rule));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut k = 0;
    while k < hits.len() {
        let start = hits[k].span.start.max(at);
        let mut end = hits[k].span.end;
        let rule = hits[k].rule;
        k += 1;
        // Overlapping finds become one redaction, named by the first.
        while k < hits.len() && hits[k].span.start < end {
            end = end.max(hits[k].span.end);
            k += 1;
        }
        if end <= start {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str("[redacted:");
        out.push_str(RULES[rule].id);
        out.push(']');
        at = end;
    }
    out.push_str(&text[at..]);
    out
}
