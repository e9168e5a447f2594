//! `memoir mcp`: the protocol on the wire, hostile input, and the official
//! clients (the MCP Python SDK, the MCP Inspector) as oracles.
//!
//! The two tests that need a client are `#[ignore]`d by name, so a plain
//! `cargo test` lists them as ignored rather than passing them unrun;
//! `.ci/run` installs the clients and runs them with `--ignored`, where a
//! missing client fails.

use crate::util::Env;
use serde_json::{json, Value};

/// A session's messages, one a line, and the answers `memoir mcp` gives.
fn session(env: &Env, messages: &[Value]) -> Vec<Value> {
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    answers(env, input.as_bytes())
}

/// What `memoir mcp` answers to raw input; every line of stdout must be JSON.
fn answers(env: &Env, input: &[u8]) -> Vec<Value> {
    let out = env.cmd(&["mcp"]).write_stdin(input).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
}

/// A session as a client runs it: the handshake, then writes and reads
/// that reach the store as the CLI's would.
#[test]
fn a_session_writes_and_reads_the_store() {
    let env = Env::new();
    let got = session(
        &env,
        &[
            request(
                1,
                "initialize",
                json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
            ),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            request(2, "tools/list", json!({})),
            call(
                3,
                "remember",
                json!({ "scope": "project", "name": "test-command", "description": "Run the tests with `cargo test`", "source": "stated by the user on 2026-11-29", "tags": ["tests"] }),
            ),
            call(
                4,
                "recall",
                json!({ "query": "which command runs the tests" }),
            ),
        ],
    );
    // One answer per request, none for the notification, in order.
    let ids: Vec<&Value> = got.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!(2), &json!(3), &json!(4)]);
    assert_eq!(got[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(got[0]["result"]["serverInfo"]["name"], "memoir");
    assert_eq!(got[1]["result"]["tools"].as_array().map(Vec::len), Some(8));
    // Two notes are two entries: only what repeats to no effect is idempotent.
    let idempotent = |name: &str| {
        got[1]["result"]["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .map(|t| t["annotations"]["idempotentHint"].clone())
    };
    assert_eq!(idempotent("note"), Some(json!(false)));
    assert_eq!(idempotent("remember"), Some(json!(true)));
    assert_eq!(idempotent("recall"), Some(json!(true)));
    assert_eq!(got[2]["result"]["isError"], false, "{}", got[2]);
    assert_eq!(got[2]["result"]["structuredContent"]["status"], "written");
    assert_eq!(
        got[3]["result"]["structuredContent"]["hits"][0]["key"],
        "project/test-command"
    );
    // The write is the CLI's: the same file, the same log event.
    assert!(env
        .read("memory/project/test-command.md")
        .contains("source: stated by the user on 2026-11-29"));
    let show = env.ok(&["show", "project/test-command", "--json"]);
    assert!(show.contains("\"tests\""), "{show}");
}

/// A remember that would change a memory is a proposal (isError, code
/// decision) carrying the diff; a refused secret is a tool error that
/// names the rule and never the secret; the memory is untouched.
#[test]
fn collisions_and_refusals_are_tool_errors() {
    let env = Env::new();
    let secret = concat!("ghp_", "0123456789abcdefghijABCDEFGHIJ012345");
    let remember = |id, description: &str| {
        call(
            id,
            "remember",
            json!({ "scope": "project", "name": "db", "description": description, "source": "stated by the user" }),
        )
    };
    let got = session(
        &env,
        &[
            remember(1, "The database is Postgres 16"),
            remember(2, "The database is MySQL 8"),
            remember(3, &format!("the password is {secret}")),
        ],
    );
    let decision = &got[1]["result"];
    assert_eq!(decision["isError"], true);
    assert_eq!(decision["structuredContent"]["error"]["code"], "decision");
    assert_eq!(decision["structuredContent"]["error"]["exit"], 4);
    assert!(decision["structuredContent"]["diff"]
        .as_str()
        .unwrap_or("")
        .contains("+description: The database is MySQL 8"));
    let refused = &got[2]["result"];
    assert_eq!(refused["isError"], true);
    assert_eq!(refused["structuredContent"]["error"]["code"], "refused");
    assert_eq!(
        refused["structuredContent"]["error"]["rule"],
        "secret:github-pat"
    );
    let all: String = got.iter().map(Value::to_string).collect();
    assert!(!all.contains(secret), "the secret was echoed: {all}");
    assert!(env.read("memory/project/db.md").contains("Postgres 16"));
}

/// Bad arguments are tool errors naming the argument (the model can
/// correct them); an unknown tool or method is a JSON-RPC error.
#[test]
fn bad_calls_get_errors_the_caller_can_act_on() {
    let env = Env::new();
    let got = session(
        &env,
        &[
            call(1, "remember", json!({ "scope": "project", "name": "x" })),
            call(2, "recall", json!({ "query": "x", "limit": "ten" })),
            call(3, "list", json!({ "scope": "nope" })),
            call(4, "show", json!({ "key": "project/x", "extra": 1 })),
            call(5, "drop_tables", json!({})),
            request(6, "resources/list", json!({})),
        ],
    );
    let message = |i: usize| {
        got[i]["result"]["structuredContent"]["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        message(0).contains("`description` is required"),
        "{}",
        got[0]
    );
    assert!(
        message(1).contains("`limit` must be a whole number"),
        "{}",
        got[1]
    );
    assert!(
        message(2).contains("`scope` must be one of user, project, task"),
        "{}",
        got[2]
    );
    assert!(
        message(3).contains("unknown argument `extra`"),
        "{}",
        got[3]
    );
    for answer in &got[..4] {
        assert_eq!(
            answer["result"]["structuredContent"]["error"]["code"], "usage",
            "{answer}"
        );
    }
    assert_eq!(got[4]["error"]["code"], -32602);
    assert_eq!(got[5]["error"]["code"], -32601);
}

/// stdin is the protocol: no tool reads it. An empty note is refused and
/// the message after it is still answered.
#[test]
fn no_tool_reads_the_protocol_channel() {
    let env = Env::new();
    let got = session(
        &env,
        &[
            call(1, "note", json!({ "text": "" })),
            call(
                2,
                "note",
                json!({ "text": "the CI cache misses on Mondays" }),
            ),
            call(3, "context", json!({})),
        ],
    );
    assert_eq!(got.len(), 3);
    assert_eq!(got[0]["result"]["isError"], true);
    assert_eq!(got[1]["result"]["isError"], false, "{}", got[1]);
    assert!(env.log_text().contains("the CI cache misses on Mondays"));
    assert_eq!(got[2]["result"]["isError"], false);
}

/// Garbage, a line without end, deep nesting and invalid UTF-8 each get a
/// parse error; the server goes on and exits 0 when the input ends.
#[test]
fn hostile_input_gets_parse_errors() {
    let env = Env::new();
    let mut input = Vec::new();
    input.extend_from_slice(b"not json\n");
    input.extend_from_slice(&vec![b'x'; 5 << 20]);
    input.push(b'\n');
    input.extend_from_slice(&"[".repeat(100_000).into_bytes());
    input.push(b'\n');
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    input.extend_from_slice(b"\x00\x01\x02");
    let got = answers(&env, &input);
    assert_eq!(got.len(), 6, "{got:?}");
    for a in &got[..4] {
        assert!(
            a["error"]["code"] == -32700 || a["error"]["code"] == -32600,
            "{a}"
        );
    }
    assert_eq!(got[4], json!({ "jsonrpc": "2.0", "id": 2, "result": {} }));
    assert_eq!(got[5]["error"]["code"], -32700);
}

/// A real client's test cannot pass without its client: it is ignored by
/// name (`cargo test` says so), `.ci/run` installs the clients and runs it
/// with `--ignored`, and there a missing client fails it.
fn client_missing(what: &str) -> ! {
    panic!("{what} is not installed (.ci/run installs it)");
}

/// The official MCP Python SDK as a scripted client: every tool, bad
/// arguments, a refused secret, a proposal (tests/mcp/python_client.py).
#[test]
#[ignore = "needs the MCP Python SDK (pip install mcp); .ci/run installs it and runs this"]
fn the_python_sdk_drives_every_tool() {
    // The interpreter itself: a pyenv shim needs the real HOME, which is pinned.
    let python = std::process::Command::new("python3")
        .args(["-c", "import mcp, sys; print(sys.executable)"])
        .output();
    let python = match python {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => client_missing("the MCP Python SDK (pip install mcp)"),
    };
    let env = Env::new();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_client.py");
    let memoir = assert_cmd::cargo::cargo_bin("memoir");
    let mut cmd = assert_cmd::Command::new(python);
    env.pin(&mut cmd);
    let out = cmd
        .arg(script)
        .arg(memoir)
        .arg(env.root())
        .output()
        .expect("python");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("ok: all checks"),
        "{text}"
    );
}

/// The official MCP Inspector's CLI mode (tests/mcp/inspector.sh), found
/// at `MEMOIR_INSPECTOR`.
#[test]
#[ignore = "needs the MCP Inspector at MEMOIR_INSPECTOR; .ci/run installs it and runs this"]
fn the_mcp_inspector_lists_and_calls_tools() {
    let Some(inspector) = std::env::var_os("MEMOIR_INSPECTOR") else {
        client_missing("the MCP Inspector (MEMOIR_INSPECTOR)");
    };
    let env = Env::new();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/inspector.sh");
    let mut cmd = assert_cmd::Command::new("bash");
    env.pin(&mut cmd);
    let out = cmd
        .arg(script)
        .arg(inspector)
        .arg(assert_cmd::cargo::cargo_bin("memoir"))
        .arg(env.root())
        .output()
        .expect("inspector");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("ok: inspector checks"),
        "{text}"
    );
}

/// The server masks what a client sent as the command line does: a value
/// long enough to be a secret, and the key and path memoir derives from
/// it, are never quoted back in an error.
#[test]
fn no_error_quotes_back_a_secret_the_client_sent() {
    let env = Env::new();
    let token = concat!("ghp_", "Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9");
    let unguarded = concat!("Zk3vQ9pL2mX8rT5wY7uB1nC4dF6gH0jK2lM9", "qR3sT7");
    let got = session(
        &env,
        &[
            call(
                1,
                "remember",
                json!({ "scope": "project", "name": "db", "description": "d",
                        "source": "s", "review_by": unguarded }),
            ),
            call(2, "show", json!({ "key": format!("project/{unguarded}") })),
            call(
                3,
                "remember",
                json!({ "scope": "user", "name": format!("Always use {token}"),
                        "description": "d", "source": "s" }),
            ),
            call(4, "recall", json!({ "query": "q", token: true })),
            request(5, "tools/call", json!({ "name": token, "arguments": {} })),
        ],
    );
    assert_eq!(got.len(), 5, "{got:?}");
    for answer in &got[..4] {
        assert_eq!(answer["result"]["isError"], true, "{answer}");
    }
    let all: String = got
        .iter()
        .map(Value::to_string)
        .collect::<String>()
        .to_lowercase();
    for secret in [token, unguarded] {
        let tail = &secret.to_lowercase()[8..];
        assert!(!all.contains(tail), "quoted back: {all}");
    }
}

/// Every object schema in `schema` made closed (`additionalProperties:
/// false`): a field a result carries that its schema does not declare
/// then fails, so the declared schema cannot fall behind the JSON.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut m: serde_json::Map<String, Value> =
                m.iter().map(|(k, v)| (k.clone(), closed(v))).collect();
            if m.contains_key("properties") {
                m.insert("additionalProperties".into(), json!(false));
            }
            Value::Object(m)
        }
        Value::Array(items) => Value::Array(items.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// What Python's `jsonschema` (Draft 2020-12, MCP's default dialect) finds
/// wrong in each `[schema, instance]`: the schema against the meta-schema,
/// then, unless the instance is null, the instance against the schema.
fn schema_errors(checks: &[Value]) -> Vec<Vec<String>> {
    const SCRIPT: &str = r#"
import json, sys
from jsonschema import Draft202012Validator as V
out = []
for schema, instance in json.load(sys.stdin):
    errors = [f"not a JSON Schema: {e.message}" for e in V(V.META_SCHEMA).iter_errors(schema)]
    if not errors and instance is not None:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in V(schema).iter_errors(instance)]
    out.append(errors)
print(json.dumps(out))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", "import jsonschema"])
        .output();
    if !out.is_ok_and(|o| o.status.success()) {
        client_missing("Python's jsonschema (pip install mcp installs it)");
    }
    let mut child = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(&serde_json::to_vec(checks).expect("json"))
            .expect("write");
    }
    let out = child.wait_with_output().expect("python3");
    assert!(out.status.success(), "the validator failed");
    serde_json::from_slice(&out.stdout).expect("the validator's answer")
}

/// Every tool declares an `outputSchema`, and every result, each kind a
/// tool gives (a write, an unchanged write, a proposal asked for and one
/// kept for a human, a refusal, bad arguments, a memory hit and a note
/// hit, the hot memory and a task's, a conflict), is valid against it; a
/// success carries no field its schema leaves out. The validator is
/// Python's `jsonschema` (a dependency of the MCP Python SDK): the Rust
/// crate, as a dev-dependency, turned on serde_json's `float_roundtrip`,
/// so the binary under test parsed numbers unlike the shipped one (an
/// embedding of `1e39` became a JSON error instead of "not finite").
#[test]
#[ignore = "needs Python's jsonschema (installed with the MCP Python SDK); .ci/run installs it and runs this"]
fn every_result_matches_its_tools_output_schema() {
    let env = Env::new();
    let secret = concat!("ghp_", "0123456789abcdefghijABCDEFGHIJ012345");
    let calls = [
        (
            "remember",
            json!({ "scope": "project", "name": "test-command", "description": "Run the tests with `cargo test`",
                    "source": "stated by the user", "tags": ["tests"], "body": "CI runs it.",
                    "review_by": "2030-01-01", "expires": "2031-01-01", "confidence": 0.9 }),
        ),
        (
            "remember",
            json!({ "scope": "project", "name": "test-command", "description": "Run the tests with `cargo test`",
                    "source": "stated by the user", "tags": ["tests"], "body": "CI runs it.",
                    "review_by": "2030-01-01", "expires": "2031-01-01", "confidence": 0.9 }),
        ),
        (
            "remember",
            json!({ "scope": "project", "name": "test-command", "description": "Run the tests with nextest",
                    "source": "a guess" }),
        ),
        (
            "remember",
            json!({ "scope": "user", "name": "editor", "description": "Uses vim", "source": "stated by the user",
                    "propose": true }),
        ),
        (
            "remember",
            json!({ "scope": "project", "name": "token", "description": format!("the token is {secret}"),
                    "source": "pasted" }),
        ),
        ("remember", json!({ "scope": "project", "name": "x" })),
        (
            "note",
            json!({ "text": "the flaky benchmark needs a warm cache" }),
        ),
        ("recall", json!({ "query": "which command runs the tests" })),
        ("recall", json!({ "query": "flaky benchmark warm cache" })),
        ("recall", json!({ "query": "the capital of Peru" })),
        ("context", json!({ "query": "run the tests" })),
        ("context", json!({})),
        ("context", json!({ "query": "the capital of Peru" })),
        ("show", json!({ "key": "project/test-command" })),
        ("show", json!({ "key": "project/none" })),
        ("list", json!({})),
        ("conflicts", json!({})),
        (
            "forget",
            json!({ "key": "project/test-command", "reason": "moved to nextest" }),
        ),
    ];
    let mut messages = vec![request(0, "tools/list", json!({}))];
    for (i, (tool, arguments)) in calls.iter().enumerate() {
        messages.push(call(i as u64 + 1, tool, arguments.clone()));
    }
    let got = session(&env, &messages);
    assert_eq!(got.len(), calls.len() + 1, "{got:?}");
    let tools = got[0]["result"]["tools"].as_array().expect("tools");
    let schema_of = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["outputSchema"].clone())
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    for tool in tools {
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
    }
    // Each check: a schema and an instance (none: the schema alone).
    let mut checks = Vec::new();
    for tool in tools {
        checks.push(json!([tool["outputSchema"], null]));
    }
    let mut seen_errors = 0;
    for (answer, (tool, arguments)) in got[1..].iter().zip(&calls) {
        let result = &answer["result"];
        let content = &result["structuredContent"];
        assert!(content.is_object(), "{tool} {arguments}: {answer}");
        let schema = schema_of(tool);
        checks.push(json!([schema, content]));
        if result["isError"] == true {
            seen_errors += 1;
            continue;
        }
        checks.push(json!([closed(&schema), content]));
    }
    let errors = schema_errors(&checks);
    for (check, errors) in checks.iter().zip(&errors) {
        assert!(errors.is_empty(), "{errors:?}\n{check}");
    }
    // The proposal kept for a human, the refusal, the usage error, the missing memory.
    assert_eq!(seen_errors, 4, "{got:?}");
    // The note was a hit of its own kind, and a conflict was listed.
    let recall_note = &got[9]["result"]["structuredContent"]["hits"];
    assert!(
        recall_note
            .as_array()
            .is_some_and(|h| h.iter().any(|h| h["type"] == "note")),
        "{recall_note}"
    );
    let conflicts = &got[17]["result"]["structuredContent"]["conflicts"];
    assert_eq!(conflicts.as_array().map(Vec::len), Some(1), "{conflicts}");
}

/// `context` with nothing to give says so in one line (an empty text
/// block reads as a broken call); its document stays, `memories` empty.
#[test]
fn context_with_nothing_relevant_says_so() {
    let env = Env::new();
    let got = session(
        &env,
        &[
            call(1, "context", json!({ "query": "deploy to kubernetes" })),
            call(2, "context", json!({})),
        ],
    );
    for (answer, expected) in got.iter().zip([
        "No memory is relevant to this task",
        "No memory to show at a session's start",
    ]) {
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{answer}");
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        assert!(text.starts_with(expected), "{answer}");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert_eq!(result["structuredContent"]["memories"], json!([]));
        assert_eq!(result["structuredContent"]["text"], "");
    }
    // The CLI still prints nothing: a hook injects nothing.
    assert_eq!(env.ok(&["context", "deploy to kubernetes"]), "");
}

/// One rule for a name over MCP and on the command line: `My Fact Name`
/// is key project/my-fact-name either way, and both say so; a name with a
/// path separator is refused by both with the same message; the tool's
/// schema states the rule.
#[test]
fn remember_takes_a_name_as_the_cli_does_and_says_so() {
    let env = Env::new();
    let got = session(
        &env,
        &[
            request(1, "tools/list", json!({})),
            call(
                2,
                "remember",
                json!({ "scope": "project", "name": "My Fact Name", "description": "A fact", "source": "stated by the user" }),
            ),
            call(
                3,
                "remember",
                json!({ "scope": "project", "name": "ops/db", "description": "Postgres", "source": "stated by the user" }),
            ),
        ],
    );
    let rule = got[0]["result"]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "remember"))
        .map(|t| t["inputSchema"]["properties"]["name"]["description"].clone())
        .expect("remember");
    let rule = rule.as_str().unwrap_or("");
    assert!(
        rule.contains("project/my-fact-name") && rule.contains("Refused"),
        "{rule}"
    );
    let written = &got[1]["result"]["structuredContent"];
    assert_eq!(written["key"], "project/my-fact-name", "{written}");
    assert_eq!(written["name"], "My Fact Name", "{written}");
    assert!(env
        .read("memory/project/my-fact-name.md")
        .contains("name: My Fact Name\n"));
    let refused = &got[2]["result"];
    assert_eq!(refused["isError"], true);
    assert_eq!(refused["structuredContent"]["error"]["code"], "refused");
    let message = refused["structuredContent"]["error"]["message"]
        .as_str()
        .unwrap_or("");
    let (_, _, cli) = env.run(&[
        "remember",
        "project/ops/db",
        "-d",
        "Postgres",
        "-s",
        "stated by the user",
    ]);
    assert!(
        !message.is_empty() && cli.contains(message),
        "MCP: {message}\nCLI: {cli}"
    );
    // The command line says the key is the name's slug, too.
    let (code, out, err) = env.remember("project/Another Fact", "Another fact", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("remembered project/another-fact (named \"Another Fact\""),
        "{out}"
    );
}
