//! Generates a memoir store for benchmarks: N memories across scopes and
//! types (a third in Chinese), each written as a `remember` event in the
//! logs and as its view file, plus MEMORY.md. Deterministic from the seed.
//!
//! ```sh
//! cargo run --release --example gen_store -- <dir> <memories> [seed] [notes]
//! ```
//! `<dir>` must not exist yet; it becomes a git repository with the store.

use memoir::event::{new_id, Event, Op};
use memoir::key::Key;
use memoir::memory::{Memory, MemoryType};
use memoir::time::Timestamp;
use std::fmt::Write as _;
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(n)) = (args.first(), args.get(1)) else {
        eprintln!("usage: gen_store <dir> <memories> [seed] [notes]");
        std::process::exit(2);
    };
    let n: usize = n.parse()?;
    let seed: u64 = args.get(2).map_or(Ok(42), |s| s.parse())?;
    let notes: usize = args.get(3).map_or(Ok(n / 10), |s| s.parse())?;
    let dir = Path::new(dir);
    if dir.exists() {
        return Err(format!("{} exists already", dir.display()).into());
    }
    memoir::store::init(dir)?;
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let base = Timestamp::parse("2026-06-01T00:00:00Z")?;
    let writer = "bench-0000beef";
    let mut logs: std::collections::BTreeMap<String, String> = Default::default();
    for i in 0..n {
        let chinese = i % 3 == 2;
        let scope = SCOPES[i % SCOPES.len()];
        let kind = TYPES[(rng.next() % 4) as usize];
        let time = Timestamp(base.0 + (i as i64) * 60_000);
        let topic = sentence(&mut rng, chinese, 3);
        let name = format!("{topic} {i}");
        let memory = Memory {
            name: name.clone(),
            description: sentence(&mut rng, chinese, 9),
            kind,
            tags: vec![rng.pick(EN).to_string(), rng.pick(EN).to_string()],
            source: Some(format!("generated (seed {seed})")),
            confidence: Some((rng.next() % 10) as f64 / 10.0),
            created: Some(time),
            updated: Some(time),
            review_by: None,
            expires: None,
            body: (0..3)
                .map(|_| sentence(&mut rng, chinese, 14) + "\n")
                .collect(),
        };
        let content = memory.render();
        let (key, _) = Key::parse(&format!("{scope}/{name}"))?;
        let event = Event {
            id: new_id(time)?,
            op: Op::Remember,
            time,
            actor: "Bench <bench@example.com>".into(),
            key: Some(key.clone()),
            prev: vec![],
            reason: None,
            consumed: vec![],
            redacted: None,
            body: content.clone(),
        };
        let log = format!("memory/log/{}/{writer}.md", time.date());
        logs.entry(log).or_default().push_str(&event.render());
        let path = dir.join(key.rel_path());
        std::fs::write(path, content)?;
    }
    for i in 0..notes {
        let time = Timestamp(base.0 + (i as i64) * 90_000);
        let event = Event {
            id: new_id(time)?,
            op: Op::Note,
            time,
            actor: "Bench <bench@example.com>".into(),
            key: None,
            prev: vec![],
            reason: None,
            consumed: vec![],
            redacted: None,
            body: sentence(&mut rng, i % 3 == 2, 12),
        };
        let log = format!("memory/log/{}/{writer}.md", time.date());
        let _ = write!(logs.entry(log).or_default(), "{}", event.render());
    }
    for (rel, text) in logs {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().ok_or("log path")?)?;
        std::fs::write(path, text)?;
    }
    let store = memoir::store::Store::open(dir)?;
    store.reindex()?;
    println!("{}: {n} memories, {notes} notes", dir.display());
    Ok(())
}
