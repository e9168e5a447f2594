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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
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
    let deep = |line| OutOfBounds {
        line,
        message: format!("YAML nested deeper than {MAX_DEPTH} levels"),
    };
    let mut quote = Quote::None;
    let mut aliases = 0usize;
    // Indentations of the open block collections.
    let mut indents: Vec<usize> = Vec::new();
    // Inside a block scalar (`|`, `>`) opened on a line of this indentation.
    let mut block_scalar: Option<usize> = None;
    let mut flow = 0usize;
    for (n, line) in yaml.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if quote == Quote::None && flow == 0 {
            if let Some(parent) = block_scalar {
                if rest.trim().is_empty() || indent > parent {
                    continue;
                }
                block_scalar = None;
            }
            if rest.trim().is_empty() || rest.starts_with('#') {
                continue;
            }
            while indents.last().is_some_and(|&i| i >= indent) {
                indents.pop();
            }
            indents.push(indent);
        }
        let bytes = rest.as_bytes();
        let mut entries = 0usize;
        // At the start of a node: where a quote, a bracket, an anchor or an
        // alias is YAML rather than text of a plain scalar.
        let mut node_start = quote == Quote::None;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            match quote {
                Quote::Double => {
                    match b {
                        b'\\' => i += 1,
                        b'"' => quote = Quote::None,
                        _ => {}
                    }
                    continue;
                }
                Quote::Single => {
                    if b == b'\'' {
                        if bytes.get(i) == Some(&b'\'') {
                            i += 1;
                        } else {
                            quote = Quote::None;
                        }
                    }
                    continue;
                }
                Quote::None => {}
            }
            let spaced = bytes.get(i).is_none_or(|c| *c == b' ');
            match b {
                b'#' if i == 1 || bytes[i - 2] == b' ' => break,
                b' ' => continue,
                b'-' | b'?' if node_start && spaced && flow == 0 => entries += 1,
                b':' if spaced || flow > 0 => node_start = true,
                b',' if flow > 0 => node_start = true,
                b'[' | b'{' if node_start || flow > 0 => {
                    flow += 1;
                    node_start = true;
                }
                b']' | b'}' if flow > 0 => {
                    flow -= 1;
                    node_start = false;
                }
                b'"' if node_start => quote = Quote::Double,
                b'\'' if node_start => quote = Quote::Single,
                b'&' | b'*' | b'!' if node_start => {
                    if b != b'!' {
                        aliases += 1;
                        if aliases > MAX_ALIASES {
                            return Err(OutOfBounds {
                                line: n,
                                message: format!(
                                    "YAML with more than {MAX_ALIASES} anchors and aliases"
                                ),
                            });
                        }
                    }
                    // The name, up to a space or a flow indicator; after an
                    // anchor or a tag the node itself may follow.
                    while i < bytes.len()
                        && !matches!(bytes[i], b' ' | b',' | b'[' | b']' | b'{' | b'}')
                    {
                        i += 1;
                    }
                    node_start = b != b'*';
                }
                b'|' | b'>' if node_start && flow == 0 => {
                    block_scalar = Some(indent);
                    break;
                }
                // Text of a plain scalar: brackets in it are text.
                _ => node_start = false,
            }
            if indents.len() + entries + flow > MAX_DEPTH {
                return Err(deep(n));
            }
        }
        if indents.len() + entries + flow > MAX_DEPTH {
            return Err(deep(n));
        }
    }
    Ok(())
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
}
