//! The secret scanner: the write policy's rule that no secret enters the
//! store (see [`crate::policy`]), and the redaction of what memoir prints.
//!
//! Secret formats follow gitleaks' rule set (MIT licensed,
//! github.com/gitleaks/gitleaks), with formats from trufflehog's detectors
//! and GitHub's secret-scanning list, plus generic rules: a secret-looking
//! name with a value that looks like one (gated by Shannon entropy and the
//! value's shape), passwords in URLs, `Authorization` headers, docker's
//! `"auth"`, a token or key named in prose ("the token is …") when its
//! value looks machine-made. Before the rules run, what a secret may hide
//! in is decoded (base64, also with letters glued to it, hex, YAML escapes
//! and block scalars, see `decode`). A refusal
//! names the rule and the line, never the secret.

mod decode;
mod gate;
mod rules;
#[cfg(test)]
mod tests;

use regex::Regex;
use rules::{Def, RULES};
use std::ops::Range;
use std::sync::OnceLock;

/// How many times decoded text is decoded again (base64 in base64, or
/// base64 behind a YAML escape).
const DECODE_DEPTH: u8 = 2;
/// How far before a keyword a match may start (names before separators,
/// the 76 characters before an Azure DevOps token's `AZDO`).
const BACK: usize = 256;

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

/// One keyword search: an Aho-Corasick automaton of the literals
/// (leftmost-first, longest first, as a regex alternation of them would
/// match), and what each literal wakes.
struct Keywords {
    search: aho_corasick::AhoCorasick,
    words: Vec<&'static str>,
    /// How a keyword is compared: as written, or ASCII-lowercased.
    key: fn(&str) -> String,
    /// For each word, the rules to run near it: its own, and those of the
    /// words it contains (a leftmost search reports one word per position).
    /// Worked out the first time the word is found: most texts hold few
    /// keywords, and all of them for every word cost a process more than
    /// the scan.
    rules: Vec<OnceLock<Vec<usize>>>,
    /// For each word, the words that may start inside it (`-api` and
    /// `api-` in `x-api-key`), with the offset: the search moves on from a
    /// match's end and would not see them. Also worked out when found.
    overlaps: Vec<OnceLock<Vec<(usize, usize)>>>,
}

impl Keywords {
    fn new(words: Vec<&'static str>, key: fn(&str) -> String) -> Option<Keywords> {
        let mut words = words;
        words.sort_unstable();
        words.dedup();
        // Longest first: the alternation prefers earlier branches.
        words.sort_by_key(|w| std::cmp::Reverse(w.len()));
        // Built in a fraction of a regex alternation's time: this runs once
        // in every process that scans (every note, recall, context), most
        // of which scan a few hundred bytes, so a contiguous NFA (built in
        // 2.7 ms) beats a DFA (4.3 ms, at most 20% faster on 256 KiB).
        let search = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(&words)
            .ok()?;
        Some(Keywords {
            search,
            rules: words.iter().map(|_| OnceLock::new()).collect(),
            overlaps: words.iter().map(|_| OnceLock::new()).collect(),
            words,
            key,
        })
    }

    /// The rules word `i` wakes: those with a keyword it contains.
    fn rules_of(&self, i: usize) -> &[usize] {
        self.rules[i].get_or_init(|| {
            let w = (self.key)(self.words[i]);
            (0..RULES.len())
                .filter(|&r| {
                    RULES[r]
                        .kw
                        .iter()
                        .any(|k| w.contains((self.key)(k).as_str()))
                })
                .collect()
        })
    }

    /// The words that may start inside word `i`, each with its offset.
    fn overlaps_of(&self, i: usize) -> &[(usize, usize)] {
        self.overlaps[i].get_or_init(|| {
            let a = self.words[i];
            let mut o = Vec::new();
            for (bi, b) in self.words.iter().enumerate() {
                for at in 1..a.len() {
                    if a.is_char_boundary(at) && b.len() > a.len() - at && b.starts_with(&a[at..]) {
                        o.push((at, bi));
                    }
                }
            }
            o
        })
    }
}

/// The compiled rules, each compiled on first use.
struct Engine {
    /// Keywords with an uppercase letter, matched exactly in the text.
    exact: Keywords,
    /// The others, matched in the ASCII-lowercased text.
    folded: Keywords,
    /// Rules with no keyword, run over the whole text.
    always: Vec<usize>,
    compiled: Vec<OnceLock<Option<Regex>>>,
}

fn is_exact(k: &str) -> bool {
    k.bytes().any(|b| b.is_ascii_uppercase())
}

fn engine() -> Option<&'static Engine> {
    static ENGINE: OnceLock<Option<Engine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let all = RULES.iter().flat_map(|r| r.kw.iter().copied());
            let exact = Keywords::new(all.clone().filter(|k| is_exact(k)).collect(), |k| {
                k.to_string()
            })?;
            let folded = Keywords::new(all.filter(|k| !is_exact(k)).collect(), |k| {
                k.to_ascii_lowercase()
            })?;
            let always = (0..RULES.len())
                .filter(|&i| RULES[i].kw.is_empty())
                .collect();
            Some(Engine {
                exact,
                folded,
                always,
                compiled: RULES.iter().map(|_| OnceLock::new()).collect(),
            })
        })
        .as_ref()
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

/// The line around a position, found by scanning forward only: keywords
/// come in order, so each line is looked up once (a per-hit search of a
/// long line would be quadratic).
struct Lines<'a> {
    text: &'a str,
    current: Range<usize>,
}

impl Lines<'_> {
    fn around(&mut self, at: usize) -> Range<usize> {
        if at < self.current.start || at > self.current.end || self.current.is_empty() {
            let from = if at >= self.current.end {
                self.current.end
            } else {
                0
            };
            let start = self.text[from..at]
                .rfind('\n')
                .map_or(from, |i| from + i + 1);
            let end = self.text[at..]
                .find('\n')
                .map_or(self.text.len(), |i| at + i);
            self.current = start..end;
        }
        self.current.clone()
    }
}

/// The text a rule must see for a keyword at `at..end`: from `BACK` before
/// to `FORWARD` after, within the line unless the rule spans lines.
fn window(text: &str, line: &Range<usize>, def: &Def, at: usize, end: usize) -> Range<usize> {
    let mut lo = at.saturating_sub(BACK);
    let mut hi = end.saturating_add(def.forward).min(text.len());
    if !def.multiline {
        lo = lo.max(line.start);
        hi = hi.min(line.end.max(end));
    }
    floor_boundary(text, lo)..ceil_boundary(text, hi)
}

/// The rules' matches in `text` itself (nothing decoded).
fn scan_direct(e: &Engine, text: &str, first_per_line: bool, out: &mut Vec<Hit>) {
    for (r, list) in rule_windows(e, text).iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        let Some(re) = e.regex(r) else { continue };
        for w in list {
            matches_in(re, r, text, w.clone(), first_per_line, out);
        }
    }
}

/// Per rule, the ranges of `text` it must run over: merged windows around
/// each of its keywords, or the whole text for a rule without one.
fn rule_windows(e: &Engine, text: &str) -> Vec<Vec<Range<usize>>> {
    let lower = text.to_ascii_lowercase();
    let mut windows: Vec<Vec<Range<usize>>> = vec![Vec::new(); RULES.len()];
    for (keywords, hay) in [(&e.exact, text), (&e.folded, lower.as_str())] {
        let mut lines = Lines {
            text,
            current: 0..0,
        };
        let mut wake = |word: usize, at: usize, end: usize| {
            let line = lines.around(at);
            for &r in keywords.rules_of(word) {
                let w = window(text, &line, &RULES[r], at, end);
                // Merged as they come: one search finds keywords in order.
                let list = &mut windows[r];
                match list.last_mut() {
                    Some(last) if last.end >= w.start && last.start <= w.start => {
                        last.end = last.end.max(w.end)
                    }
                    _ => list.push(w),
                }
            }
        };
        for m in keywords.search.find_iter(hay) {
            let word = m.pattern().as_usize();
            wake(word, m.start(), m.end());
            for &(offset, other) in keywords.overlaps_of(word) {
                let at = m.start() + offset;
                let w = keywords.words[other];
                if hay[at..].starts_with(w) {
                    wake(other, at, at + w.len());
                }
            }
        }
    }
    // A rule with keywords of both kinds has two runs of windows.
    for list in windows.iter_mut().filter(|l| l.len() > 1) {
        if list.windows(2).any(|p| p[1].start < p[0].start) {
            list.sort_by_key(|w| w.start);
            let mut merged: Vec<Range<usize>> = Vec::with_capacity(list.len());
            for w in list.drain(..) {
                match merged.last_mut() {
                    Some(last) if last.end >= w.start => last.end = last.end.max(w.end),
                    _ => merged.push(w),
                }
            }
            *list = merged;
        }
    }
    for &r in &e.always {
        windows[r].push(0..text.len());
    }
    windows
}

/// The matches of rule `r` (compiled as `re`) in the window `w` of `text`
/// that pass its gate.
fn matches_in(
    re: &regex::Regex,
    r: usize,
    text: &str,
    w: Range<usize>,
    first_per_line: bool,
    out: &mut Vec<Hit>,
) {
    let def = &RULES[r];
    let hay = &text[w.clone()];
    let mut at = 0;
    while at <= hay.len() {
        let Some(c) = re.captures_at(hay, at) else {
            break;
        };
        let (Some(whole), Some(value)) = (
            c.get(0),
            c.name("v").or_else(|| c.get(1)).or_else(|| c.get(0)),
        ) else {
            break;
        };
        at = ceil_boundary(hay, whole.end().max(whole.start() + 1));
        let name = c.name("n").map(|n| n.as_str());
        if gate::passes(def.gate, name, value.as_str()) {
            out.push(Hit {
                rule: r,
                span: w.start + value.start()..w.start + value.end(),
            });
            // One finding per line and rule is all find_secrets reports:
            // a line full of secrets is not judged 2,000 times.
            if first_per_line {
                at = hay[value.end()..]
                    .find('\n')
                    .map_or(hay.len() + 1, |i| value.end() + i + 1);
            }
        }
    }
}

/// Every secret in `text`, decoded text included, as spans of `text`; with
/// `first_per_line`, only the first of each rule on a line.
fn scan(text: &str, depth: u8, first_per_line: bool, out: &mut Vec<Hit>) {
    let Some(e) = engine() else { return };
    let text = &*without_stubs(text);
    scan_direct(e, text, first_per_line, out);
    if depth == 0 {
        return;
    }
    let derived = decode::derive(text);
    if derived.pieces.is_empty() {
        return;
    }
    let mut inner = Vec::new();
    scan(&derived.buf, depth - 1, first_per_line, &mut inner);
    for hit in inner {
        if let Some(orig) = derived.origin(hit.span.start) {
            out.push(Hit {
                rule: hit.rule,
                span: orig,
            });
        }
    }
}

/// A secret in a name (a memory's name, a file's name, a title): the
/// first the rules find. A token glued into the name by `_`
/// (`deploy_ghp_…`) is found, as in any text (the rules' ends are `\b` or
/// `_`: `rules`); one scan, so a long title costs its length.
pub fn find_in_name(name: &str) -> Option<Finding> {
    find_secrets(name).into_iter().next()
}

/// Bumped whenever what a scan finds changes other than through the rule
/// table (the gates' or the decoders' code): with the table, it makes
/// [`rules_fingerprint`].
const ENGINE_VERSION: u64 = 1;

/// A fingerprint of what the scanner finds: the rule table (ids, keywords,
/// patterns, gates, windows), the decoding depth and `ENGINE_VERSION`.
/// The persistent index records it beside its "holds no secret" flags, so
/// that an index written under other rules never vouches for a text.
/// Computed on first use (some 20 KB hashed: microseconds, where building
/// the engine it stands in for costs milliseconds).
pub fn rules_fingerprint() -> u64 {
    use crate::model::fingerprint::{fingerprint, fingerprint_extend};
    static PRINT: OnceLock<u64> = OnceLock::new();
    *PRINT.get_or_init(|| {
        let mut h = fingerprint(&ENGINE_VERSION.to_le_bytes());
        h = fingerprint_extend(h, &[DECODE_DEPTH]);
        h = fingerprint_extend(h, &(BACK as u64).to_le_bytes());
        for r in RULES {
            // Each part ends with a byte no pattern holds, so that moving
            // text from one part to the next changes the print.
            let mut part = |bytes: &[u8]| {
                h = fingerprint_extend(h, bytes);
                h = fingerprint_extend(h, &[0xff]);
            };
            part(r.id.as_bytes());
            for k in r.kw {
                part(k.as_bytes());
            }
            part(r.re.as_bytes());
            part(format!("{:?}", r.gate).as_bytes());
            part(&[u8::from(r.multiline)]);
            part(&(r.forward as u64).to_le_bytes());
        }
        h
    })
}

#[cfg(test)]
thread_local! {
    /// How many scans this thread ran: a test checks that a query over
    /// text the index vouches for runs none.
    static SCANS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many scans ([`find_secrets`], [`redact`] and the like) this thread
/// has run.
#[cfg(test)]
pub(crate) fn scans() -> usize {
    SCANS.with(|n| n.get())
}

/// Finds secrets in `text`, one finding per line at most (the first rule
/// of the table wins: the specific formats come before the generic ones),
/// in line order. A secret found in decoded text (base64, a YAML escape or
/// block scalar) is reported at the line of its encoded form.
pub fn find_secrets(text: &str) -> Vec<Finding> {
    #[cfg(test)]
    SCANS.with(|n| n.set(n.get() + 1));
    let mut hits = Vec::new();
    scan(text, DECODE_DEPTH, true, &mut hits);
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

/// `text` with each redaction stub (`[redacted:<rule>]`,
/// `[redacted:<rule>:<hash>]`: what `redact` and the masks write) blanked,
/// byte for byte, so that a rule never takes one for a value: a stub
/// after a keyword (`secret [redacted:…]`, the `pat` in `github-pat`) was
/// a secret again, and a redacted log could never be committed.
fn without_stubs(text: &str) -> std::borrow::Cow<'_, str> {
    const OPEN: &str = "[redacted:";
    if !text.contains(OPEN) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len()..];
        let body = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
            .map_or(after.len(), |n| n);
        if after[body..].starts_with(']') && body > 0 {
            out.extend(std::iter::repeat_n(' ', OPEN.len() + body + 1));
            rest = &after[body + 1..];
        } else {
            out.push_str(OPEN);
            rest = after;
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Where the value a generic rule matched at `end` really ends: its run
/// of characters up to a space, a quote or a closing bracket. A rule's
/// value class stops at characters a password may hold (`Tr0ub4dor&3x`
/// matched as `Tr0ub4dor`), and redacting only that would leave the rest
/// of the secret in the text.
fn value_end(text: &str, end: usize) -> usize {
    let stop = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '<' | '>' | ')' | ']' | '}' | ',' | ';'
            )
    };
    text[end..].find(stop).map_or(text.len(), |n| end + n)
}

/// Where the PEM key whose header the rule matched (up to `end`) ends:
/// after its `-----END …-----` line, or, cut short, at the end of the
/// text. The rule matches the header; redacting only that left the key's
/// data in a note, a memory shown, an agent's prompt.
fn key_end(text: &str, end: usize) -> usize {
    let rest = &text[end..];
    let Some(at) = rest.find("-----END") else {
        return text.len();
    };
    let after = at + "-----END".len();
    rest[after..]
        .find("-----")
        .map_or(text.len(), |n| end + after + n + "-----".len())
}

/// `text` with every secret [`find_secrets`] finds replaced by
/// `[redacted:<rule>]`: the matched value, or the whole encoded run (or
/// quoted scalar) a decoded secret came from. For error messages that echo
/// input (clap's "unexpected argument '…'"). Linear in the text, whatever
/// it holds.
pub fn redact(text: &str) -> String {
    redact_with(text, |rule, _| format!("[redacted:{rule}]"))
}

/// [`redact`], borrowing `text` when it holds no secret (one scan either
/// way: for what memoir prints, line by line).
pub fn redacted(text: &str) -> std::borrow::Cow<'_, str> {
    let out = redact(text);
    if out == text {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(out)
    }
}

/// Redacts every string of a JSON document in place: the document stays
/// valid JSON, where redacting its serialized text could break a string.
pub fn redact_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = redacted(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::Object(map) => map.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// The text standard or URL-safe base64 holds (whitespace ignored), if it
/// is base64 of text: what a YAML `!!binary` value hides.
pub(crate) fn base64_text(encoded: &str) -> Option<String> {
    let compact: Vec<u8> = encoded
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    decode::base64_text(&compact)
}

/// [`redact`] with the stub of each secret made by `stub(rule, secret)`
/// (`memoir redact` puts a hash of the secret in it).
pub(crate) fn redact_with(text: &str, stub: impl Fn(&str, &str) -> String) -> String {
    #[cfg(test)]
    SCANS.with(|n| n.set(n.get() + 1));
    let mut hits = Vec::new();
    scan(text, DECODE_DEPTH, false, &mut hits);
    if hits.is_empty() {
        return text.to_string();
    }
    for h in &mut hits {
        h.span = floor_boundary(text, h.span.start)..ceil_boundary(text, h.span.end);
        match RULES[h.rule].id {
            "generic-secret" => h.span.end = value_end(text, h.span.end),
            "private-key" => h.span.end = key_end(text, h.span.end),
            _ => {}
        }
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
        out.push_str(&stub(RULES[rule].id, &text[start..end]));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}
