//! What a secret may hide in: base64 runs (also with letters glued to
//! them), runs of hex digits, YAML and JSON escapes, quoted
//! YAML scalars and block scalars. Each is turned into a piece of plain
//! text that the rules then scan, tied to the span of the original it came
//! from (so a finding names the original line, and redaction replaces the
//! encoded run).

use std::ops::Range;

/// The shortest base64 run worth decoding (15 bytes decoded).
const MIN_BASE64: usize = 20;
/// How much of the line before a decoded run is kept with it, so that
/// `password: <base64>` is still judged as a password.
const PREFIX: usize = 64;

/// Decoded text, one piece a line, each tied to where it came from.
#[derive(Default)]
pub(super) struct Derived {
    /// The pieces, each followed by a newline.
    pub buf: String,
    /// Start of each piece in `buf`, with its span in the original (None:
    /// see `segments`).
    pub pieces: Vec<(usize, Option<Range<usize>>)>,
    /// For a rewritten line, the decoded parts in `buf` with their spans in
    /// the original: a find elsewhere in the line was in plain sight, and
    /// the direct scan has it.
    pub segments: Vec<(Range<usize>, Range<usize>)>,
}

impl Derived {
    fn push(&mut self, parts: &[&str], orig: Range<usize>) {
        self.pieces.push((self.buf.len(), Some(orig)));
        for p in parts {
            // A piece is one line: a decoded newline would let a rule see
            // past its piece, and the rules stop at line ends anyway.
            self.buf.extend(
                p.chars()
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
            );
        }
        self.buf.push('\n');
    }

    fn push_raw(&mut self, parts: &[&str], orig: Range<usize>) {
        self.pieces.push((self.buf.len(), Some(orig)));
        for p in parts {
            self.buf.push_str(p);
        }
        self.buf.push('\n');
    }

    /// The original span of what `offset` of `buf` was decoded from.
    pub fn origin(&self, offset: usize) -> Option<Range<usize>> {
        let i = self.pieces.partition_point(|(start, _)| *start <= offset);
        match &self.pieces[i.checked_sub(1)?].1 {
            Some(orig) => Some(orig.clone()),
            None => {
                let k = self.segments.partition_point(|(b, _)| b.start <= offset);
                let (b, orig) = &self.segments[k.checked_sub(1)?];
                (offset < b.end).then(|| orig.clone())
            }
        }
    }
}

fn b64_value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    } as u32)
}

/// Decodes standard or URL-safe base64 (padding optional) that holds text:
/// valid UTF-8 without control characters but tab and newlines. Anything
/// else (binary, not base64) is None, as early as possible.
pub(super) fn base64_text(run: &[u8]) -> Option<String> {
    let run = match run.iter().position(|&c| c == b'=') {
        Some(i) if run[i..].iter().all(|&c| c == b'=') && run.len() - i <= 2 => &run[..i],
        Some(_) => return None,
        None => run,
    };
    let std = run.iter().any(|&c| c == b'+' || c == b'/');
    let url = run.iter().any(|&c| c == b'-' || c == b'_');
    if (std && url) || run.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(run.len() / 4 * 3 + 2);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in run {
        acc = (acc << 6) | b64_value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let byte = (acc >> bits) as u8;
            acc &= (1 << bits) - 1;
            if byte < 0x20 && !matches!(byte, b'\t' | b'\n' | b'\r') || byte == 0x7f {
                return None;
            }
            out.push(byte);
        }
    }
    String::from_utf8(out).ok()
}

/// The text a base64 run holds when letters are glued to it on either
/// side (`xx<base64>yy`, which [`base64_text`] refuses): decoded from each
/// of the four alignments, up to the first byte that is not text, kept
/// when that is at least [`MIN_GLUED_TEXT`] bytes. Random bytes almost
/// never give that much text (fewer than 1 in 10^6 runs), so only a run
/// that holds text is decoded.
fn glued_base64_text(run: &[u8]) -> Option<String> {
    (0..4)
        .filter_map(|skip| text_prefix(run.get(skip..)?))
        .max_by_key(String::len)
}

/// The shortest text [`glued_base64_text`] keeps, in bytes.
const MIN_GLUED_TEXT: usize = 15;

/// What `run` decodes to as base64 (either alphabet, bits past a whole
/// byte dropped) up to its first byte that is not text, if that is at
/// least [`MIN_GLUED_TEXT`] bytes of UTF-8.
fn text_prefix(run: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(run.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in run {
        let Some(v) = b64_value(c) else { break };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            let byte = (acc >> bits) as u8;
            acc &= (1 << bits) - 1;
            if byte < 0x20 && !matches!(byte, b'\t' | b'\n' | b'\r') || byte == 0x7f {
                break;
            }
            out.push(byte);
        }
    }
    let text = match String::from_utf8(out) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()?
        }
    };
    (text.len() >= MIN_GLUED_TEXT).then_some(text)
}

/// The text a run of hex digits holds (`6768705f…`: a token hex-encoded),
/// if it is all text and at least 16 bytes.
fn hex_text(run: &[u8]) -> Option<String> {
    if run.len() < 32 || run.len() % 2 == 1 || !run.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let bytes: Option<Vec<u8>> = run.chunks(2).map(hex).map(|b| b.map(|v| v as u8)).collect();
    let bytes = bytes?;
    if bytes
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r') || b == 0x7f)
    {
        return None;
    }
    String::from_utf8(bytes).ok()
}

fn is_b64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_')
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Every base64 run of `text` that decodes to text, as pieces.
fn base64_runs(text: &str, out: &mut Derived) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !is_b64(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_b64(b[i]) {
            i += 1;
        }
        let mut end = i;
        while end < b.len() && end - i < 2 && b[end] == b'=' {
            end += 1;
        }
        if i - start >= MIN_BASE64 {
            let run = &b[start..end];
            let decoded = base64_text(run)
                .or_else(|| hex_text(&b[start..i]))
                .or_else(|| glued_base64_text(&b[start..i]));
            if let Some(decoded) = decoded {
                let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
                let from = floor_boundary(text, start.saturating_sub(PREFIX).max(line_start));
                out.push(&[&text[from..start], &decoded], start..end);
            }
        }
        i = end.max(i);
    }
}

fn hex(s: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(s).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// The value of a double-quoted YAML (or JSON) scalar's body, escapes
/// resolved; quotes in it dropped, so the value is one run for the rules.
fn unescape_double(body: &[u8]) -> String {
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != b'\\' || i + 1 >= body.len() {
            let len = utf8_len(c);
            if let Some(s) = body
                .get(i..i + len)
                .and_then(|s| std::str::from_utf8(s).ok())
            {
                out.push_str(s);
            }
            i += len.max(1);
            continue;
        }
        let e = body[i + 1];
        let (len, ch) = match e {
            b'x' => (4, body.get(i + 2..i + 4).and_then(hex)),
            b'u' => (6, body.get(i + 2..i + 6).and_then(hex)),
            b'U' => (10, body.get(i + 2..i + 10).and_then(hex)),
            b'0' => (2, Some(0x20)),
            b't' | b'n' | b'r' | b'_' | b'N' | b'L' | b'P' | b'a' | b'b' | b'e' | b'f' | b'v' => {
                (2, Some(0x20))
            }
            _ => (2, Some(e as u32)),
        };
        match ch.and_then(char::from_u32) {
            Some(c) => out.push(c),
            None => out.push('\u{fffd}'),
        }
        i += len;
    }
    out.retain(|c| !matches!(c, '"' | '\'' | '`'));
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Quoted scalars that hide their value (`"\x68…"`, `'it''s'`), in plain,
/// each after the text before it on its line.
fn quoted(text: &str, line: Range<usize>, out: &mut Derived) {
    let l = &text[line.clone()];
    let escapes = l.contains('\\') && l.contains('"');
    if !escapes && !l.contains("''") {
        return;
    }
    let b = l.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if q != b'"' && q != b'\'' {
            i += 1;
            continue;
        }
        // The closing quote: `\"` escapes in double quotes, `''` in single.
        let mut j = i + 1;
        let mut escaped = false;
        while j < b.len() {
            if q == b'"' && b[j] == b'\\' {
                escaped = true;
                j += 2;
                continue;
            }
            if b[j] == q {
                if q == b'\'' && b.get(j + 1) == Some(&b'\'') {
                    escaped = true;
                    j += 2;
                    continue;
                }
                break;
            }
            j += 1;
        }
        if j >= b.len() {
            break;
        }
        if escaped {
            let body = &b[i + 1..j];
            let value = if q == b'"' {
                unescape_double(body)
            } else {
                String::from_utf8_lossy(body).replace('\'', "")
            };
            // The value with what names it (`password: `) before it; a
            // find in that context alone was in plain sight, and the
            // direct scan has it: only the value's span maps back.
            let from = floor_boundary(l, i.saturating_sub(PREFIX));
            let base = out.buf.len();
            out.pieces.push((base, None));
            out.buf.push_str(&l[from..i + 1]);
            let at = out.buf.len();
            out.buf.extend(
                value
                    .chars()
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
            );
            let end = out.buf.len();
            out.buf.push_str("\"\n");
            out.segments
                .push((at..end, line.start + i..line.start + j + 1));
        }
        i = j + 1;
    }
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start_matches([' ', '\t']).len()
}

/// `key:` ending a line, its indentation and the key (`- key`, quotes and
/// all, are fine). The rest after the colon is returned too.
fn yaml_key(l: &str) -> Option<(usize, &str, &str)> {
    let t = l.trim_start_matches([' ', '\t']);
    let t = t.strip_prefix("- ").unwrap_or(t);
    let (key, rest) = match (t.find(':'), t.find('：')) {
        (Some(a), Some(b)) if b < a => (&t[..b], &t[b + '：'.len_utf8()..]),
        (Some(a), _) => (&t[..a], &t[a + 1..]),
        (None, Some(b)) => (&t[..b], &t[b + '：'.len_utf8()..]),
        (None, None) => return None,
    };
    let key = key.trim().trim_matches(['"', '\'']);
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    Some((indent(l), key, rest.trim()))
}

/// Whether `rest` (after `key:`) opens a block scalar: `|`, `>-`, `|2+`…,
/// perhaps with a comment.
fn opens_block(rest: &str) -> bool {
    let r = rest.split(" #").next().unwrap_or("").trim();
    let mut chars = r.chars();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| c == '+' || c == '-' || c.is_ascii_digit())
}

/// YAML values on the lines after their key: block scalars (`key: |`) and
/// a plain scalar on the next, deeper line (`key:` then `  value`). Each
/// content line becomes `key: line`.
fn blocks(text: &str, lines: &[Range<usize>], out: &mut Derived) {
    let mut k = 0;
    while k < lines.len() {
        let l = &text[lines[k].clone()];
        let Some((ind, key, rest)) = yaml_key(l) else {
            k += 1;
            continue;
        };
        let block = opens_block(rest);
        if !block && !rest.is_empty() {
            k += 1;
            continue;
        }
        let mut m = k + 1;
        while m < lines.len() {
            let c = &text[lines[m].clone()];
            if c.trim().is_empty() {
                m += 1;
                continue;
            }
            if indent(c) <= ind {
                break;
            }
            let t = c.trim();
            let plain_ok = !t.contains(' ')
                && !t.starts_with(['-', '#'])
                && !t.ends_with(':')
                && !t.contains(": ");
            if block || plain_ok {
                let start = lines[m].start + indent(c);
                out.push_raw(&[key, ": ", t], start..start + t.len());
            }
            m += 1;
            if !block {
                break;
            }
        }
        // A block's lines are its own; after a plain key, the next line
        // may be a key of its own (`db:` then `  password: |`).
        k = if block { m.max(k + 1) } else { k + 1 };
    }
}

/// A line with invisible characters inside it (a zero-width space splits a
/// token for the rules, not for whoever copies it) or percent-encoding (a
/// URL's `%67hp_…`): the line as it reads once they are removed or decoded.
fn disguised(text: &str, line: Range<usize>, out: &mut Derived) {
    let l = &text[line.clone()];
    let invisible = |c: char| {
        matches!(
            c,
            '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
        )
    };
    if l.chars().any(invisible) {
        let seen: String = l.chars().filter(|&c| !invisible(c)).collect();
        out.push(&[&seen], line.clone());
    }
    let b = l.as_bytes();
    let escaped = |i: usize| {
        b[i] == b'%' && i + 2 < b.len() && b[i + 1..i + 3].iter().all(u8::is_ascii_hexdigit)
    };
    if (0..b.len().saturating_sub(2)).any(escaped) {
        let mut bytes = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if escaped(i) {
                if let Some(v) = hex(&b[i + 1..i + 3]) {
                    bytes.push(v as u8);
                    i += 3;
                    continue;
                }
            }
            bytes.push(b[i]);
            i += 1;
        }
        if let Ok(decoded) = String::from_utf8(bytes) {
            out.push(&[&decoded], line);
        }
    }
}

/// Every piece of hidden text in `text`.
pub(super) fn derive(text: &str) -> Derived {
    let mut out = Derived::default();
    let mut lines = Vec::new();
    let mut start = 0;
    for l in text.split_inclusive('\n') {
        let body = l.trim_end_matches(['\n', '\r']);
        lines.push(start..start + body.len());
        start += l.len();
    }
    for l in &lines {
        quoted(text, l.clone(), &mut out);
        disguised(text, l.clone(), &mut out);
    }
    if text.contains(':') {
        blocks(text, &lines, &mut out);
    }
    base64_runs(text, &mut out);
    out
}
