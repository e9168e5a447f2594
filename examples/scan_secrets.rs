//! Times the secret scan (`memoir::policy::secrets::find_secrets` and `redact`) on
//! 256 KiB bodies: a typical markdown body and adversarial ones. Run with
//! `bench/secrets.sh` (a release build); docs/performance.md records a run.
//!
//!   cargo run --release --example scan_secrets [RUNS [BODY]]

use memoir::policy::secrets::{find_secrets, redact};
use std::time::{Duration, Instant};

const SIZE: usize = 256 * 1024;

/// A deterministic generator, so every run scans the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize] as char)
            .collect()
    }
}

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn fill(mut f: impl FnMut(&mut String)) -> String {
    let mut s = String::with_capacity(SIZE + 4096);
    while s.len() < SIZE {
        f(&mut s);
    }
    s
}

/// Markdown notes: frontmatter, prose in English and Chinese, code blocks,
/// links, hashes, the words secrets come with.
fn typical(rng: &mut Rng) -> String {
    let mut s = String::from(
        "---\nname: deploy-notes\ndescription: how we deploy\ntype: project\ntags: [ops]\n---\n",
    );
    let sentences = [
        "The deploy script rotates the API key every 90 days and keeps the token in Vault.",
        "Use a token bucket for rate limiting; the password policy requires 12 characters.",
        "See https://docs.example.com/deploy#rollback for the rollback steps.",
        "Commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed the flaky test.",
        "部署脚本每九十天轮换一次密钥，令牌保存在保险库里。",
        "密码策略要求至少十二个字符，并且不能与用户名相同。",
        "Run `cargo test --release` before tagging v1.4.2.",
        "The cache key is user:123:profile and expires after 3600 seconds.",
    ];
    s.push_str(&fill(|s| {
        for _ in 0..4 {
            s.push_str(rng.pick(&sentences));
            s.push(' ');
        }
        s.push_str("\n\n");
        if rng.next() % 5 == 0 {
            s.push_str("```yaml\nservice:\n  image: app:1.4.2\n  env:\n    LOG_LEVEL: info\n    DB_HOST: db.internal\n```\n\n");
        }
    }));
    s
}

/// Long lines, many `=`, base64-looking runs, CJK, keywords everywhere,
/// escapes and YAML blocks: every stage of the scan has work.
fn adversarial(rng: &mut Rng) -> String {
    let mut s = fill(|s| {
        let mut line = String::new();
        while line.len() < 4096 {
            match rng.next() % 10 {
                0 => line.push_str("a=b=c==d===e "),
                1 => {
                    let n = 20 + (rng.next() % 60) as usize;
                    line.push_str(&rng.chars(B64, n));
                    line.push(' ');
                }
                2 => line.push_str("密码：令牌＝密钥 口令 "),
                3 => line.push_str("token = value password: policy key=k secret "),
                4 => line.push_str("https://host/path?a=1&sig=short postgres://db:5432 "),
                5 => line.push_str("\"\\x41\\u0042 escaped\" 'it''s' "),
                6 => line.push_str("Bearer abc Basic xyz Authorization: "),
                7 => line.push_str("-----BEGIN RSA PRIVATE KEY----- 不要提交 "),
                8 => line.push_str("ghp_ glpat- sk- xoxb- AKIA eyJ "),
                _ => line.push_str("the quick brown fox, 敏捷的棕色狐狸 "),
            }
        }
        s.push_str(&line);
        s.push('\n');
        s.push_str("config:\n  password: |\n    not-a-secret\n");
    });
    s.truncate(floor(&s, SIZE));
    s
}

/// One line: base64 text with a keyword every 100 bytes.
fn one_long_line(rng: &mut Rng) -> String {
    fill(|s| {
        s.push_str(&rng.chars(B64, 100));
        s.push_str(" token=");
    })
}

/// Base64 of ordinary text, line after line: every run decodes, and the
/// decoded text is scanned again.
fn decodable(rng: &mut Rng) -> String {
    let words = [
        "deploy", "the", "token", "bucket", "policy", "every", "ninety", "days",
    ];
    fill(|s| {
        let mut plain = String::new();
        for _ in 0..12 {
            plain.push_str(rng.pick(&words));
            plain.push(' ');
        }
        s.push_str("blob: ");
        s.push_str(&encode(plain.as_bytes()));
        s.push('\n');
    })
}

/// The same keyword, 40,000 times.
fn keyword_flood(_: &mut Rng) -> String {
    fill(|s| s.push_str("token="))
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            out.push(if k <= c.len() {
                B64[(n >> (18 - 6 * k) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// A body's name and how to make it.
type Body = (&'static str, fn(&mut Rng) -> String);

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let start = Instant::now();
    let _ = find_secrets("first call: compiles the keyword search");
    println!(
        "first call (keyword search compiled): {:.2} ms",
        ms(start.elapsed())
    );
    let bodies: [Body; 5] = [
        ("typical markdown", typical),
        ("adversarial mix", adversarial),
        ("one 256 KiB line", one_long_line),
        ("decodable base64", decodable),
        ("keyword flood", keyword_flood),
    ];
    println!("| body | bytes | find_secrets median | min | redact median | findings |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    // A second argument picks one body (for a profiler).
    let only = std::env::args().nth(2);
    for (name, make) in bodies {
        if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
            continue;
        }
        let text = make(&mut Rng(0x2545_f491_4f6c_dd1d));
        // Warm up: the rules this body wakes are compiled on first use.
        let found = find_secrets(&text);
        let findings = found.len();
        // SHOW=1: what was found, redacted, to check a body's findings.
        if std::env::var_os("SHOW").is_some() {
            let red = redact(&text);
            for f in found.iter().take(8) {
                let line = red.lines().nth(f.line - 1).unwrap_or("");
                let i = line.find("[redacted").unwrap_or(0);
                let lo = floor(line, i.saturating_sub(80));
                let hi = floor(line, (i + 60).min(line.len()));
                eprintln!("{}: line {}: {}", f.rule, f.line, &line[lo..hi]);
            }
        }
        let times: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(find_secrets(std::hint::black_box(&text)));
                t.elapsed()
            })
            .collect();
        let min = times.iter().min().copied().unwrap_or_default();
        let redacts: Vec<Duration> = (0..runs.div_ceil(3))
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(redact(std::hint::black_box(&text)));
                t.elapsed()
            })
            .collect();
        println!(
            "| {name} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {findings} |",
            text.len(),
            ms(median(times)),
            ms(min),
            ms(median(redacts)),
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
