//! Whether a matched value is a secret: entropy, placeholders, code
//! references, and the judgment of named values (`password: …`).

use super::decode::base64_text;
use super::rules::Gate;

/// Shannon entropy in bits per byte.
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    // H = log2(n) - (1/n) * sum(c * log2(c)): one log per distinct byte.
    let n = s.len() as f64;
    if n == 0.0 {
        return 0.0;
    }
    let sum: f64 = counts
        .iter()
        .filter(|&&c| c > 1)
        .map(|&c| {
            let c = c as f64;
            c * c.log2()
        })
        .sum();
    n.log2() - sum / n
}

/// Does the value pass its rule's gate? `name` is the rule's `n` group.
pub(super) fn passes(gate: Gate, name: Option<&str>, value: &str) -> bool {
    match gate {
        Gate::Token => !is_documented_example(value) && entropy(value) >= 2.5,
        Gate::Tokenish => !is_placeholder(value) && tokenish(value),
        Gate::Entropy(min) => !is_placeholder(value) && entropy(value) >= min,
        Gate::Url => url_password(value),
        Gate::Basic => basic(value),
        Gate::Bearer => !is_placeholder(value) && !is_code_ref(value) && tokenish(value),
        Gate::Named => {
            // Most values fail on their shape alone: ask that before the
            // name (which costs a lowercase copy and list lookups).
            if !could_be_named_secret(value) {
                return false;
            }
            let class = match name {
                Some(n) => class_of(n),
                None => Some(Class::Password),
            };
            class.is_some_and(|c| named(c, value))
        }
    }
}

/// What every class of named secret needs: six characters, and more than
/// a short word or a number.
fn could_be_named_secret(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 6
        && !b.iter().all(u8::is_ascii_digit)
        && (b.len() >= 10 || !b.iter().all(u8::is_ascii_alphabetic))
}

/// Vendors document fake keys that end in EXAMPLE (AWS's
/// AKIAIOSFODNN7EXAMPLE): those are quoted in docs, not leaked.
fn is_documented_example(v: &str) -> bool {
    v.to_ascii_lowercase().contains("example")
}

/// Words that mark a value as a placeholder wherever they stand in it.
const PARTS: &[&str] = &[
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "your",
    "xxx",
    "***",
    "...",
    "…",
    "redacted",
    "dummy",
    "sample",
    "environ",
    "process.env",
    "getenv",
    "secrets.",
    "vault:",
    "<",
    ">",
    "{{",
    "}}",
    "${",
    "$(",
    "%(",
    "fake",
    "foobar",
    "lorem",
    "replace",
    "insert",
    "todo",
    "tbd",
    "n/a",
    "000000",
    "123456789",
    "abcdef",
    "qwerty",
];

/// Values that are placeholders as a whole.
const WHOLE: &[&str] = &[
    "none",
    "null",
    "nil",
    "undefined",
    "true",
    "false",
    "empty",
    "hidden",
    "masked",
    "omitted",
    "unset",
    "notset",
    "default",
    "required",
    "optional",
    "string",
    "str",
    "text",
    "password",
    "passwd",
    "pass",
    "secret",
    "token",
    "key",
    "value",
    "bearer",
    "basic",
];

/// Values that fill a secret's slot without being one.
pub(super) fn is_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    PARTS.iter().any(|p| lower.contains(p))
        || WHOLE.contains(&lower.as_str())
        || v.starts_with('$')
        || (v.starts_with('%') && v.ends_with('%'))
        || (v.starts_with('@') && v.ends_with('@'))
        || v.bytes().all(|b| Some(&b) == v.as_bytes().first())
}

/// A reference to where the secret lives, not the secret: `DB_PASSWORD`,
/// `settings.api_key`, `getpass()`, `env["X"]`.
pub(super) fn is_code_ref(v: &str) -> bool {
    let b = v.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // An identifier (dots allowed) then a call or an index.
    if let Some(i) = v.find(['(', '[']) {
        let head = &b[..i];
        if !head.is_empty() && head.iter().all(|&c| ident(c) || c == b'.') {
            return true;
        }
    }
    // A dotted path of words (`config.db.password`): each segment letters,
    // perhaps a trailing number.
    let segments: Vec<&str> = v.split(['.', ':']).collect();
    if segments.len() >= 2
        && segments.iter().all(|s| {
            let t = s.trim_end_matches(|c: char| c.is_ascii_digit());
            !t.is_empty() && t.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_')
        })
    {
        return true;
    }
    // An environment variable's name.
    let upper_snake = v.contains('_')
        && b.first().is_some_and(u8::is_ascii_uppercase)
        && v.split('_').all(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
        && v.split('_')
            .filter(|s| s.bytes().all(|c| c.is_ascii_uppercase()))
            .count()
            >= 1;
    upper_snake
}

/// A file's path (`/run/secrets/db_password`), not base64 that starts with
/// a slash: no `+` or `=`, and no segment mixes case and digits.
fn is_path(v: &str) -> bool {
    (v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with("~/"))
        && !v.contains(['+', '='])
        && v.split('/').all(|seg| {
            let s = shape(seg);
            s.upper == 0 || s.lower == 0 || s.digit == 0
        })
}

fn is_version(v: &str) -> bool {
    let t = v.strip_prefix(['v', 'V']).unwrap_or(v);
    let core = t.split(['-', '+']).next().unwrap_or(t);
    core.contains('.')
        && core
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
}

/// Names of algorithms and formats, which settle `password: bcrypt`-like
/// lines in docs.
fn is_tech_word(v: &str) -> bool {
    const WORDS: &[&str] = &[
        "sha1",
        "sha256",
        "sha384",
        "sha512",
        "sha-256",
        "sha-512",
        "md5",
        "bcrypt",
        "scrypt",
        "argon2",
        "argon2id",
        "argon2i",
        "pbkdf2",
        "hmac",
        "hmac-sha256",
        "hs256",
        "hs512",
        "rs256",
        "rs512",
        "es256",
        "ed25519",
        "aes256",
        "aes-256",
        "aes-256-gcm",
        "aes128",
        "base64",
        "utf-8",
        "utf8",
        "oauth2",
        "oauth",
        "oidc",
        "saml2",
        "http2",
        "tls1.2",
        "tls1.3",
        "x509",
        "pkcs8",
        "pkcs12",
        "rsa2048",
        "rsa4096",
    ];
    WORDS.contains(&v.to_ascii_lowercase().as_str())
}

struct Shape {
    lower: usize,
    upper: usize,
    digit: usize,
    symbol: usize,
}

fn shape(v: &str) -> Shape {
    let mut s = Shape {
        lower: 0,
        upper: 0,
        digit: 0,
        symbol: 0,
    };
    for c in v.bytes() {
        match c {
            b'a'..=b'z' => s.lower += 1,
            b'A'..=b'Z' => s.upper += 1,
            b'0'..=b'9' => s.digit += 1,
            _ => s.symbol += 1,
        }
    }
    s
}

/// Looks machine-generated: a run of 8+ letters and digits that mixes
/// them, or a long mixed-case run, or plain high entropy; not a word, a
/// version or a date.
pub(super) fn tokenish(v: &str) -> bool {
    if v.len() < 12 || entropy(v) < 3.0 {
        return false;
    }
    // Runs of base64 characters: `_`, `-`, `.`, `/`, `:` separate words in
    // names, paths and keys (`created_at_2024`), `+` does not in base64.
    let mixed_run = v
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '+'))
        .filter(|r| r.len() >= 8)
        .any(|r| {
            let s = shape(r);
            (s.digit >= 2 && s.lower + s.upper >= 2)
                || (r.len() >= 16
                    && s.upper * 5 >= r.len()
                    && s.lower * 5 >= r.len()
                    && entropy(r) >= 3.8)
        });
    let s = shape(v);
    let all_classes = s.upper > 0 && s.lower > 0 && s.digit > 0;
    mixed_run
        || (v.len() >= 16 && all_classes && entropy(v) >= 3.5)
        || (v.len() >= 24 && entropy(v) >= 4.3)
}

/// What a name says its value is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Class {
    /// Chosen by a person: may be short and weak.
    Password,
    /// A shared secret or private value.
    Secret,
    /// A generated token or key.
    Token,
    /// Says nothing (`export NAME=…`): only a value that is plainly
    /// machine-made counts.
    Neutral,
}

/// The last part of a name that says the value is not the secret itself
/// (`password_policy`, `token_url`).
const NOT_THE_VALUE: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "path",
    "file",
    "files",
    "dir",
    "type",
    "types",
    "size",
    "len",
    "length",
    "count",
    "format",
    "alg",
    "algorithm",
    "version",
    "prefix",
    "suffix",
    "header",
    "field",
    "column",
    "mode",
    "policy",
    "policies",
    "rule",
    "rules",
    "min",
    "max",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "age",
    "hash",
    "hashed",
    "hint",
    "label",
    "prompt",
    "pattern",
    "regex",
    "url",
    "uri",
    "endpoint",
    "manager",
    "reset",
    "strength",
    "limit",
    "limits",
    "budget",
    "bucket",
    "usage",
    "timeout",
    "interval",
    "enabled",
    "required",
    "history",
    "attempts",
    "complexity",
    "validator",
    "validation",
    "provider",
    "location",
    "ref",
    "env",
    "var",
    "kind",
    "scheme",
    "method",
    "window",
    "rotation",
    "lifetime",
    "duration",
    "issuer",
    "audience",
    "scope",
    "scopes",
    "store",
    "storage",
    "mount",
    "source",
];

/// Words before `key` that name a key that is no secret (`public_key`,
/// `sort_key`, `hotkey`).
const NOT_SECRET_KEYS: &[&str] = &[
    "public",
    "pub",
    "publishable",
    "primary",
    "foreign",
    "sort",
    "partition",
    "cache",
    "idempotency",
    "hot",
    "short",
    "map",
    "frame",
    "board",
    "range",
    "row",
    "unique",
    "index",
    "composite",
    "lookup",
    "dedup",
    "routing",
    "group",
    "object",
    "i18n",
    "translation",
    "locale",
    "msg",
    "monkey",
    "turkey",
    "hockey",
    "whiskey",
    "jockey",
    "donkey",
    "sortkey",
    "hotkey",
    "s3",
    "react",
    "dict",
    "map",
    "shortcut",
];

/// The class of a name, or None when the name says it is not the secret
/// itself (`password_policy`, `token_count`, `public_key`).
pub(super) fn class_of(name: &str) -> Option<Class> {
    let n = name
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '-')
        .to_ascii_lowercase();
    if !n.is_ascii() {
        return Some(class_of_cjk(&n));
    }
    let segments: Vec<&str> = n.split(['_', '.', '-']).filter(|s| !s.is_empty()).collect();
    let last = segments.last().copied().unwrap_or("");
    if NOT_THE_VALUE.contains(&last) {
        return None;
    }
    // camelCase names lose their case above: `passwordPolicy`.
    if NOT_THE_VALUE
        .iter()
        .any(|s| s.len() >= 5 && n.ends_with(s) && n.len() > s.len())
    {
        return None;
    }
    let seg = |w: &str| segments.contains(&w);
    if n.contains("passw")
        || n.contains("passphrase")
        || n.contains("pwd")
        || seg("pw")
        || seg("pass")
        || n.ends_with("pass")
        || seg("pin")
    {
        return Some(Class::Password);
    }
    if n.contains("secret") || n.contains("private") || n.contains("priv_") || seg("salt") {
        return Some(Class::Secret);
    }
    // `auth`, `oauth`, `authorization`, but not `author`.
    let author = n.contains("author") && !n.contains("authoriz");
    let auth = n.contains("auth") && !author;
    if n.contains("token")
        || n.contains("credential")
        || seg("cred")
        || seg("creds")
        || auth
        || seg("pat")
        || n.contains("bearer")
    {
        return Some(Class::Token);
    }
    if seg("key") || seg("keys") || n.ends_with("key") || n.ends_with("keys") {
        if NOT_SECRET_KEYS.iter().any(|w| seg(w) || n.starts_with(w)) {
            return None;
        }
        return Some(Class::Token);
    }
    Some(Class::Neutral)
}

/// The class of a name in another script, by the words for password and
/// secret in Chinese, Japanese and Korean; any other is a token.
fn class_of_cjk(n: &str) -> Class {
    if ["密码", "口令", "パスワード", "비밀번호", "暗証番号"]
        .iter()
        .any(|w| n.contains(w))
    {
        Class::Password
    } else if ["密钥", "秘钥", "私钥"].iter().any(|w| n.contains(w)) {
        Class::Secret
    } else {
        Class::Token
    }
}

/// A named value: is it the secret the name announces?
pub(super) fn named(class: Class, value: &str) -> bool {
    let v = value.trim_end_matches(['.', ',', ':', ')', ']', '}', '>', '!', '?']);
    if v.len() < 4 {
        return false;
    }
    let s = shape(v);
    let letters = s.lower + s.upper;
    if letters == 0 && s.symbol == 0 {
        // Numbers: ports, counts, sizes, years.
        return false;
    }
    // The shape first (cheap, and most values fail it), then what makes a
    // secret-shaped value something else.
    let shaped = match class {
        Class::Password => {
            if letters > 0 && (s.digit > 0 || s.symbol > 0) {
                v.len() >= 6
            } else if letters == 0 {
                v.len() >= 8 && s.digit > 0
            } else {
                v.len() >= 10 && s.lower > 0 && s.upper > 0 && entropy(v) >= 3.2
            }
        }
        Class::Secret => {
            // Identifiers (`api_token`, `my-app`) are names, not secrets.
            let symbols = v
                .bytes()
                .any(|c| !c.is_ascii_alphanumeric() && !matches!(c, b'_' | b'-' | b'.'));
            (v.len() >= 8 && letters > 0 && (s.digit > 0 || symbols) && entropy(v) >= 2.8)
                || (v.len() >= 12 && s.lower > 0 && s.upper > 0 && entropy(v) >= 3.5)
                || tokenish(v)
        }
        Class::Token => tokenish(v),
        Class::Neutral => {
            v.len() >= 20
                && !v.bytes().all(|c| c.is_ascii_hexdigit())
                && entropy(v) >= 3.7
                && tokenish(v)
        }
    };
    shaped
        && !is_words(v)
        && !is_placeholder(v)
        && !is_code_ref(v)
        && !is_path(v)
        && !is_version(v)
        && !is_tech_word(v)
        && !v.contains("://")
}

/// A few lowercase words joined (`not-a-secret`, `read_only`): prose or a
/// name. Four words or more may be a passphrase.
fn is_words(v: &str) -> bool {
    let words = v.split(['-', '_']).collect::<Vec<_>>();
    words.len() < 4
        && words
            .iter()
            .all(|w| !w.is_empty() && w.bytes().all(|c| c.is_ascii_lowercase()))
}

/// A password in a URL, refused however weak: anything but a placeholder
/// or a port.
fn url_password(p: &str) -> bool {
    let lower = p.to_ascii_lowercase();
    const WHOLE: &[&str] = &[
        "password", "pass", "passwd", "pwd", "secret", "changeme", "pw", "token", "xxx", "user",
        "username",
    ];
    p.len() >= 3
        && !WHOLE.contains(&lower.as_str())
        && !p.starts_with(['$', '<', '{', '*', '['])
        && !p.starts_with("%s")
        && !p.starts_with("%(")
        && !["***", "xxx", "your", "example", "placeholder", "..."]
            .iter()
            .any(|w| lower.contains(w))
        && !(p.len() <= 5 && p.bytes().all(|c| c.is_ascii_digit()))
}

/// `user:password` in base64, or a high-entropy opaque value.
fn basic(v: &str) -> bool {
    if is_placeholder(v) || is_code_ref(v) {
        return false;
    }
    match base64_text(v.as_bytes()) {
        Some(decoded) => match decoded.split_once(':') {
            Some((user, pass)) => !user.contains(char::is_whitespace) && url_password(pass),
            None => tokenish(&decoded) || tokenish(v),
        },
        None => tokenish(v),
    }
}
