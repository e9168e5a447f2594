//! One masking rule for every surface that quotes what it was given (the
//! command line's errors, the MCP server's tool errors): an argument long
//! enough to be a secret, and every form memoir derives from it (the key
//! it normalizes to, and so the file path), is shown by its length only;
//! whatever the secret rules still find becomes `[redacted:<rule>]`.

use crate::model::key::{check_scope, is_slug, Key};

/// The shortest argument that is masked (unless it is plainly a memory
/// key or a path made of words): a token is at least this long.
const MIN_SECRET_LEN: usize = 24;

/// `text` with no secret in it: every one of `arguments` that could be a
/// secret (24 bytes or more, `MIN_SECRET_LEN`; any that spans lines, as a key file
/// does), and the key memoir would normalize it to, is replaced by
/// `<argument of N bytes>` wherever it is quoted; then the secret rules'
/// redaction.
pub fn masked<S: AsRef<str>>(text: &str, arguments: &[S]) -> String {
    let mut out = text.to_string();
    let given = arguments.iter().map(|a| a.as_ref().to_string());
    // A key is quoted as memoir normalizes it (`project/Always use GHP_x`
    // as `project/always-use-ghp-x`): that form hides as the argument does.
    let normalized = arguments.iter().filter_map(|a| {
        let a = a.as_ref();
        let (key, _) = Key::parse(a).ok()?;
        Some((key.to_string(), a.len()))
    });
    let quoted: Vec<(String, usize)> = given
        .map(|a| {
            let len = a.len();
            (a, len)
        })
        .chain(normalized)
        .collect();
    for (arg, len) in quoted {
        let maybe_secret =
            (arg.len() >= MIN_SECRET_LEN && !key_or_path(&arg)) || arg.contains('\n');
        if maybe_secret && out.contains(arg.as_str()) {
            out = out.replace(arg.as_str(), &format!("<argument of {len} bytes>"));
        }
    }
    crate::policy::secrets::redact(&out)
}

/// A memory key (`project/deploy-checklist`) or a path (`/home/ada/x`,
/// `./x`, `~/x`) made of words: every part between `/`, `-`, `_` and `.`
/// is short. A token is one long unbroken run, so it never passes.
fn key_or_path(arg: &str) -> bool {
    let key = arg
        .split_once('/')
        .is_some_and(|(scope, slug)| check_scope(scope).is_ok() && is_slug(slug));
    let path = ["/", "./", "../", "~/"].iter().any(|p| arg.starts_with(p));
    let words = arg
        .split(['/', '-', '_', '.'])
        .all(|part| part.chars().count() <= 20 && !part.contains(char::is_whitespace));
    (key || path) && words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argument_and_the_key_it_normalizes_to_are_masked() {
        let token = ["ghp_", "Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9"].concat();
        let name = format!("project/Always use {token}");
        let slug = format!(
            "project/always-use-{}",
            token.to_lowercase().replace('_', "-")
        );
        let text = format!("memory/{slug}.md: refused; review_by {token} is not a date");
        let out = masked(&text, &[name.as_str(), token.as_str()]);
        assert!(
            !out.to_lowercase().contains(&token.to_lowercase()[4..]),
            "{out}"
        );
        assert!(out.contains("<argument of"), "{out}");
        // Keys and paths of words, and short values, are quoted as they are.
        let plain = "memory/project/deploy-checklist.md: refused (source)";
        assert_eq!(
            masked(plain, &["project/deploy-checklist", "2026-13-01"]),
            plain
        );
    }
}
