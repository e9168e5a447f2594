//! The block structure of markdown text, read with pulldown-cmark: a
//! memory body's paragraphs, lists and headings as passages to embed, and
//! the fenced code of a prompt told apart from its prose.
//!
//! Only the top level matters here: a list is one block with its items,
//! a block quote one block, so a passage never cuts a list in half. The
//! frontmatter is not markdown's business (`model::memory` splits it by
//! hand); these functions see a body or a prompt.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::ops::Range;

/// What kind of top-level block a [`Block`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// Prose: a paragraph, a heading, a list, a quote, a table.
    Prose,
    /// A fenced or indented code block: code, a log, pasted output.
    Code,
    /// Anything else (a rule, raw HTML).
    Other,
}

/// One top-level block of a markdown text: where it lies and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Its byte range in the text.
    pub range: Range<usize>,
    /// Prose or code.
    pub kind: BlockKind,
}

/// The top-level blocks of `text`, in order. Text outside any block
/// (blank lines between them) belongs to none.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut kind = BlockKind::Other;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    start = range.start;
                    kind = match tag {
                        Tag::CodeBlock(_) => BlockKind::Code,
                        Tag::HtmlBlock => BlockKind::Other,
                        _ => BlockKind::Prose,
                    };
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let kind = match end {
                        TagEnd::CodeBlock => BlockKind::Code,
                        _ => kind,
                    };
                    out.push(Block {
                        range: start..range.end,
                        kind,
                    });
                }
            }
            // A rule, or raw text at the top level: a block of its own.
            _ if depth == 0 => out.push(Block {
                range,
                kind: BlockKind::Other,
            }),
            _ => {}
        }
    }
    out
}

/// Where `text`'s sections lie: from the start, then from each top-level
/// heading to the next. (A heading inside a list or a quote does not cut;
/// neither does a `#` line in a code block.)
pub fn sections(text: &str) -> Vec<Range<usize>> {
    let mut starts = vec![0];
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 && matches!(tag, Tag::Heading { .. }) && range.start > 0 {
                    starts.push(range.start);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let ends = starts.iter().skip(1).copied().chain([text.len()]);
    starts.iter().zip(ends).map(|(&s, e)| s..e).collect()
}

/// The text's passages for embedding: its prose and code blocks, each
/// trimmed, consecutive short ones joined until a passage has at least
/// `min_chars` characters, a block longer than `max_chars` cut at line
/// ends (or, a line longer still, at a character boundary) into pieces of
/// at most that many.
pub fn passages(text: &str, min_chars: usize, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let mut out: Vec<String> = Vec::new();
    let mut open = String::new();
    for block in blocks(text) {
        if block.kind == BlockKind::Other {
            continue;
        }
        let Some(piece) = text.get(block.range.clone()).map(str::trim) else {
            continue;
        };
        if piece.is_empty() {
            continue;
        }
        for part in cut(piece, max_chars) {
            let joined = open.chars().count() + part.chars().count() + 2;
            if !open.is_empty() && joined > max_chars {
                out.push(std::mem::take(&mut open));
            }
            if !open.is_empty() {
                open.push_str("\n\n");
            }
            open.push_str(part);
            if open.chars().count() >= min_chars {
                out.push(std::mem::take(&mut open));
            }
        }
    }
    if !open.is_empty() {
        out.push(open);
    }
    out
}

/// `text` in pieces of at most `max` characters, cut after a newline
/// where one falls in the second half of a piece.
fn cut(text: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while rest.chars().count() > max {
        let end = rest.char_indices().nth(max).map_or(rest.len(), |(i, _)| i);
        let at = match rest[..end].rfind('\n') {
            Some(nl) if nl > end / 2 => nl + 1,
            _ => end,
        };
        out.push(rest[..at].trim());
        rest = rest[at..].trim_start();
    }
    if !rest.trim().is_empty() {
        out.push(rest.trim());
    }
    out
}

/// The prose of `text` without its code blocks (fenced or indented), and
/// without lines that read as pasted output rather than words to a
/// reader: what a prompt asks, apart from what it quotes.
pub fn prose(text: &str) -> String {
    let mut out = String::new();
    for block in blocks(text) {
        if block.kind != BlockKind::Prose {
            continue;
        }
        let Some(piece) = text.get(block.range) else {
            continue;
        };
        for line in piece.lines().filter(|l| !pasted(l)) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A line that reads as pasted output (a log line, a stack frame, a
/// compiler's or a test runner's report) rather than prose: it starts with
/// a timestamp, a log level, a stack frame or a path with a line number,
/// or it has more symbols and digits than letters.
pub fn pasted(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    let lower = t.to_ascii_lowercase();
    let starts = |p: &str| lower.starts_with(p);
    // A timestamp, a date, a time or a version first: `2026-11-30T…`,
    // `10:00:01`, `1.2.3`.
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let stamp = digits > 0
        && matches!(t.as_bytes().get(digits), Some(b'-' | b':' | b'/' | b'.'))
        && t.as_bytes().get(digits + 1).is_some_and(u8::is_ascii_digit);
    if starts("at ") && (t.contains('(') || t.contains(':'))
        || starts("file \"")
        || starts("traceback")
        || starts("error[")
        || starts("warning[")
        || starts("--> ")
        || starts("==>")
        || starts("$ ")
        || starts("> ")
        || [
            "[error", "[warn", "[info", "[debug", "[trace", "error:", "info:", "debug:",
        ]
        .iter()
        .any(|p| starts(p))
        || [
            "info ", "warn ", "error ", "debug ", "trace ", "fatal ", "panic:",
        ]
        .iter()
        .any(|p| starts(p) && t.len() > 24)
        || stamp
    {
        return true;
    }
    let (mut letters, mut other) = (0usize, 0usize);
    for c in t.chars() {
        if c.is_alphabetic() {
            letters += 1;
        } else if !c.is_whitespace() {
            other += 1;
        }
    }
    other > letters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_start_at_top_level_headings() {
        let text = "intro\n\n## Rules\n- a\n\n```\n# not a heading\n```\n> # quoted\n\n# Next\nb\n";
        let cut: Vec<&str> = sections(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            cut,
            [
                "intro\n\n",
                "## Rules\n- a\n\n```\n# not a heading\n```\n> # quoted\n\n",
                "# Next\nb\n"
            ]
        );
        assert_eq!(sections("").len(), 1);
    }

    #[test]
    fn a_list_is_one_block_and_code_is_told_apart() {
        let text =
            "# Deploys\n\nThey go out on Tuesdays.\n\n- one\n- two\n\n```\nnpm ERR! 404\n```\n";
        let kinds: Vec<_> = blocks(text)
            .iter()
            .map(|b| (text[b.range.clone()].trim().to_string(), b.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("# Deploys".to_string(), BlockKind::Prose),
                ("They go out on Tuesdays.".to_string(), BlockKind::Prose),
                ("- one\n- two".to_string(), BlockKind::Prose),
                ("```\nnpm ERR! 404\n```".to_string(), BlockKind::Code),
            ]
        );
    }

    #[test]
    fn passages_join_short_blocks_and_cut_long_ones() {
        let text = "a b\n\nc d\n\n".to_string() + &"word ".repeat(100);
        let p = passages(&text, 6, 200);
        assert_eq!(p[0], "a b\n\nc d");
        assert!(p.iter().all(|x| x.chars().count() <= 200), "{p:?}");
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(passages("", 10, 100).is_empty());
    }

    #[test]
    fn prose_leaves_out_code_and_pasted_lines() {
        let prompt = "why does the payments test fail?\n\n\
            2026-11-30T10:00:01Z ERROR payments::charge timed out after 30s\n\
            at com.acme.Pay.run(Pay.java:42)\n\n\
            ```\nassert_eq!(left, right)\n```\n\nplease fix it";
        let p = prose(prompt);
        assert!(p.contains("why does the payments test fail?"), "{p}");
        assert!(p.contains("please fix it"), "{p}");
        assert!(!p.contains("timed out"), "{p}");
        assert!(!p.contains("Pay.java"), "{p}");
        assert!(!p.contains("assert_eq"), "{p}");
    }

    #[test]
    fn prose_is_not_mistaken_for_output() {
        for line in [
            "Refactor the payments module and add tests.",
            "What is our Terraform state backend?",
            "我们的测试命令是什么",
            "2 things: run the tests, then lint",
        ] {
            assert!(!pasted(line), "{line}");
        }
    }
}
