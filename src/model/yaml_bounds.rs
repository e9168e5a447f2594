//! Bounds on YAML before the YAML parser sees it.
//!
//! Frontmatter comes from anyone who can write a file: a teammate's tool, a
//! buggy agent, a hostile pull request. The YAML parser's time grows with
//! the square of the nesting (200 KB of `[` took `list`, `check` and the
//! prompt hook over 45 s), and a pre-commit or prompt hook must answer in
//! milliseconds. One linear pass bounds the size, the nesting (block
//! indentation, `- ` and `? ` entries, flow `[`/`{`) and the anchors and
//! aliases; only YAML within the bounds is parsed.
//!
//! The pass is conservative: it tracks quoted scalars, comments and block
//! scalars (whose text is not YAML), and otherwise counts every bracket that
//! could open a collection, so a real memory's frontmatter never comes near
//! the bounds while no shape past them reaches the parser.

/// The largest frontmatter (or configuration) memoir parses, in bytes.
pub const MAX_BYTES: usize = 64 * 1024;
/// The deepest nesting of collections.
pub const MAX_DEPTH: usize = 32;
/// The most anchors and aliases together.
pub const MAX_ALIASES: usize = 64;

/// Where YAML is out of bounds: the 0-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfBounds {
    /// 0-based line within the YAML.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Quote {
    #[default]
    None,
    Single,
    Double,
}

/// Checks `yaml` against the bounds in one pass.
pub fn check(yaml: &str) -> Result<(), OutOfBounds> {
    if yaml.len() > MAX_BYTES {
        return Err(OutOfBounds {
            line: 0,
            message: format!(
                "YAML of {} bytes, more than the limit of {MAX_BYTES}",
                yaml.len()
            ),
        });
    }
    let mut scanner = Scanner::default();
    for (n, line) in yaml.lines().enumerate() {
        scanner
            .line(line)
            .map_err(|message| OutOfBounds { line: n, message })?;
    }
    Ok(())
}

/// What the pass carries from line to line.
#[derive(Default)]
struct Scanner {
    /// The quoted scalar being read, which may span lines.
    quote: Quote,
    /// Anchors and aliases so far.
    aliases: usize,
    /// Indentations of the open block collections.
    indents: Vec<usize>,
    /// Inside a block scalar (`|`, `>`) opened on a line of this indentation.
    block_scalar: Option<usize>,
    /// Open flow collections (`[`, `{`).
    flow: usize,
}

/// One line being scanned: its text after the indentation.
struct Line<'a> {
    bytes: &'a [u8],
    /// The next byte to read.
    i: usize,
    /// The line's indentation, in spaces.
    indent: usize,
    /// The `- ` and `? ` entries opened on the line.
    entries: usize,
    /// At the start of a node: where a quote, a bracket, an anchor or an
    /// alias is YAML rather than text of a plain scalar.
    node_start: bool,
}

impl Line<'_> {
    /// The next byte, consumed.
    fn next(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.i).copied();
        self.i += 1;
        b
    }

    /// The next byte, not consumed.
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    /// Was the byte just read the line's first or after a space?
    fn after_space(&self) -> bool {
        self.i < 2 || self.bytes.get(self.i - 2) == Some(&b' ')
    }
}

impl Scanner {
    /// Scans one line; the error says which bound it passes.
    fn line(&mut self, line: &str) -> Result<(), String> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if self.quote == Quote::None && self.flow == 0 && !self.indentation(indent, rest) {
            return Ok(());
        }
        let mut l = Line {
            bytes: rest.as_bytes(),
            i: 0,
            indent,
            entries: 0,
            node_start: self.quote == Quote::None,
        };
        while let Some(b) = l.next() {
            let more = match self.quote {
                Quote::Double => self.double_quoted(&mut l, b),
                Quote::Single => self.single_quoted(&mut l, b),
                Quote::None => self.token(&mut l, b)?,
            };
            // After every byte: a line may close what it opened (`[[]]`),
            // so its end need not be its deepest point.
            if self.indents.len() + l.entries + self.flow > MAX_DEPTH {
                return Err(format!("YAML nested deeper than {MAX_DEPTH} levels"));
            }
            if !more {
                break;
            }
        }
        Ok(())
    }

    /// A line that starts outside quotes and flow collections: ends the
    /// block scalar it is not indented into, closes the block collections
    /// indented as deep or deeper and opens its own. False when the line
    /// holds no YAML to scan (blank, a comment, text of a block scalar).
    fn indentation(&mut self, indent: usize, rest: &str) -> bool {
        if let Some(parent) = self.block_scalar {
            if rest.trim().is_empty() || indent > parent {
                return false;
            }
            self.block_scalar = None;
        }
        if rest.trim().is_empty() || rest.starts_with('#') {
            return false;
        }
        while self.indents.last().is_some_and(|&i| i >= indent) {
            self.indents.pop();
        }
        self.indents.push(indent);
        true
    }

    /// A byte of a double-quoted scalar, where `\` escapes the next byte.
    fn double_quoted(&mut self, l: &mut Line<'_>, b: u8) -> bool {
        match b {
            b'\\' => l.i += 1,
            b'"' => self.quote = Quote::None,
            _ => {}
        }
        true
    }

    /// A byte of a single-quoted scalar, where `''` is a quote.
    fn single_quoted(&mut self, l: &mut Line<'_>, b: u8) -> bool {
        if b == b'\'' {
            if l.peek() == Some(b'\'') {
                l.i += 1;
            } else {
                self.quote = Quote::None;
            }
        }
        true
    }

    /// A byte outside quoted scalars; false when the rest of the line is
    /// not YAML (a comment, a block scalar's header).
    fn token(&mut self, l: &mut Line<'_>, b: u8) -> Result<bool, String> {
        let spaced = l.peek().is_none_or(|c| c == b' ');
        match b {
            b'#' if l.after_space() => return Ok(false),
            b' ' => {}
            b'-' | b'?' if l.node_start && spaced && self.flow == 0 => l.entries += 1,
            b':' if spaced || self.flow > 0 => l.node_start = true,
            b',' if self.flow > 0 => l.node_start = true,
            b'[' | b'{' if l.node_start || self.flow > 0 => {
                self.flow += 1;
                l.node_start = true;
            }
            b']' | b'}' if self.flow > 0 => {
                self.flow -= 1;
                l.node_start = false;
            }
            b'"' if l.node_start => self.quote = Quote::Double,
            b'\'' if l.node_start => self.quote = Quote::Single,
            b'&' | b'*' | b'!' if l.node_start => self.property(l, b)?,
            b'|' | b'>' if l.node_start && self.flow == 0 => {
                self.block_scalar = Some(l.indent);
                return Ok(false);
            }
            // Text of a plain scalar: brackets in it are text.
            _ => l.node_start = false,
        }
        Ok(true)
    }

    /// An anchor (`&`), an alias (`*`) or a tag (`!`), up to its name's end.
    fn property(&mut self, l: &mut Line<'_>, b: u8) -> Result<(), String> {
        if b != b'!' {
            self.aliases += 1;
            if self.aliases > MAX_ALIASES {
                return Err(format!(
                    "YAML with more than {MAX_ALIASES} anchors and aliases"
                ));
            }
        }
        // The name, up to a space or a flow indicator; after an anchor or a
        // tag the node itself may follow.
        while l
            .peek()
            .is_some_and(|c| !matches!(c, b' ' | b',' | b'[' | b']' | b'{' | b'}'))
        {
            l.i += 1;
        }
        l.node_start = b != b'*';
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_frontmatter_is_within_bounds() {
        for yaml in [
            "name: x\ndescription: Use `[a]` and {b}, it's fine: really\ntype: project\n",
            "tags:\n- a\n- b\nsource: 'it''s [quoted'\nbody: \"[[[[\\\" {{{\"\n",
            "description: >\n  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  more\ntype: user\n",
            "a: &x 1\nb: *x\nc: [1, [2, [3]], {d: e}]\n# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n",
            "metadata:\n  type: feedback\n  nested:\n    deeper: yes\n",
        ] {
            assert_eq!(check(yaml), Ok(()), "{yaml}");
        }
    }

    #[test]
    fn hostile_shapes_are_refused_at_once() {
        let cases = [
            format!("tags: {}\n", "[".repeat(100_000)),
            format!("tags: {}\n", "{a: ".repeat(50_000)),
            format!("tags:\n  {}x\n", "- ".repeat(100_000)),
            format!("tags:\n  {}x\n", "? ".repeat(100_000)),
            format!("a: &a x\ntags: [{}]\n", vec!["*a"; 1000].join(",")),
            (0..40).map(|i| format!("{}a:\n", " ".repeat(i))).collect(),
            format!("description: {}\n", "x".repeat(MAX_BYTES)),
        ];
        for yaml in &cases {
            let start = std::time::Instant::now();
            assert!(check(yaml).is_err(), "{}", &yaml[..60.min(yaml.len())]);
            assert!(start.elapsed().as_millis() < 500);
        }
    }

    /// `check` of `yaml` at a construct's limit passes, and one past it
    /// fails on the 0-based line `line`.
    fn limit(at: &str, past: &str, line: usize) {
        assert_eq!(check(at), Ok(()), "{at}");
        let e = check(past).expect_err(past);
        assert_eq!(e.line, line, "{past}");
        assert!(e.message.contains("nested deeper than 32"), "{e:?}");
    }

    #[test]
    fn block_indentation() {
        let ladder =
            |n: usize| -> String { (0..n).map(|i| format!("{}a:\n", " ".repeat(i))).collect() };
        limit(&ladder(32), &ladder(33), 32);
        // A line back at a lower indentation closes the deeper collections.
        limit(
            &format!("{}b: x\n{}", ladder(32), ladder(32)),
            &format!("{}b: x\n{}", ladder(32), ladder(33)),
            65,
        );
    }

    #[test]
    fn block_entries() {
        for entry in ["- ", "? "] {
            let line = |n: usize| format!("a:\n  {}x\n", entry.repeat(n));
            limit(&line(30), &line(31), 1);
        }
        // `-` without a space is text, and entries count only at a node's start.
        assert_eq!(check(&format!("a: -{}\n", "- ".repeat(100))), Ok(()));
        assert_eq!(check(&format!("a: x {}\n", "- ".repeat(100))), Ok(()));
    }

    #[test]
    fn flow_brackets() {
        limit(
            &format!("a: {}\n", "[".repeat(31)),
            &format!("a: {}\n", "[".repeat(32)),
            0,
        );
        limit(
            &format!("a: {}\n", "{b: ".repeat(31)),
            &format!("a: {}\n", "{b: ".repeat(32)),
            0,
        );
        // Closed on the same line, still too deep; closed, then opened again, not.
        let closed = |n: usize| format!("a: {}{}\n", "[".repeat(n), "]".repeat(n));
        limit(
            &format!("x: {}\n{}", "]".repeat(5), closed(31)),
            &closed(32),
            0,
        );
        let reopened = format!(
            "a: [{}{}, {}]\n",
            "[".repeat(30),
            "]".repeat(30),
            "[".repeat(30)
        );
        assert_eq!(check(&reopened), Ok(()));
        // Open across lines, where indentation opens nothing.
        limit(
            &format!("a: [\n{}\n", "  [".repeat(30)),
            &format!("a: [\n  {}\n", "[".repeat(31)),
            1,
        );
        // In a plain scalar brackets are text.
        assert_eq!(check(&format!("a: b{}\n", "[".repeat(100))), Ok(()));
    }

    #[test]
    fn quoted_scalars() {
        // Brackets in quotes are text; `\"` and `''` do not end them.
        let double = |n: usize| format!("a: [\"\\\"{}\", {}\n", "[".repeat(100), "[".repeat(n));
        limit(&double(30), &double(31), 0);
        let single = |n: usize| format!("a: ['it''s {}', {}\n", "[".repeat(100), "[".repeat(n));
        limit(&single(30), &single(31), 0);
        // A quoted scalar may span lines; a quote in a plain scalar is text.
        let lines =
            |n: usize| format!("a: \"x\n{}\n  y\"\nb: {}\n", "[".repeat(100), "[".repeat(n));
        limit(&lines(31), &lines(32), 3);
        let plain = |n: usize| format!("a: it's\nb: {}\n", "[".repeat(n));
        limit(&plain(31), &plain(32), 1);
    }

    #[test]
    fn comments() {
        assert_eq!(check(&format!("# {}\n", "[".repeat(100))), Ok(()));
        assert_eq!(check(&format!("a: [ # {}\n]\n", "[".repeat(100))), Ok(()));
        // `#` after a non-space is not a comment.
        let text = |n: usize| format!("a: [#{}\n", "[".repeat(n));
        limit(&text(30), &text(31), 0);
    }

    #[test]
    fn block_scalars() {
        for header in ["|", ">", "|-", ">+"] {
            let after = |n: usize| {
                format!(
                    "a: {header}\n  {}\n\n  more\nb: {}\n",
                    "[".repeat(100),
                    "[".repeat(n)
                )
            };
            limit(&after(31), &after(32), 4);
        }
        // In a flow collection `|` is not a block scalar's header.
        let flow = |n: usize| format!("a: [|{}\n", "[".repeat(n));
        limit(&flow(30), &flow(31), 0);
    }

    #[test]
    fn anchors_aliases_and_tags() {
        let aliases = |n: usize| format!("a: &a x\nb: [{}]\n", vec!["*a"; n].join(", "));
        assert_eq!(check(&aliases(MAX_ALIASES - 1)), Ok(()));
        let e = check(&aliases(MAX_ALIASES)).unwrap_err();
        assert_eq!(
            e,
            OutOfBounds {
                line: 1,
                message: "YAML with more than 64 anchors and aliases".into()
            }
        );
        // Tags are not counted.
        assert_eq!(
            check(&format!("b: [{}]\n", vec!["!t x"; 100].join(", "))),
            Ok(())
        );
        // After an anchor or a tag the node follows; after an alias, text.
        for property in ["&x ", "!t ", "&x", "!!seq"] {
            let node = |n: usize| format!("a: {property}{}\n", "[".repeat(n));
            limit(&node(31), &node(32), 0);
        }
        assert_eq!(check(&format!("a: *x {}\n", "[".repeat(100))), Ok(()));
    }

    #[test]
    fn size() {
        let yaml = |n: usize| format!("a: {}\n", "x".repeat(n - 4));
        assert_eq!(check(&yaml(MAX_BYTES)), Ok(()));
        let e = check(&yaml(MAX_BYTES + 1)).unwrap_err();
        assert_eq!(
            e,
            OutOfBounds {
                line: 0,
                message: "YAML of 65537 bytes, more than the limit of 65536".into()
            }
        );
    }
}
