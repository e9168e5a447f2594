//! Generates a memoir store for benchmarks, deterministic from a seed.
//!
//! ```sh
//! cargo run --release --example gen_store -- <dir> <memories> [seed]
//!     [--events M] [--proposals P] [--zh FRACTION] [--body-lines L]
//!     [--writers W] [--days D] [--conflicts C]
//! ```
//!
//! `<dir>` must not exist yet; it becomes a git repository (nothing
//! committed) holding a store with `<memories>` live memories across the
//! three scopes and four types, `--zh` of them in Chinese (default 1/3),
//! bodies of `--body-lines` sentences (default 3), and `--events` log
//! entries in all (default 4 × memories) from `--writers` writers (default
//! three) taking turns: one `remember` per memory, then updates of existing
//! memories (a `remember` with `prev`), memories created and later
//! forgotten, pending proposals of new memories (one in twenty of the
//! extra events, at most 1,000) and notes; last, `--conflicts` memories
//! get two versions from two writers that each replace the same head (an
//! open conflict). Events are 30 seconds apart, or spread over `--days`
//! days (years of history: `--days 1095`). The views and MEMORY.md are
//! what replaying the logs gives, and the persistent index is built, as
//! after `memoir reindex`.

use memoir::model::event::{id_from, Event, Op};
use memoir::model::key::Key;
use memoir::model::memory::{Memory, MemoryType};
use memoir::model::time::Timestamp;
use std::collections::BTreeMap;
use std::path::Path;

/// xorshift64*: small, deterministic, good enough to pick words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const EN: &[&str] = &[
    "build",
    "test",
    "deploy",
    "database",
    "cache",
    "queue",
    "worker",
    "service",
    "client",
    "server",
    "schema",
    "migration",
    "index",
    "query",
    "latency",
    "timeout",
    "retry",
    "backoff",
    "token",
    "session",
    "login",
    "payment",
    "invoice",
    "email",
    "template",
    "upload",
    "bucket",
    "region",
    "cluster",
    "node",
    "container",
    "image",
    "registry",
    "pipeline",
    "release",
    "version",
    "feature",
    "flag",
    "config",
    "secret",
    "vault",
    "metric",
    "dashboard",
    "alert",
    "oncall",
    "incident",
    "postmortem",
    "runbook",
    "backup",
    "restore",
    "frontend",
    "backend",
    "component",
    "router",
    "handler",
    "middleware",
    "logger",
    "trace",
    "span",
    "profile",
    "benchmark",
    "fixture",
    "mock",
    "stub",
    "lint",
    "format",
    "review",
    "branch",
    "commit",
    "merge",
];
const ZH: &[&str] = &[
    "测试",
    "部署",
    "数据库",
    "缓存",
    "队列",
    "服务",
    "客户端",
    "服务器",
    "迁移",
    "索引",
    "查询",
    "延迟",
    "超时",
    "重试",
    "令牌",
    "会话",
    "登录",
    "支付",
    "发票",
    "邮件",
    "模板",
    "上传",
    "集群",
    "节点",
    "容器",
    "镜像",
    "流水线",
    "发布",
    "版本",
    "功能",
    "配置",
    "密钥",
    "指标",
    "仪表盘",
    "告警",
    "值班",
    "事故",
    "复盘",
    "备份",
    "恢复",
    "前端",
    "后端",
    "组件",
    "路由",
    "日志",
    "性能",
    "代码审查",
    "分支",
    "合并",
    "规范",
];
const SCOPES: &[&str] = &["user", "project", "task"];
const TYPES: [MemoryType; 4] = [
    MemoryType::User,
    MemoryType::Feedback,
    MemoryType::Project,
    MemoryType::Reference,
];

fn sentence(rng: &mut Rng, chinese: bool, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if chinese {
            s.push_str(rng.pick(ZH));
            if i % 4 == 3 {
                s.push('，');
            }
        } else {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(rng.pick(EN));
        }
    }
    s
}

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
struct Spec {
    memories: usize,
    seed: u64,
    events: usize,
    proposals: Option<usize>,
    zh: f64,
    body_lines: usize,
    writers: usize,
    days: Option<usize>,
    conflicts: usize,
}

impl Spec {
    fn parse(args: &[String]) -> Result<(String, Spec), String> {
        let mut positional = Vec::new();
        let mut flags: BTreeMap<&str, &str> = BTreeMap::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.strip_prefix("--") {
                Some(name) => {
                    let value = it.next().ok_or(format!("--{name} needs a value"))?;
                    flags.insert(name, value);
                }
                None => positional.push(a.as_str()),
            }
        }
        let [dir, n, rest @ ..] = positional.as_slice() else {
            return Err("usage: gen_store <dir> <memories> [seed] [--events M] [--proposals P] [--zh FRACTION] [--body-lines L] [--writers W] [--days D] [--conflicts C]".into());
        };
        let num = |s: &str, what: &str| {
            s.parse::<usize>()
                .map_err(|_| format!("{what}: not a number: {s}"))
        };
        let memories = num(n, "memories")?;
        let mut spec = Spec {
            memories,
            seed: rest
                .first()
                .map_or(Ok(42), |s| num(s, "seed").map(|v| v as u64))?,
            events: memories * 4,
            proposals: None,
            zh: 1.0 / 3.0,
            body_lines: 3,
            writers: WRITERS.len(),
            days: None,
            conflicts: 0,
        };
        for (name, value) in flags {
            match name {
                "events" => spec.events = num(value, "--events")?,
                "proposals" => spec.proposals = Some(num(value, "--proposals")?),
                "body-lines" => spec.body_lines = num(value, "--body-lines")?,
                "writers" => spec.writers = num(value, "--writers")?.max(2),
                "days" => spec.days = Some(num(value, "--days")?.max(1)),
                "conflicts" => spec.conflicts = num(value, "--conflicts")?,
                "zh" => {
                    spec.zh = value
                        .parse::<f64>()
                        .ok()
                        .filter(|f| (0.0..=1.0).contains(f))
                        .ok_or(format!("--zh: not a fraction between 0 and 1: {value}"))?
                }
                _ => return Err(format!("unknown option --{name}")),
            }
        }
        Ok((dir.to_string(), spec))
    }
}

/// How many events of each kind: they add up to `spec.events` (or to the
/// memories, if fewer events were asked for).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mix {
    forgets: usize,
    updates: usize,
    proposals: usize,
    notes: usize,
}

impl Mix {
    fn of(spec: &Spec) -> Mix {
        let extra = spec.events.saturating_sub(spec.memories);
        let forgets = extra / 10;
        let updates = extra * 3 / 10;
        let proposals = spec
            .proposals
            .unwrap_or((extra / 20).min(1000))
            .min(extra - 2 * forgets - updates);
        Mix {
            forgets,
            updates,
            proposals,
            notes: extra - 2 * forgets - updates - proposals,
        }
    }
}

const WRITERS: [(&str, &str); 3] = [
    ("main-0000beef", "Bench <bench@example.com>"),
    ("alice-1234abcd", "Alice <alice@example.com>"),
    ("bob-5678ef01", "Bob <bob@example.com>"),
];

/// Writer `i` of `n`: the three above, then `w<i>-<8 hex digits>`, each a
/// person of its own.
fn writer(i: usize, n: usize) -> (String, String) {
    match WRITERS.get(i).filter(|_| n <= WRITERS.len()) {
        Some((w, a)) => (w.to_string(), a.to_string()),
        None => (
            format!("w{i:02}-{:08x}", 0x1000_0000 + i * 0x0101_0101),
            format!("Writer {i} <w{i}@example.com>"),
        ),
    }
}

/// The generator's state: the logs being written and each memory's head.
struct Gen {
    rng: Rng,
    spec: Spec,
    clock: Timestamp,
    events: usize,
    logs: BTreeMap<String, String>,
    /// Live and forgotten memories: key, current content, head id.
    memories: Vec<(Key, Option<String>, String)>,
    /// Memory names used so far (memories and proposals).
    names: usize,
    /// Milliseconds between two events.
    step: i64,
}

impl Gen {
    fn memory(&mut self, i: usize, chinese: bool) -> Memory {
        let kind = TYPES[(self.rng.next() % 4) as usize];
        let topic = sentence(&mut self.rng, chinese, 3);
        let lines = self.spec.body_lines;
        Memory {
            name: format!("{topic} {i}"),
            description: sentence(&mut self.rng, chinese, 9),
            kind,
            tags: vec![self.rng.pick(EN).to_string(), self.rng.pick(EN).to_string()],
            source: Some(format!("generated (seed {})", self.spec.seed)),
            confidence: Some((self.rng.next() % 10) as f64 / 10.0),
            created: Some(self.clock),
            updated: Some(self.clock),
            review_by: None,
            expires: None,
            body: (0..lines)
                .map(|_| sentence(&mut self.rng, chinese, 14) + "\n")
                .collect(),
        }
    }

    fn chinese(&mut self) -> bool {
        (self.rng.next() % 1_000_000) as f64 / 1_000_000.0 < self.spec.zh
    }

    /// Appends an event to its writer's log for its day; returns its id.
    fn log(&mut self, op: Op, key: Option<Key>, prev: Vec<String>, body: String) -> String {
        // Thirty seconds apart (200,000 events span about ten weeks), or
        // spread over the days asked for.
        self.clock = Timestamp(self.clock.0 + self.step);
        let mut random = [0u8; 10];
        random[..8].copy_from_slice(&self.rng.next().to_le_bytes());
        let (writer, actor) = writer(self.events % self.spec.writers, self.spec.writers);
        self.events += 1;
        let event = Event {
            id: id_from(self.clock, random),
            op,
            time: self.clock,
            actor,
            key,
            prev,
            reason: (op == Op::Forget).then(|| "superseded (generated)".to_string()),
            consumed: vec![],
            redacted: None,
            body,
        };
        let rel = format!("memory/log/{}/{writer}.md", self.clock.date());
        self.logs.entry(rel).or_default().push_str(&event.render());
        event.id
    }

    /// A new memory, remembered (or only proposed: it stays pending).
    fn create(&mut self, op: Op) -> Result<(), Box<dyn std::error::Error>> {
        let i = self.names;
        self.names += 1;
        let chinese = self.chinese();
        let memory = self.memory(i, chinese);
        let scope = SCOPES[i % SCOPES.len()];
        let (key, _) = Key::parse(&format!("{scope}/{}", memory.name))?;
        let content = memory.render();
        let id = self.log(op, Some(key.clone()), vec![], content.clone());
        if op == Op::Remember {
            self.memories.push((key, Some(content), id));
        }
        Ok(())
    }

    /// A new version of memory `i`: its body gains a sentence.
    fn update(&mut self, i: usize) -> Result<(), Box<dyn std::error::Error>> {
        let (key, content, head) = self.memories[i].clone();
        let mut memory = Memory::parse(content.as_deref().unwrap_or_default())?;
        let chinese = self.chinese();
        memory
            .body
            .push_str(&(sentence(&mut self.rng, chinese, 14) + "\n"));
        memory.updated = Some(Timestamp(self.clock.0 + 30_000));
        let content = memory.render();
        let id = self.log(Op::Remember, Some(key.clone()), vec![head], content.clone());
        self.memories[i] = (key, Some(content), id);
        Ok(())
    }

    fn note(&mut self) {
        let chinese = self.chinese();
        let text = sentence(&mut self.rng, chinese, 12);
        self.log(Op::Note, None, vec![], text);
    }
}

/// Writes the store described by `spec` into `dir` (which must not exist).
fn generate(dir: &Path, spec: &Spec) -> Result<Mix, Box<dyn std::error::Error>> {
    if dir.exists() {
        return Err(format!("{} exists already", dir.display()).into());
    }
    memoir::store::init(dir)?;
    let mix = Mix::of(spec);
    let mut g = Gen {
        rng: Rng(spec.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        spec: spec.clone(),
        clock: Timestamp::parse("2026-06-01T00:00:00Z")?,
        events: 0,
        logs: BTreeMap::new(),
        memories: Vec::new(),
        names: 0,
        step: spec.days.map_or(30_000, |d| {
            (d as i64 * 86_400_000 / spec.events.max(spec.memories).max(1) as i64).max(1)
        }),
    };
    let live = spec.memories;
    for _ in 0..live + mix.forgets {
        g.create(Op::Remember)?;
    }
    // Updates, forgets, proposals and notes interleaved, as a team writes them.
    let mut work: Vec<u8> = [
        (0u8, mix.updates),
        (1, mix.forgets),
        (2, mix.proposals),
        (3, mix.notes),
    ]
    .iter()
    .flat_map(|&(k, n)| std::iter::repeat_n(k, n))
    .collect();
    for i in (1..work.len()).rev() {
        let j = (g.rng.next() % (i as u64 + 1)) as usize;
        work.swap(i, j);
    }
    let mut forgotten = live;
    for kind in work {
        match kind {
            0 if live > 0 => {
                let i = (g.rng.next() % live as u64) as usize;
                g.update(i)?;
            }
            1 => {
                let (key, _, head) = g.memories[forgotten].clone();
                let id = g.log(Op::Forget, Some(key.clone()), vec![head], String::new());
                g.memories[forgotten] = (key, None, id);
                forgotten += 1;
            }
            2 => g.create(Op::Propose)?,
            _ => g.note(),
        }
    }
    // Two writers each replace the same head of a memory: both versions
    // stay heads, the view keeps what they agreed on.
    for i in 0..spec.conflicts.min(live) {
        let (key, content, head) = g.memories[i].clone();
        for _ in 0..2 {
            let mut memory = Memory::parse(content.as_deref().unwrap_or_default())?;
            let chinese = g.chinese();
            memory
                .body
                .push_str(&(sentence(&mut g.rng, chinese, 14) + "\n"));
            g.log(
                Op::Remember,
                Some(key.clone()),
                vec![head.clone()],
                memory.render(),
            );
        }
    }
    for (rel, text) in &g.logs {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().ok_or("log path")?)?;
        std::fs::write(path, text)?;
    }
    for (key, content, _) in &g.memories {
        if let Some(c) = content {
            std::fs::write(dir.join(key.rel_path()), c)?;
        }
    }
    let store = memoir::store::Store::open(dir)?;
    memoir::ops::reindex::reindex(&store)?;
    Ok(mix)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, spec) = match Spec::parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("gen_store: {e}");
            std::process::exit(2);
        }
    };
    match generate(Path::new(&dir), &spec) {
        Ok(mix) => println!(
            "{dir}: {} memories, {} events ({} updates, {} forgotten, {} proposals, {} notes, {} conflicts)",
            spec.memories,
            spec.memories
                + 2 * mix.forgets
                + mix.updates
                + mix.proposals
                + mix.notes
                + 2 * spec.conflicts.min(spec.memories),
            mix.updates,
            mix.forgets,
            mix.proposals,
            mix.notes,
            spec.conflicts.min(spec.memories)
        ),
        Err(e) => {
            eprintln!("gen_store: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `dir` (but .git), with its content.
    fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        walkdir::WalkDir::new(dir)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
                (
                    rel.display().to_string(),
                    std::fs::read(e.path()).unwrap_or_default(),
                )
            })
            .collect()
    }

    fn spec(seed: u64) -> Spec {
        Spec {
            memories: 60,
            seed,
            events: 300,
            proposals: None,
            zh: 0.5,
            body_lines: 2,
            writers: 3,
            days: None,
            conflicts: 0,
        }
    }

    /// Years of history from many writers, with open conflicts: each
    /// writer's log per day, the events where their days say, and replay
    /// finds the conflicts asked for.
    #[test]
    fn a_long_history_spreads_over_days_and_writers_with_conflicts() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().join("long");
        let long = Spec {
            writers: 7,
            days: Some(1095),
            conflicts: 4,
            ..spec(3)
        };
        generate(&dir, &long).expect("generates");
        let files = tree(&dir);
        let logs: Vec<&String> = files
            .keys()
            .filter(|p| p.starts_with("memory/log/") && !p.ends_with(".gitkeep"))
            .collect();
        let writers: std::collections::BTreeSet<&str> =
            logs.iter().filter_map(|p| p.rsplit('/').next()).collect();
        assert_eq!(writers.len(), 7, "{writers:?}");
        let days: std::collections::BTreeSet<&str> =
            logs.iter().filter_map(|p| p.split('/').nth(2)).collect();
        assert!(
            days.first() >= Some(&"2026-06-01") && days.last() >= Some(&"2029-05-01"),
            "{days:?}"
        );
        let store = memoir::store::Store::open(&dir).expect("opens");
        let (replay, warnings) = memoir::log::read::replay(&store).expect("replays");
        assert!(warnings.is_empty(), "{warnings:?}");
        let conflicted = replay.memories.values().filter(|m| m.conflict).count();
        assert_eq!(conflicted, 4);
    }

    /// The index holds the replay's key states and pending proposals.
    fn assert_indexes(index: &memoir::index::Index, replay: &memoir::log::replay::Replay) {
        assert_eq!(index.keys, replay.key_states());
        let pending: Vec<&String> = index.pending.iter().map(|e| &e.id).collect();
        assert_eq!(pending, replay.pending.iter().collect::<Vec<_>>());
    }

    #[test]
    fn the_same_seed_gives_the_same_store_byte_for_byte() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let (a, b, c) = (
            tmp.path().join("a"),
            tmp.path().join("b"),
            tmp.path().join("c"),
        );
        let mix = generate(&a, &spec(7)).expect("generates");
        generate(&b, &spec(7)).expect("generates");
        generate(&c, &spec(8)).expect("generates");
        let (ta, tb, tc) = (tree(&a), tree(&b), tree(&c));
        assert_eq!(ta, tb, "same seed, same files");
        assert_ne!(ta, tc, "another seed, another store");

        // The store is what it says: memoir replays it to the same views.
        let store = memoir::store::Store::open(&a).expect("opens");
        let (replay, warnings) = memoir::log::read::replay(&store).expect("replays");
        assert!(warnings.is_empty(), "{warnings:?}");
        let live = ta
            .keys()
            .filter(|p| {
                p.starts_with("memory/") && !p.starts_with("memory/log/") && p.ends_with(".md")
            })
            .count();
        assert_eq!(live, 60);
        assert_eq!(replay.pending.len(), mix.proposals);
        // With no index yet, the logs are replayed once, whole, to the
        // replay's key states.
        let drop_index = || {
            for e in walkdir::WalkDir::new(a.join(".git")).into_iter().flatten() {
                if e.file_name() == "index.bin" {
                    std::fs::remove_file(e.path()).expect("removes the index");
                }
            }
        };
        let replays = |store: &memoir::store::Store| {
            store
                .stats
                .replays
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        drop_index();
        let cold = memoir::store::Store::open(&a).expect("opens");
        let cache = memoir::index::Index::refreshed(&cold).expect("indexes");
        assert_eq!(replays(&cold), 1, "one full replay");
        assert_indexes(&cache, &replay);
        // An index that has seen the first days applies the later ones
        // as they come, a day at a time and in time order across the
        // writers, to the same key states, with no replay.
        let d = tmp.path().join("d");
        generate(
            &d,
            &Spec {
                days: Some(10),
                ..spec(7)
            },
        )
        .expect("generates");
        let whole = memoir::store::Store::open(&d).expect("opens");
        let (replay_d, _) = memoir::log::read::replay(&whole).expect("replays");
        let log = d.join("memory/log");
        let aside = tmp.path().join("later-days");
        std::fs::create_dir(&aside).expect("makes a folder");
        let mut days: Vec<_> = std::fs::read_dir(&log)
            .expect("lists the days")
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name())
            .collect();
        days.sort();
        let later = days.split_off(days.len() / 2);
        assert!(!days.is_empty() && !later.is_empty(), "{days:?}");
        for day in &later {
            std::fs::rename(log.join(day), aside.join(day)).expect("moves a day aside");
        }
        let early = memoir::store::Store::open(&d).expect("opens");
        memoir::index::Index::refreshed_leniently(&early).expect("indexes and saves");
        for day in &later {
            std::fs::rename(aside.join(day), log.join(day)).expect("moves a day back");
        }
        let warm = memoir::store::Store::open(&d).expect("opens");
        let cache = memoir::index::Index::refreshed(&warm).expect("indexes");
        assert_eq!(replays(&warm), 0, "no full replay");
        assert_indexes(&cache, &replay_d);
        assert!(
            mix.updates > 0 && mix.forgets > 0 && mix.notes > 0 && mix.proposals > 0,
            "{mix:?}"
        );
        let logged: usize = ta
            .iter()
            .filter(|(p, _)| p.starts_with("memory/log/"))
            .map(|(_, text)| {
                String::from_utf8_lossy(text)
                    .matches("<!-- memoir:end ")
                    .count()
            })
            .sum();
        assert_eq!(logged, 300, "every asked-for event is in the logs");
        let report = memoir::ops::check::check(&store).expect("checks");
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        assert_eq!(report.events, 300);
    }
}
