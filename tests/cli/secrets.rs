//! The write policy's secret rules, through every write path: real formats
//! are refused (exit 3, nothing written, the secret never echoed), and
//! look-alikes that are not secrets pass.
//!
//! Fake secrets are assembled at run time so that this file itself holds no
//! token-shaped string for scanners to trip on.

use crate::util::Env;

fn j(parts: &[&str]) -> String {
    parts.concat()
}

/// (rule, text holding a fake secret of that format)
fn secrets() -> Vec<(&'static str, String)> {
    let b36 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    vec![
        (
            "aws-access-key-id",
            j(&["aws id ", "AKIA", "Z7QRSTUVWXYZ2345"]),
        ),
        (
            "aws-access-key-id",
            j(&["temp creds ", "ASIA", "Y6QRSTUVWXYZ2345"]),
        ),
        ("github-pat", j(&["use ", "ghp_", b36])),
        ("github-oauth", j(&["gho_", b36])),
        ("github-app-token", j(&["ghs_", b36])),
        ("github-app-token", j(&["ghu_", b36])),
        ("github-refresh-token", j(&["ghr_", b36])),
        (
            "github-fine-grained-pat",
            j(&["github_pat_", "11ABCDEFG0", &"x9Y8z7W6v5".repeat(7), "ab"]),
        ),
        ("gitlab-pat", j(&["glpat-", "Ab3De6Gh9Jk2Mn5Pq8St"])),
        (
            "slack-token",
            j(&[
                "xoxb-",
                "123456789012-1234567890123-",
                "AbCdEfGhIjKlMnOpQrStUvWx",
            ]),
        ),
        (
            "slack-webhook",
            j(&[
                "https://hooks.slack.com/services/",
                "T0123ABCD/B0123ABCD/",
                "AbCdEfGhIjKlMnOpQrStUvWx",
            ]),
        ),
        (
            "stripe-key",
            j(&["sk_", "live_", "51H8sd9f8SDF9s8df9SDF8sdf"]),
        ),
        (
            "stripe-key",
            j(&["rk_", "live_", "51H8sd9f8SDF9s8df9SDF8sdf"]),
        ),
        (
            "openai-key",
            j(&[
                "sk-",
                "Ab3De6Gh9Jk2Mn5Pq8St",
                "T3Blbk",
                "FJ",
                "Ab3De6Gh9Jk2Mn5Pq8St",
            ]),
        ),
        (
            "openai-project-key",
            j(&["sk-", "proj-", &"Ab3De6Gh9Jk2Mn5Pq8St".repeat(3)]),
        ),
        (
            "anthropic-key",
            j(&["sk-", "ant-api03-", &"Ab3De6Gh9Jk2Mn5Pq8St".repeat(4)]),
        ),
        (
            "google-api-key",
            j(&["AIza", "SyD3x4mpl3K3yAb3De6Gh9Jk2Mn5Pq8St1Z"]),
        ),
        (
            "private-key",
            j(&[
                "-----BEGIN ",
                "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            ]),
        ),
        (
            "private-key",
            j(&["-----BEGIN ", "OPENSSH PRIVATE KEY-----"]),
        ),
        (
            "jwt",
            j(&[
                "eyJ",
                "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                ".",
                "eyJ",
                "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
                ".",
                "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            ]),
        ),
        ("npm-token", j(&["npm_", b36])),
        (
            "pypi-token",
            j(&[
                "pypi-",
                "AgEIcHlwaS5vcmc",
                &"Ab3De6Gh9Jk2Mn5Pq8St".repeat(3),
            ]),
        ),
        (
            "sendgrid-key",
            j(&[
                "SG.",
                "Ab3De6Gh9Jk2Mn5Pq8St12",
                ".",
                "Ab3De6Gh9Jk2Mn5Pq8St12Ab3De6Gh9Jk2Mn5Pq8St1",
            ]),
        ),
        (
            "huggingface-token",
            j(&["hf_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"]),
        ),
        (
            "digitalocean-token",
            j(&["dop_", "v1_", &"a1b2c3d4".repeat(8)]),
        ),
        ("shopify-token", j(&["shpat_", &"a1b2c3d4".repeat(4)])),
        (
            "telegram-bot-token",
            j(&["123456789", ":AA", "Ab3De6Gh9Jk2Mn5Pq8St12Ab3De6Gh9Jk"]),
        ),
        (
            "age-secret-key",
            j(&[
                "AGE-SECRET-KEY-1",
                &"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".repeat(2)[..58],
            ]),
        ),
        (
            "hashicorp-vault-token",
            j(&["hvs.", "CAESIJ8xk2Lq7RwT4m9Zp3Vb6NcYd1Ha5"]),
        ),
        ("pulumi-token", j(&["pul-", &"a1b2c3d4e5".repeat(4)])),
        ("linear-api-key", j(&["lin_api_", &"Ab3De6Gh9J".repeat(4)])),
        ("supabase-token", j(&["sbp_", &"0a1b2c3d4e".repeat(4)])),
        ("mailgun-key", j(&["key-", &"0a1b2c3d".repeat(4)])),
        (
            "gcp-service-account",
            j(&["\"private_key_id\": \"", &"0a1b2c3d4e".repeat(4), "\""]),
        ),
        (
            "url-credentials",
            j(&["postgres://app:", "Xk9#mQ2vL7pR", "@db.internal:5432/app"]),
        ),
        ("generic-secret", j(&["DB_PASSWORD=", "hX7kQ9mZ2vP4wL8n"])),
        (
            "generic-secret",
            j(&["api_key: \"", "9f8e7d6c5b4a3f2e1d0c9b8a", "\""]),
        ),
        (
            "generic-secret",
            j(&["client_secret = ", "Zq8Wm3Nx7Rt2Yv6Kp1"]),
        ),
    ]
}

/// Texts that mention secrets, look a little like them, or are high-entropy
/// but harmless: all must be accepted.
fn benign() -> Vec<String> {
    [
        "Use a token bucket for rate limiting.",
        "The password policy requires 12 characters and a symbol.",
        "Rotate the API key every 90 days.",
        "Secrets live in Vault, never in the repo.",
        "AWS access key ids start with AKIA; never paste one here.",
        "GitHub tokens have prefixes like ghp_ and github_pat_.",
        "password = ${DB_PASSWORD}",
        "token: <your-token-here>",
        "api_key = os.environ['API_KEY']",
        "secret = changeme",
        "-----BEGIN PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----",
        "commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed it",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "JWTs start with eyJ because of base64.",
        "Stripe test keys start with sk_test_, live keys with sk_live_.",
        "The token expires after 3600 seconds.",
        "Set password_min_length: 12 in the config.",
        "Run `kubectl get secret app -o yaml` to inspect it.",
        "postgres://localhost:5432/app has no credentials in it",
        "The auth token is read from the keychain at startup.",
        "secret_santa_2026 is the team event channel",
        "Use sk-... placeholders in docs, e.g. sk-XXXXXXXX.",
        "useAuthenticationTokenFromContext() returns the session token",
        "密码策略要求至少十二个字符",
        "token_count = 4096 is the context size we use",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn secrets_are_refused_through_remember_note_and_record() {
    let cases = secrets();
    assert!(cases.len() >= 25);
    let env = Env::new();
    for (rule, text) in &cases {
        let before = env.snapshot();
        // remember: in the body and in the description.
        let (code, out, err) = env.remember(
            "project/creds",
            "deploy credentials",
            &[&format!("--body={text}")],
        );
        assert_eq!(code, 3, "{rule} via remember --body: {out}{err}");
        assert!(err.contains(&format!("secret:{rule}")), "{rule}: {err}");
        for piece in text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|p| p.len() >= 16)
        {
            assert!(
                !err.contains(piece) && !out.contains(piece),
                "{rule}: the secret was echoed: {err}"
            );
        }
        let one_line = text.lines().next().unwrap_or_default();
        let (code, _, _) = env.remember("project/creds", one_line, &[]);
        assert_eq!(code, 3, "{rule} via remember --description");
        // note.
        let err = env.fails(&["note", "--", text], 3);
        assert!(err.contains(&format!("secret:{rule}")), "{rule}: {err}");
        assert_eq!(env.snapshot(), before, "{rule}: something was written");
        // record of a hand-written file.
        env.write(
            "memory/project/creds.md",
            format!("---\nname: creds\ndescription: credentials\ntype: project\n---\n{text}\n"),
        );
        let err = env.fails(&["record"], 3);
        assert!(
            err.contains("memory/project/creds.md") && err.contains(&format!("secret:{rule}")),
            "{rule}: {err}"
        );
        std::fs::remove_file(env.path("memory/project/creds.md")).expect("rm");
        assert_eq!(env.snapshot(), before, "{rule}: record wrote something");
    }
}

#[test]
fn look_alikes_are_accepted_through_remember_note_and_record() {
    let cases = benign();
    assert!(cases.len() >= 25);
    let env = Env::new();
    for (i, text) in cases.iter().enumerate() {
        let key = format!("project/benign-{i}");
        let (code, out, err) = env.remember(
            &key,
            &format!("harmless fact {i}"),
            &[&format!("--body={text}"), "--keep-both"],
        );
        assert_eq!(code, 0, "remember refused {text:?}: {out}{err}");
        env.ok(&["note", "--", text]);
        env.write(
            &format!("memory/user/hand-{i}.md"),
            format!("---\nname: hand-{i}\ndescription: hand note {i}\ntype: user\n---\n{text}\n"),
        );
        let (code, _, err) = env.run(&["record"]);
        assert_eq!(code, 0, "record refused {text:?}: {err}");
    }
    env.ok(&["check"]);
}

/// A deterministic run of `n` characters from `alphabet`, so that the new
/// families' fakes are assembled here, not written down.
fn gen(alphabet: &str, n: usize, seed: u64) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[(x % a.len() as u64) as usize]
        })
        .collect()
}

fn an(n: usize, seed: u64) -> String {
    gen(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        n,
        seed,
    )
}

/// Standard base64, padded.
fn base64(s: &str) -> String {
    let t: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        .chars()
        .collect();
    let mut out = String::new();
    for c in s.as_bytes().chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            out.push(if k <= c.len() {
                t[(n >> (18 - 6 * k) & 63) as usize]
            } else {
                '='
            });
        }
    }
    out
}

/// (rule, text, the secret's plain value) for families added with issue
/// 14, and for secrets hidden in base64, YAML escapes and block scalars.
fn hidden_secrets() -> Vec<(&'static str, String, String)> {
    let ghp = j(&["ghp_", &an(36, 1)]);
    let escaped: String = ghp
        .chars()
        .map(|c| format!("\\x{:02x}", c as u32))
        .collect();
    let dckr = j(&["dckr_", "pat_", &an(27, 2)]);
    let glrt = j(&["glrt-", &an(20, 3)]);
    let whsec = j(&["whsec_", &an(32, 4)]);
    let pass = j(&["Winter", "2025", "!x"]);
    let url_pass = j(&["p@", "ss9"]);
    vec![
        (
            "docker-hub-token",
            j(&["registry token ", &dckr]),
            dckr.clone(),
        ),
        ("gitlab-runner-token", j(&["runner: ", &glrt]), glrt.clone()),
        (
            "webhook-signing-secret",
            j(&["STRIPE_WEBHOOK_SECRET=", &whsec]),
            whsec.clone(),
        ),
        (
            "url-credentials",
            j(&["postgres://u:", &url_pass, "@db.internal/app"]),
            url_pass.clone(),
        ),
        (
            "basic-auth",
            j(&["Authorization: Basic ", &base64(&j(&["admin:", &pass]))]),
            pass.clone(),
        ),
        ("github-pat", j(&["blob: ", &base64(&ghp)]), ghp.clone()),
        ("generic-secret", j(&["数据库密码：", &pass]), pass.clone()),
        (
            "github-pat",
            j(&["config:\n  api: \"", &escaped, "\"\n"]),
            ghp.clone(),
        ),
        (
            "generic-secret",
            j(&["db:\n  password: |\n    ", &pass, "\n"]),
            pass.clone(),
        ),
    ]
}

#[test]
fn hidden_and_new_families_are_refused_through_note_remember_and_record() {
    let env = Env::new();
    for (rule, text, plain) in hidden_secrets() {
        let before = env.snapshot();
        let err = env.fails(&["note", "--", &text], 3);
        assert!(err.contains(&format!("secret:{rule}")), "{rule}: {err}");
        assert!(
            !err.contains(&plain),
            "{rule}: the secret was echoed: {err}"
        );
        let (code, out, err) = env.remember(
            "project/creds",
            "deploy credentials",
            &[&format!("--body={text}")],
        );
        assert_eq!(code, 3, "{rule} via remember --body: {out}{err}");
        assert!(err.contains(&format!("secret:{rule}")), "{rule}: {err}");
        assert!(
            !err.contains(&plain) && !out.contains(&plain),
            "{rule}: {err}"
        );
        assert_eq!(env.snapshot(), before, "{rule}: something was written");
    }
}

#[test]
fn frontmatter_cannot_hide_a_secret_in_escapes_or_block_scalars() {
    let env = Env::new();
    let ghp = j(&["ghp_", &an(36, 9)]);
    let escaped: String = ghp
        .chars()
        .map(|c| format!("\\u{:04X}", c as u32))
        .collect();
    let pass = j(&["Summer", "2024", "#q"]);
    let single = j(&["Pa''ss", "w0rd", "99"]);
    for (rule, frontmatter, plain) in [
        (
            "github-pat",
            format!("description: \"{escaped}\"\n"),
            ghp.clone(),
        ),
        (
            "generic-secret",
            format!("description: creds\npassword: >-\n  {pass}\n"),
            pass.clone(),
        ),
        (
            "generic-secret",
            format!("description: creds\npassword: '{single}'\n"),
            single.replace("''", "'"),
        ),
    ] {
        let before = env.snapshot();
        let file = format!(
            "---\nname: creds\n{frontmatter}type: project\nsource: stated by the user\n---\nbody\n"
        );
        env.write("memory/project/creds.md", &file);
        let err = env.fails(&["record"], 3);
        assert!(
            err.contains("memory/project/creds.md") && err.contains(&format!("secret:{rule}")),
            "{rule}: {err}"
        );
        assert!(
            !err.contains(&plain),
            "{rule}: the secret was echoed: {err}"
        );
        std::fs::remove_file(env.path("memory/project/creds.md")).expect("rm");
        assert_eq!(env.snapshot(), before, "{rule}: record wrote something");
        // The same text as a note or a memory's body is refused too.
        let err = env.fails(&["note", "--", &frontmatter], 3);
        assert!(err.contains(&format!("secret:{rule}")), "{rule}: {err}");
        let (code, _, err) = env.remember(
            "project/creds",
            "deploy credentials",
            &[&format!("--body={frontmatter}")],
        );
        assert_eq!(code, 3, "{rule}: {err}");
        assert_eq!(env.snapshot(), before, "{rule}: something was written");
    }
}

#[test]
fn documented_examples_and_prose_about_keys_are_accepted() {
    let env = Env::new();
    for (i, text) in [
        j(&[
            "AWS documents ",
            "AKIAIOSFODNN7",
            "EXAMPLE",
            " as its example key id.",
        ]),
        j(&[
            "aws_secret_access_key = ",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
            "EXAMPLEKEY",
        ]),
        j(&[
            "不要把 -----BEGIN RSA ",
            "PRIVATE KEY----- 开头的文件提交到仓库",
        ]),
        "密码：请向管理员索取，不要写进笔记。".to_string(),
        "clone git@github.com:org/repo.git, mail ada@example.com".to_string(),
    ]
    .iter()
    .enumerate()
    {
        env.ok(&["note", "--", text]);
        let (code, out, err) = env.remember(
            &format!("project/example-{i}"),
            &format!("an example {i}"),
            &[&format!("--body={text}"), "--keep-both"],
        );
        assert_eq!(code, 0, "remember refused {text:?}: {out}{err}");
    }
    env.ok(&["check"]);
}

#[test]
fn a_name_with_a_token_glued_to_it_is_refused_and_never_quoted() {
    let env = crate::util::Env::new();
    let token = ["ghp_", "Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9"].concat();
    let tail = token[8..].to_lowercase();
    for name in [
        format!("project/deploy_{token}"),
        format!("project/{token}.bak"),
        format!("user/always use {token}"),
    ] {
        for json in [false, true] {
            let mut args = vec!["remember", name.as_str(), "-d", "d", "-s", "s"];
            if json {
                args.insert(0, "--json");
            }
            let (code, out, err) = env.run(&args);
            assert_eq!(code, 3, "{name}: {out}{err}");
            let all = format!("{out}{err}").to_lowercase();
            assert!(
                all.contains("secret:github-pat") && !all.contains(&tail),
                "{all}"
            );
        }
    }
    assert!(env.memory_files().is_empty());
    assert!(!env.log_text().to_lowercase().contains(&tail));
}

#[test]
fn check_scans_what_the_saved_index_does_not_vouch_for() {
    // check leaves the secret scan out for a file the persistent index
    // found clean with the same content: a secret only the YAML's reading
    // shows, and a hand edit since the index was saved, are still found.
    let env = Env::new();
    let (code, _, err) = env.remember("project/deploy", "how we deploy", &["--body=ship it"]);
    assert_eq!(code, 0, "{err}");
    let ghp = j(&["ghp_", &an(36, 11)]);
    let escaped: String = ghp
        .chars()
        .map(|c| format!("\\u{:04X}", c as u32))
        .collect();
    // Hidden where the scan of the text cannot see it: escaped in the
    // description, cut by an escaped line break in a field no summary keeps.
    for field in [
        format!("description: \"{escaped}\"\n"),
        format!(
            "description: creds\nextra: \"{}\\\n  {}\"\n",
            &ghp[..20],
            &ghp[20..]
        ),
    ] {
        env.write(
            "memory/project/creds.md",
            format!(
                "---\nname: creds\n{field}type: project\nsource: stated by the user\n---\nbody\n"
            ),
        );
        // Indexed, and the index saved, as it is now.
        env.ok(&["reindex"]);
        let err = env.fails(&["check"], 1);
        assert!(
            err.contains("memory/project/creds.md") && err.contains("secret:github-pat"),
            "{field}: {err}"
        );
    }
    std::fs::remove_file(env.path("memory/project/creds.md")).expect("rm");
    env.ok(&["reindex"]);
    env.ok(&["check"]);
    // A hand edit after the index was saved.
    let rel = "memory/project/deploy.md";
    env.write(
        rel,
        env.read(rel)
            .replace("ship it", &format!("ship it with {ghp}")),
    );
    let err = env.fails(&["check"], 1);
    assert!(
        err.contains(rel) && err.contains("secret:github-pat"),
        "{err}"
    );
    assert!(!err.contains(&ghp), "the secret was echoed: {err}");
}

/// A token committed around the hooks, then redacted: what `redact`
/// leaves is no secret to any later command, so `record` and
/// `consolidate` commit it and `check` passes; a second `redact` finds
/// nothing.
#[test]
fn a_redacted_token_is_no_secret_to_the_commands_after_it() {
    let env = Env::new();
    assert_eq!(env.remember("project/cfg", "CI config", &[]).0, 0);
    env.ok(&["consolidate", "--yes"]);
    let token = ["ghp_", "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"].concat();
    let text = env.read("memory/project/cfg.md");
    env.write(
        "memory/project/cfg.md",
        format!("{text}use {token} for CI\n"),
    );
    env.git(&["commit", "--no-verify", "-qam", "leak"]);
    env.ok(&["redact"]);
    env.ok(&["record"]);
    env.ok(&["consolidate", "--yes"]);
    env.ok(&["check"]);
    let out = env.ok(&["redact", "--dry-run"]);
    assert!(!out.contains("redact "), "nothing more to redact: {out}");
    for (path, bytes) in env.snapshot() {
        assert!(!String::from_utf8_lossy(&bytes).contains(&token), "{path}");
    }
}

/// An entry redacted by id, redacted again: nothing more is done, so
/// the one rewrite its `redact` entry lists stays the one to commit.
#[test]
fn redacting_an_entry_twice_changes_nothing_the_second_time() {
    let env = Env::new();
    env.ok(&["note", "the door code is 4711"]);
    env.ok(&["consolidate", "--yes"]);
    let log = env.first_log();
    let text = env.read(&log);
    let id = text
        .split("\"id\":\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("the note's id")
        .to_string();
    let out = env.ok(&["--json", "redact", &id]);
    let review: serde_json::Value = serde_json::from_str(&out).expect("json");
    let review = review["entries"][0]["review"]
        .as_str()
        .expect("review")
        .to_string();
    let once = env.snapshot();
    let out = env.ok(&["redact", &id]);
    assert!(out.contains("is redacted already"), "{out}");
    assert_eq!(env.snapshot(), once, "nothing written");
    env.write(
        "memory/config.yaml",
        format!("accepted_entries:\n  - {review}\n"),
    );
    env.ok(&["consolidate", "--yes"]);
    env.ok(&["check"]);
}
