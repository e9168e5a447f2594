#!/usr/bin/env python3
"""Seeds each target's corpus (fuzz/corpus/<target>/, ignored by git) with
the repository's real files (fixtures/, memory/, MEMORY.md) and hostile
shapes. Safe to rerun: files are named by their content's hash."""

import hashlib
import pathlib

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
CORPUS = FUZZ / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / ("seed-" + hashlib.sha1(data).hexdigest()[:16])).write_bytes(data)


def real(pattern):
    return sorted(p for p in ROOT.glob(pattern) if p.is_file())


memory_files = real("memory/*/*.md") + real("fixtures/claude-code/*.md") + real(
    "fixtures/recall/memory/*/*.md"
)
log_files = real("memory/log/*/*.md") + real("fixtures/log/*.md")
index_files = real("MEMORY.md")
texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in memory_files + log_files + index_files}

GOOD = (
    "---\nname: test-command\ndescription: Run `pnpm test`.\ntype: project\n"
    "tags: [a, b]\nsource: user\nconfidence: 0.9\ncreated: 2026-11-29T10:41:07.5Z\n"
    "updated: 2026-11-29T10:41:07Z\nreview_by: 2027-05-29\nexpires: 2027-01-01\n---\n\nBody\n"
)


def fm(yaml, body="body\n"):
    return "---\n" + yaml + "---\n\n" + body


hostile_memory = [
    GOOD,
    GOOD.replace("\n", "\r\n"),
    "\ufeff" + GOOD,
    "\ufeff" + GOOD.replace("\n", "\r\n"),
    GOOD.rstrip("\n"),
    GOOD.replace("\n---\n\nBody\n", "\n...\n"),
    "---\nname: x\ndescription: y\ntype: user\n---",
    "---\nname: x\ndescription: y\ntype: user\n---\n\n\n\r\nbody",
    fm("name: x\ndescription: y\ntype: user\nnested: " + "[" * 5000 + "]" * 5000 + "\n"),
    fm("name: x\ndescription: y\ntype: user\nnested: " + "[" * 200000 + "\n"),
    fm("name: x\ndescription: y\ntype: user\nnested: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n"),
    fm("name: x\ndescription: y\ntype: user\nnested:\n" + "".join(" " * i + "- \n" for i in range(0, 400, 1))),
    # YAML aliases: a billion laughs
    fm(
        "name: x\ndescription: y\ntype: user\n"
        "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
        )
    ),
    fm("name: &n x\ndescription: *n\ntype: user\ntags: [*n, *n]\n"),
    fm("name: x\ndescription: y\ntype: user\n<<: {source: merged}\n"),
    fm("name: x\ndescription: y\ntype: user\n? [complex, key]\n: v\n"),
    fm("name: x\nname: y\ndescription: y\ntype: user\n"),
    fm("name: x\ndescription: y\ntype: user\n\ttags: [a]\n"),
    fm("name: no\ndescription: on\ntype: user\n"),
    fm("name: x\ndescription: |\n  multi\n  ---\n  line\ntype: user\n"),
    fm("name: x\ndescription: y\ntype: user\nconfidence: .nan\n"),
    fm("name: x\ndescription: y\ntype: user\nconfidence: -0.0\n"),
    fm("name: x\ndescription: y\ntype: user\nconfidence: 1e400\n"),
    fm("name: x\ndescription: y\ntype: user\ncreated: 0000-01-01T00:00:00.999999999Z\n"),
    fm("name: x\ndescription: y\ntype: user\ncreated: 9999-12-31T23:59:59.999Z\nexpires: 0000-02-29\n"),
    fm("name: x\ndescription: y\ntype: user\ntags: ['', \"a\\nb\"]\n"),
    fm("name: x\ndescription: y\ntype: user\n!!binary aGVsbG8=: v\n"),
    fm("name: !!str x\ndescription: !custom y\ntype: user\n"),
    fm("name: x\ndescription: " + "y" * 300000 + "\ntype: user\n"),
    fm("name: x\ndescription: y\ntype: user\n", "x" * 262000),
    "---\n" + "a: b\n" * 20000,
    "---\n---\n",
    "---\r\n---\r\n",
    "--- \n...\t\n",
    "\ufeff",
    "",
]

# A log entry as memoir renders it, with a given body and `len`.
ID = "01M8KJP4GWSN8T5QC3YEJQ1898"
ID2 = "01M8KJP4HBCRHG0D5BYFVMNTS0"


def entry(body, length=None, op="remember", key="project/x", eid=ID, extra="", fence="````"):
    length = len(body.encode()) if length is None else length
    keyj = f',"key":"{key}"' if key else ""
    keyh = f" {key}" if key else ""
    nl = "" if body.endswith("\n") else "\n"
    return (
        f"## 11:57:43Z {op}{keyh} · {eid}\n"
        f'<!-- memoir {{"v":1,"id":"{eid}","op":"{op}","time":"2026-11-29T11:57:43.836Z",'
        f'"actor":"Ada <ada@example.com>"{keyj}{extra},"len":{length}}} -->\n'
        f"{fence}markdown\n{body}{nl}{fence}\n<!-- memoir:end {eid} -->\n\n"
    )


hostile_log = [
    entry(GOOD),
    entry("no newline"),
    entry("", op="note", key=None),
    entry("中文\r\n", op="note", key=None),
    entry(GOOD, extra=f',"prev":["{ID2}"],"consumed":["{ID2}"],"reason":"a --\\u003e b"'),
    entry(GOOD, op="forget", extra=',"reason":"x","redacted":"leak"'),
    entry("````\n```\n## heading\n---\r\n<!-- memoir:end X -->\n", fence="`````"),
    entry("short", length=10**6),
    entry("short", length=2**64 - 1),
    entry("short", length=2**64),
    entry("short", length=-1),
    entry("é", length=1),
    entry(GOOD) + entry("b", length=400, eid=ID2),
    entry(GOOD) + entry(GOOD)[:-40],
    entry(GOOD)[:-30] + "\n<!-- memoir:torn -->\n\n" + entry("after", eid=ID2),
    entry("x", extra=',"v":2'),
    entry("x").replace('"v":1', '"v":2'),
    entry("x").replace("\n", "\r\n"),
    "\ufeff" + entry("x"),
    "\n\n\n" + entry("x") + "\n\n\n",
    entry("x" * 200000),
    "## " + "x" * 100000 + "\n",
    "<!-- memoir:torn -->\n" * 1000,
    ("## 11:57:43Z note · " + ID + "\n") * 2000,
    "",
]

slugs = [
    "test-command", "Test Command", "  --Use pnpm, not npm!  ", "API_KEY rotation",
    "Caf\u00e9 au lait", "Cafe\u0301 au lait", "测试命令", "../../x", "CON", "con-x",
    "com1", "COM\u00b9", "lpt9.txt", "a" * 64, "a" * 65, "a " * 40, "x" * 200, "x" * 201,
    "\u0130stanbul", "\u212bngstr\u00f6m", "\u1e9e\u00df", "\u01c5", "\u0345\u0391",
    "a\u200bb", "a\u202eb", "a\u0007b", "\ufeffname", "\u2160\u2161", "\u0661\u0662",
    "\U0001F600 emoji", "a\u0300\u0301\u0302\u0303", "\u1100\u1161\u11a8",
    "project/test-command", "user/Caf\u00e9", "log/x", "-x/y", "a/b/c", "project/", "/x",
    "Project/x", "p" * 33 + "/x", "project/" + "\u00c9" * 70, "task/\u0130" * 3,
]

secret_like = [
    "token = ghp_0123456789abcdefghijklmnopqrstuvwxyz\n",
    "AKIAIOSFODNN7EXAMPLE AKIA2E0A8F3B244C9986\n",
    "password: hunter2hunter2Xy9!\n",
    "postgres://user:s3cr3tP4ssw0rd@db.example.com/x\n",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n",
    "xoxb-1234567890-abcdefghij\n",
    "sk-proj-" + "A1" * 30 + "\n",
    "password=" * 30000,
    "://" * 80000,
    "a://" + "b" * 64 + ":" + "c" * 128 + "@" * 1000 + "\n",
    "secret" + "_" * 20 + ":" + " " * 5 + "x" * 150 + "\n",
    ("token=" + "A1b2" * 40 + "\n") * 1500,
    "ey" + "A" * 100000 + ".ey" + "B" * 100000 + "\n",
    "AccountKey=" + "A" * 200000 + "\n",
    "x" * 262144,
    "\u00e9" * 100000,
    "",
]

for t in texts.values():
    put("secrets", t)
    put("merge", t + "\0" + t + "\0" + t)
for p in memory_files:
    put("memory", texts[p])
for p in log_files:
    put("log", texts[p])
    # Every event of a real log, alone.
    for part in texts[p].split("\n\n## "):
        put("log", ("" if part.startswith("## ") else "## ") + part + "\n\n")
for h in hostile_memory:
    put("memory", h)
    put("secrets", h)
for h in hostile_log:
    put("log", h)
for s in slugs:
    put("slug", s)
for p in memory_files:
    put("slug", p.stem)
    put("slug", p.parent.name + "/" + p.stem)
for s in secret_like:
    put("secrets", s)

# Merge: real pairs of memory files, MEMORY.md variants, conflict markers.
mems = [texts[p] for p in memory_files[:6]]
for i in range(len(mems) - 1):
    put("merge", "\0" + mems[i] + "\0" + mems[i + 1])
    put("merge", mems[i] + "\0" + mems[i + 1] + "\0" + mems[i])
for p in index_files:
    idx = texts[p]
    lines = idx.splitlines(keepends=True)
    ours = "".join(lines[: len(lines) // 2] + lines[len(lines) // 2 + 1 :])
    theirs = idx.replace("## project", "## project\n### user\n- [n](memory/user/n.md) — n", 1)
    put("merge", idx + "\0" + ours + "\0" + theirs)
    put("merge", idx.replace("\n", "\r\n") + "\0" + ours + "\0" + theirs)
    put("merge", idx + "\0" + "<<<<<<< HEAD\n" + ours + "=======\n" + theirs + ">>>>>>> other\n" + "\0" + idx)
put("merge", "a\n<<<<<<< HEAD\nours\n||||||| base\nb\n=======\ntheirs\n>>>>>>> other\nb\n\0x\0y")
put("merge", "<!-- memoir:index:start -->\n<!-- memoir:index:end -->\n" * 3 + "\0" + "<!-- memoir:index:end -->\n<!-- memoir:index:start -->\n\0")
# Many interleaved changes on both sides (once quadratic: see
# regressions/merge/).
put("merge", ("line\n" * 20000) + "\0" + ("line\nx\n" * 10000) + "\0" + ("y\nline\n" * 10000))
put("merge", "\0" + GOOD + "\0" + GOOD.replace("updated: 2026", "updated: 2025"))

# interop: the fixtures of Claude Code's and OpenClaw's formats, a
# transcript, and MCP messages.
FIX = ROOT / "tests" / "fixtures"
for f in sorted((FIX / "claude-code").rglob("*")) + sorted((FIX / "openclaw").rglob("*.md")):
    if f.is_file():
        put("interop", f.read_text())
put("interop", '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n'
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"q":"x"}}}\n')
put("interop", "<!-- observed: 2026-11-20 | status: active -->\n- Prefer short answers\n## Section\ntext\n")

# mcp: a session, and calls with every argument kind right and wrong.
put("mcp", '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}\n'
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"q":"x","f":true,"n":0.5,"i":3,"l":["a"],"o":"a"}}}\n')
put("mcp", '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"q":"","n":7,"i":-1,"l":[1],"o":"c","zz":1}}}\n')
put("mcp", '[' * 5000 + '\n{"jsonrpc":"2.0","id":null,"method":"ping"}\n')
# hook: Claude Code's payloads (UserPromptSubmit, SessionStart, SessionEnd).
put("hook", '{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"/repo","hook_event_name":"UserPromptSubmit","prompt":"why does CI fail?"}')
put("hook", '{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}')
put("hook", '{"session_id":"s","hook_event_name":"SessionEnd","reason":"exit","transcript_path":"x"} {"second":1}')
put("hook", '{"prompt":' + '[' * 3000)

for t in sorted(CORPUS.iterdir()):
    print(f"{t.name}: {len(list(t.iterdir()))} seeds")
