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
    for arg in arguments {
        let arg = arg.as_ref();
        if !maybe_secret(arg) {
            continue;
        }
        let shown = format!("<argument of {} bytes>", arg.len());
        // A key is quoted as memoir normalizes it (`project/AIzaSy…` as
        // `project/aizasy…`): that form hides with the argument, whatever
        // it looks like itself (lowercased, a token reads as words).
        let normalized = Key::parse(arg).ok().map(|(key, _)| key.to_string());
        for form in std::iter::once(arg.to_string()).chain(normalized) {
            if !form.is_empty() && out.contains(form.as_str()) {
                out = out.replace(form.as_str(), &shown);
            }
        }
    }
    crate::policy::secrets::redact(&out)
}

/// An argument that may be a secret: long and no key or path of words,
/// over lines (a key file), or one the secret rules find a secret in.
fn maybe_secret(arg: &str) -> bool {
    (arg.len() >= MIN_SECRET_LEN && !key_or_path(arg))
        || arg.contains('\n')
        || crate::policy::secrets::find_in_name(arg).is_some()
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
        // A token that lowercases into a key of short words hides too.
        let google = ["AIza", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"].concat();
        let arg = format!("project/{google}");
        let out = masked(
            &format!("no memory {}", arg.to_lowercase()),
            &[arg.as_str()],
        );
        assert!(!out.contains("9tsrke72"), "{out}");
        // Keys and paths of words, and short values, are quoted as they are.
        let plain = "memory/project/deploy-checklist.md: refused (source)";
        assert_eq!(
            masked(plain, &["project/deploy-checklist", "2026-13-01"]),
            plain
        );
    }
}
