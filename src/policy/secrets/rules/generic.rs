//! The generic rules: credentials recognised by their context (a password
//! in a URL, an `Authorization` header, a name like `password:` or a
//! phrase like "the token is" before a value) rather than by a format of
//! their own. Apart from the token formats because they are judged
//! differently: the value has no shape to check, so each passes a gate
//! on the name and the value ([`Gate::Named`], [`Gate::Tokenish`], …);
//! and because they come last in [`super::RULES`]: a line a format and a
//! generic rule both match is reported as the format.

use super::{g, Def, Gate};

/// The generic rules, in the order they are tried.
pub(super) const GENERIC: &[Def] = &[
    // --- generic: credentials in context ---
    g(
        "url-credentials",
        &["://"],
        r"(?i)\b[a-z][a-z0-9+.\-]{1,30}://[A-Za-z0-9._~%!$&*+=\-]{0,64}:([\x21\x23-\x26\x28-\x2e\x30-\x3b\x3d\x40-\x7e]{1,128})@[a-z0-9.\-_]*[a-z0-9]",
        Gate::Url,
    ),
    g(
        "docker-config-auth",
        &["\"auth\""],
        r#""auth"\s*:\s*"([A-Za-z0-9+/=]{8,})""#,
        Gate::Basic,
    ),
    g(
        "basic-auth",
        &["basic"],
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})",
        Gate::Basic,
    ),
    g(
        "bearer-token",
        &["bearer", "token", "bot "],
        r"(?i)\b(?:bearer|token|bot)\s+([A-Za-z0-9\-._~+/]{16,}=*)",
        Gate::Bearer,
    ),
    g(
        "generic-secret",
        &["<add"],
        concat!(
            r#"(?i)<add\s+key\s*=\s*"(?P<n>[A-Za-z0-9_.:\-]{1,60})"\s+value\s*=\s*"(?P<v>"#,
            value!(),
            r"{1,200})"
        ),
        Gate::Named,
    ),
    g(
        "generic-secret",
        &["machine"],
        concat!(
            r"(?i)\bmachine\s+[\x21-\x7e]+\s+(?:login\s+[\x21-\x7e]+\s+)?(?P<n>password)\s+(?P<v>",
            value!(),
            r"{1,200})"
        ),
        Gate::Named,
    ),
    g(
        "generic-secret",
        &["docker login"],
        concat!(
            r"(?i)docker\s+login\b[\x20-\x7e\t]{0,200}?\s(?:-p|--password)[= ]\s{0,3}(?P<v>",
            value!(),
            r"{1,200})"
        ),
        Gate::Named,
    ),
    g(
        "generic-secret",
        &[
            "-pass", "-pwd", "-token", "-api", "-secret", "-auth", "-key", "-client",
        ],
        concat!(
            r"(?i)\s--?(?P<n>password|passwd|pass|pwd|token|api-?key|secret|client-secret|access-token|auth-token)[= ]\s{0,3}[\x22']?(?P<v>",
            value!(),
            r"{1,200})"
        ),
        Gate::Named,
    ),
    g(
        "generic-secret",
        &[
            "pass", "pwd", "secret", "token", "key", "auth", "cred", "salt", "private", "bearer",
            // Two or three letters are everywhere in base64: these only
            // with what follows a name.
            "pw=", "pw:", "pw\"", "pw'", "pw ", "pw＝", "pw：", "pat=", "pat:", "pat\"", "pat'",
            "pat ", "pat＝", "pat：",
        ],
        concat!(
            // Unbounded name runs: a quarter of the time of `{0,40}` bounds.
            r"(?i)(?P<n>[a-z0-9_.\-]*(?:pass|pwd|pw|secret|token|key|auth|cred|salt|private|pat|bearer)[a-z0-9_.\-]*)",
            sep!(),
            "(?P<v>",
            value!(),
            "{1,200})"
        ),
        Gate::Named,
    ),
    g(
        "generic-secret",
        &[
            "密码",
            "口令",
            "密钥",
            "秘钥",
            "私钥",
            "令牌",
            "凭证",
            "凭据",
            "授权码",
            "パスワード",
            "トークン",
            "暗証番号",
            "비밀번호",
            "토큰",
        ],
        concat!(
            r"(?P<n>密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据|授权码|パスワード|トークン|暗証番号|비밀번호|토큰)\s{0,3}(?:[:=]|：|＝|是|为|為|は)\s{0,3}(?:[\x22']|“|「)?(?P<v>",
            value!(),
            "{1,200})"
        ),
        Gate::Named,
    ),
    // Prose: "the staging db password is hunter2hunter2" (a chat pasted
    // into a note), as the CJK rule above reads 密码是….
    g(
        "generic-secret",
        &["pass", "pwd"],
        concat!(
            r"(?i)\b(?P<n>password|passwd|passphrase|pwd)s?\s+(?:is|was|are|were)\s+(?:now\s+|still\s+)?[\x22']?(?P<v>",
            value!(),
            "{1,200})"
        ),
        Gate::Named,
    ),
    // Prose naming a token or a key and giving it: "the token is Zk3v…",
    // "deploy with secret Zk3v…", "the api key was now …". Only a value
    // that looks machine-made counts (`gate::tokenish`): "the token is
    // expired" and "the secret to fast builds" are prose.
    g(
        "generic-secret",
        &["token", "secret", "key", "credential"],
        concat!(
            r"(?i)\b(?P<n>token|secret|(?:api|access|secret|private|auth|signing|encryption)[ _-]?key|credentials?|auth[ _-]?token|access[ _-]?token)s?\s+(?:(?:is|was|are|were|reads|equals)\s+)?(?:now\s+|still\s+)?[\x22'`]?(?P<v>",
            value!(),
            "{16,200})"
        ),
        Gate::Tokenish,
    ),
    g(
        "generic-secret",
        &["export"],
        concat!(
            r"\bexport\s+(?P<n>[A-Za-z_][A-Za-z0-9_]{0,60})=[\x22']?(?P<v>",
            value!(),
            "{1,200})"
        ),
        Gate::Named,
    ),
];
