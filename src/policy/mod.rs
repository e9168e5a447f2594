//! The write policy: what may enter the store, on every path that writes.
//!
//! Secret formats follow gitleaks' rule set (MIT licensed,
//! github.com/gitleaks/gitleaks), reduced to the formats that matter for
//! agent memory, plus its generic "secret-looking name = high-entropy value"
//! rule gated by Shannon entropy. A refusal names the rule and the line,
//! never the secret.

use regex::Regex;
use std::sync::OnceLock;

/// The largest note, in bytes.
pub const MAX_NOTE_BYTES: usize = 64 * 1024;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 400;
/// The longest source, in characters.
pub const MAX_SOURCE_CHARS: usize = 400;

/// A secret found in text: which rule matched, on which line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule's id, e.g. `github-pat`.
    pub rule: &'static str,
    /// The line within the scanned text.
    pub line: usize,
}

struct Rule {
    id: &'static str,
    pattern: &'static str,
    /// Compiled on first use (see [`NEEDLES`]).
    re: OnceLock<Option<Regex>>,
    /// Minimum Shannon entropy of the captured value (group 1), if gated.
    entropy: Option<f64>,
    /// Text a line must contain for the rule to apply.
    needle: Option<&'static str>,
}

impl Rule {
    fn regex(&self) -> Option<&Regex> {
        self.re
            .get_or_init(|| {
                // Secrets are ASCII: ASCII classes and word boundaries compile
                // far faster than Unicode ones, and this runs on every `note`
                // (a pattern that needs Unicode keeps it). The patterns are
                // constants, covered by tests; a bad one is skipped, not a
                // panic.
                let ascii = regex::RegexBuilder::new(self.pattern)
                    .unicode(false)
                    .build();
                ascii.or_else(|_| Regex::new(self.pattern)).ok()
            })
            .as_ref()
    }
}

/// Rules whose Unicode classes take milliseconds to compile, with a literal
/// every match contains: they are compiled only for a line that has it.
const NEEDLES: &[(&str, &str)] = &[("url-credentials", "://")];

const PATTERNS: &[(&str, &str, Option<f64>)] = &[
    (
        "aws-access-key-id",
        r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
        None,
    ),
    ("github-pat", r"\b(ghp_[0-9A-Za-z]{36})\b", None),
    ("github-oauth", r"\b(gho_[0-9A-Za-z]{36})\b", None),
    (
        "github-app-token",
        r"\b((?:ghu|ghs)_[0-9A-Za-z]{36})\b",
        None,
    ),
    ("github-refresh-token", r"\b(ghr_[0-9A-Za-z]{36})\b", None),
    (
        "github-fine-grained-pat",
        r"\b(github_pat_[0-9A-Za-z_]{82})\b",
        None,
    ),
    ("gitlab-pat", r"\b(glpat-[0-9A-Za-z_\-]{20})\b", None),
    (
        "gitlab-runner-token",
        r"\b(glrt-[0-9A-Za-z_\-]{20})\b",
        None,
    ),
    ("slack-token", r"\b(xox[baprs]-[0-9A-Za-z\-]{10,})", None),
    (
        "slack-app-token",
        r"\b(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)",
        None,
    ),
    (
        "slack-webhook",
        r"(hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{43,56})",
        None,
    ),
    (
        "slack-webhook",
        r"(hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,})",
        None,
    ),
    (
        "stripe-key",
        r"\b((?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,99})\b",
        None,
    ),
    (
        "openai-key",
        r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,})",
        None,
    ),
    (
        "openai-project-key",
        r"\b(sk-proj-[A-Za-z0-9_\-]{40,})",
        None,
    ),
    (
        "anthropic-key",
        r"\b(sk-ant-(?:api03|admin01)-[A-Za-z0-9_\-]{32,})",
        None,
    ),
    ("google-api-key", r"\b(AIza[0-9A-Za-z_\-]{35})", None),
    (
        "private-key",
        r"(-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)",
        None,
    ),
    (
        "jwt",
        r"\b(ey[A-Za-z0-9]{15,}\.ey[A-Za-z0-9_\-]{15,}\.[A-Za-z0-9_\-]{10,})",
        None,
    ),
    ("npm-token", r"\b(npm_[A-Za-z0-9]{36})\b", None),
    (
        "pypi-token",
        r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})",
        None,
    ),
    (
        "sendgrid-key",
        r"\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})\b",
        None,
    ),
    ("twilio-key", r"\b(SK[0-9a-f]{32})\b", None),
    ("huggingface-token", r"\b(hf_[A-Za-z]{34})\b", None),
    ("digitalocean-token", r"\b(do[opr]_v1_[a-f0-9]{64})\b", None),
    (
        "shopify-token",
        r"\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b",
        None,
    ),
    ("mailchimp-key", r"\b([0-9a-f]{32}-us\d{1,2})\b", None),
    (
        "azure-storage-key",
        r"(AccountKey=[A-Za-z0-9+/=]{86,88})",
        None,
    ),
    (
        "telegram-bot-token",
        r"\b(\d{8,10}:AA[0-9A-Za-z_\-]{33})\b",
        None,
    ),
    (
        "discord-webhook",
        r"(discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,})",
        None,
    ),
    (
        "square-token",
        r"\b((?:sq0atp|sq0csp)-[0-9A-Za-z\-_]{22,43})",
        None,
    ),
    (
        "age-secret-key",
        r"(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})",
        None,
    ),
    (
        "hashicorp-vault-token",
        r"\b(hv[sbr]\.[A-Za-z0-9_\-]{24,})",
        None,
    ),
    (
        "terraform-cloud-token",
        r"\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70})",
        None,
    ),
    ("pulumi-token", r"\b(pul-[a-f0-9]{40})\b", None),
    (
        "postman-api-key",
        r"\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b",
        None,
    ),
    ("linear-api-key", r"\b(lin_api_[A-Za-z0-9]{40})\b", None),
    (
        "notion-token",
        r"\b((?:secret|ntn)_[A-Za-z0-9]{43})\b",
        None,
    ),
    ("doppler-token", r"\b(dp\.pt\.[A-Za-z0-9]{43})\b", None),
    (
        "sentry-token",
        r"\b(sntry[su]_[A-Za-z0-9+/=_\-]{40,})",
        None,
    ),
    ("atlassian-token", r"\b(ATATT3[A-Za-z0-9_\-=]{180,})", None),
    ("supabase-token", r"\b(sbp_[a-f0-9]{40})\b", None),
    (
        "planetscale-token",
        r"\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=\-_.]{32,64})",
        None,
    ),
    ("flyio-token", r"\b(fo1_[A-Za-z0-9_\-]{43})\b", None),
    ("facebook-token", r"\b(EAA[MC][A-Za-z0-9]{100,})", None),
    ("mailgun-key", r"\b(key-[a-f0-9]{32})\b", None),
    (
        "gcp-service-account",
        r#"("private_key_id"\s*:\s*"[a-f0-9]{40}")"#,
        None,
    ),
    ("dropbox-token", r"\b(sl\.[A-Za-z0-9_\-]{130,})", None),
    ("databricks-token", r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b", None),
    (
        "grafana-token",
        r"\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})\b",
        None,
    ),
    (
        "url-credentials",
        r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@]{1,64}:([^\s:/@$<{}]{8,128})@[a-z0-9.\-]+",
        Some(3.0),
    ),
    (
        "generic-secret",
        r#"(?i-u)(?:password|passwd|pwd|secret|token|api[_.\-]?key|access[_.\-]?key|private[_.\-]?key|client[_.\-]?secret|auth[_.\-]?key|credentials?)[a-z0-9_.\-]{0,20}["']?\s{0,5}(?::|=|:=|=>)\s{0,5}["']?([A-Za-z0-9/+_.=~!@#%^&*\-]{12,150})"#,
        Some(3.5),
    ),
];

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        PATTERNS
            .iter()
            .map(|(id, pattern, entropy)| Rule {
                id,
                pattern,
                re: OnceLock::new(),
                entropy: *entropy,
                needle: NEEDLES
                    .iter()
                    .find(|(n, _)| n == id)
                    .map(|(_, needle)| *needle),
            })
            .collect()
    })
}

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Values that look like a secret's slot but hold a placeholder.
fn is_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "example",
        "placeholder",
        "changeme",
        "your",
        "xxxx",
        "****",
        "redacted",
        "dummy",
        "sample",
        "environ",
        "process.env",
        "getenv",
        "secrets.",
        "config.",
        "settings.",
        "vault",
    ];
    WORDS.iter().any(|w| lower.contains(w))
        || !v.bytes().any(|b| b.is_ascii_digit())
        || !v.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Finds secrets in `text`, one finding per line at most, the specific rule
/// winning over the generic ones.
pub fn find_secrets(text: &str) -> Vec<Finding> {
    // Most texts hold no secret, and a rule the whole text does not match
    // matches none of its lines (no pattern is anchored): one search of the
    // text per rule leaves only the rules worth asking line by line, instead
    // of every rule on every line (a 12-line memory: 1 search, not 12).
    let live: Vec<(&Rule, &Regex)> = rules()
        .iter()
        .filter(|rule| rule.needle.is_none_or(|n| text.contains(n)))
        .filter_map(|rule| Some((rule, rule.regex()?)))
        .filter(|(_, re)| re.is_match(text))
        .collect();
    let mut found: Vec<Finding> = Vec::new();
    if live.is_empty() {
        return found;
    }
    for (i, line) in text.lines().enumerate() {
        if line.len() < 8 {
            continue;
        }
        for &(rule, re) in &live {
            if rule.needle.is_some_and(|n| !line.contains(n)) {
                continue;
            }
            // Most lines match no rule: ask cheaply before building captures.
            if !re.is_match(line) {
                continue;
            }
            let hit = re.captures_iter(line).any(|c| {
                let value = c.get(1).map_or("", |m| m.as_str());
                match rule.entropy {
                    None => true,
                    Some(min) => !is_placeholder(value) && entropy(value) >= min,
                }
            });
            if hit {
                found.push(Finding {
                    rule: rule.id,
                    line: i + 1,
                });
                break;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(rules().len(), PATTERNS.len());
        assert!(rules().iter().all(|r| r.regex().is_some()));
        for (id, needle) in NEEDLES {
            let rule = rules().iter().find(|r| r.id == *id).expect("rule");
            assert!(rule.pattern.contains(needle), "{id}");
        }
    }

    #[test]
    fn no_pattern_is_anchored() {
        // find_secrets rules out a rule by one search of the whole text: a
        // pattern anchored to a line's start or end would be missed there.
        for (id, pattern, _) in PATTERNS {
            let outside_classes = pattern
                .split('[')
                .map(|p| p.split_once(']').map_or(p, |x| x.1));
            for part in outside_classes {
                assert!(!part.contains('^') && !part.contains('$'), "{id}");
            }
        }
        let text = "first line\nsecond: token = ghp_0123456789abcdefghijklmnopqrstuvwxyz\nlast";
        let found = find_secrets(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, 2);
    }

    #[test]
    fn words_alone_are_not_secrets() {
        for text in [
            "Use a token bucket for rate limiting.",
            "The password policy requires 12 characters.",
            "secret sauce: keep functions small",
            "token = os.environ['API_TOKEN']",
            "password: ${DB_PASSWORD}",
        ] {
            assert!(find_secrets(text).is_empty(), "{text}");
        }
    }
}
