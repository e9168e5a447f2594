//! A Model Context Protocol server over stdio: JSON-RPC 2.0, one message a
//! line, answering `initialize`, `ping`, `tools/list` and `tools/call`.
//!
//! Written by hand rather than on the official SDK (`rmcp`): a stdio tool
//! server is these four methods, and the SDK would bring tokio, schemars
//! and about 90 crates to a binary that has no other use for them (minutes
//! more of a clean build on two cores). The tests drive it with the
//! official clients (the Python SDK and the MCP Inspector), so the wire
//! format is checked by code no one here wrote.
//!
//! This module is the protocol only: which tools there are and what a call
//! does is the [`Handler`]'s (the CLI runs the subcommand of the same
//! name). Every message sent passes [`secrets::redact_json`], so no secret
//! reaches the client whatever a handler returns.
//!
//! [`secrets::redact_json`]: crate::policy::secrets::redact_json

pub mod frame;
pub mod tool;

use crate::policy::secrets;
use serde_json::{json, Value};
use std::io::{self, BufRead, Write};
pub use tool::{Arg, Arguments, Effect, Kind, Param, ToolSpec};

/// The protocol versions this server speaks, newest first: a client asking
/// for one of them gets it, any other client the newest.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC's error codes.
mod code {
    /// The message is not JSON.
    pub const PARSE: i64 = -32700;
    /// JSON, but not a request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's parameters are wrong (an unknown tool).
    pub const INVALID_PARAMS: i64 = -32602;
}

/// What the server says of itself in `initialize`.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// What the model should know before using the tools.
    pub instructions: String,
}

/// What a tool call gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The result as data (`structuredContent`, and the text when there is
    /// no `text`); an array is given as `{ "<list_key>": [...] }`.
    pub document: Value,
    /// The text for the model, when it is not the document itself (the
    /// memory block of `context`).
    pub text: Option<String>,
    /// The call failed or needs a human: `isError`.
    pub is_error: bool,
}

/// Runs the tools.
pub trait Handler {
    /// Runs `tool` with checked arguments.
    fn call(&mut self, tool: &ToolSpec, args: Arguments) -> ToolOutcome;

    /// The result of a call whose arguments do not fit the tool (a
    /// missing, unknown or mistyped one: `message` names it).
    fn usage_error(&self, message: String) -> ToolOutcome {
        ToolOutcome {
            document: json!({ "error": { "code": "usage", "message": message, "exit": 2 } }),
            text: None,
            is_error: true,
        }
    }
}

/// The server: its description, its tools and what runs them.
pub struct Server<H> {
    info: ServerInfo,
    tools: Vec<ToolSpec>,
    handler: H,
}

impl<H: Handler> Server<H> {
    /// A server offering `tools`, run by `handler`.
    pub fn new(info: ServerInfo, tools: Vec<ToolSpec>, handler: H) -> Self {
        Server {
            info,
            tools,
            handler,
        }
    }

    /// Answers messages from `input` on `output` until the input ends.
    pub fn serve(&mut self, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
        while let Some(line) = frame::read_line(&mut input, frame::MAX_MESSAGE)? {
            let reply = match line {
                frame::Line::TooLong => Some(error(
                    Value::Null,
                    code::PARSE,
                    &format!("message longer than {} bytes", frame::MAX_MESSAGE),
                )),
                frame::Line::Message(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
                frame::Line::Message(bytes) => self.handle(&bytes),
            };
            if let Some(mut reply) = reply {
                secrets::redact_json(&mut reply);
                // serde_json escapes newlines in strings: a message stays one line.
                serde_json::to_writer(&mut output, &reply)?;
                output.write_all(b"\n")?;
                output.flush()?;
            }
        }
        Ok(())
    }

    /// The answer to one message; `None` for a notification or a response.
    pub fn handle(&mut self, message: &[u8]) -> Option<Value> {
        let message: Value = match serde_json::from_slice(message) {
            Ok(v) => v,
            Err(e) => return Some(error(Value::Null, code::PARSE, &format!("not JSON: {e}"))),
        };
        let Value::Object(request) = message else {
            let why = if message.is_array() {
                "batches are not supported: send one message a line"
            } else {
                "a message must be a JSON object"
            };
            return Some(error(Value::Null, code::INVALID_REQUEST, why));
        };
        let id = request.get("id").cloned();
        let Some(method) = request.get("method").and_then(Value::as_str) else {
            // A response to a request of ours (there are none), or garbage.
            return match id {
                Some(id) if !request.contains_key("result") && !request.contains_key("error") => {
                    Some(error(id, code::INVALID_REQUEST, "a request needs a method"))
                }
                _ => None,
            };
        };
        // A notification (`notifications/initialized`, `…/cancelled`) is never answered.
        let id = id?;
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Some(error(
                Value::Null,
                code::INVALID_REQUEST,
                "an id must be a string or an integer",
            ));
        }
        if request.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error(id, code::INVALID_REQUEST, "jsonrpc must be \"2.0\""));
        }
        let params = request.get("params");
        let result = match method {
            "initialize" => Ok(self.initialize(params)),
            "ping" => Ok(json!({})),
            "tools/list" => {
                Ok(json!({ "tools": self.tools.iter().map(ToolSpec::to_json).collect::<Vec<_>>() }))
            }
            "tools/call" => self.call(params),
            _ => Err((
                code::METHOD_NOT_FOUND,
                format!("no method {}", shown(method)),
            )),
        };
        Some(match result {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((c, message)) => error(id, c, &message),
        })
    }

    /// `initialize`: the version both speak, the tools capability, who we are.
    fn initialize(&self, params: Option<&Value>) -> Value {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        let version = PROTOCOL_VERSIONS
            .iter()
            .find(|v| Some(**v) == asked)
            .unwrap_or(&PROTOCOL_VERSIONS[0]);
        json!({
            "protocolVersion": version,
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": self.info.name, "title": self.info.name, "version": self.info.version },
            "instructions": self.info.instructions,
        })
    }

    /// `tools/call`: an unknown tool is a protocol error; bad arguments and
    /// a failed call are tool errors (`isError`), which the model sees and
    /// can correct.
    fn call(&mut self, params: Option<&Value>) -> Result<Value, (i64, String)> {
        let name = params
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .ok_or((
                code::INVALID_PARAMS,
                "tools/call needs a tool name".to_string(),
            ))?;
        let Some(tool) = self.tools.iter().find(|t| t.name == name) else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name).collect();
            return Err((
                code::INVALID_PARAMS,
                format!("no tool {} (tools: {})", shown(name), names.join(", ")),
            ));
        };
        let outcome = match tool.check(params.and_then(|p| p.get("arguments"))) {
            Ok(args) => self.handler.call(tool, args),
            Err(message) => self.handler.usage_error(message),
        };
        Ok(result(outcome))
    }
}

/// A tool outcome as MCP's `CallToolResult`: the text for the model, the
/// document as structured content (an object, as MCP requires).
fn result(outcome: ToolOutcome) -> Value {
    let text = match outcome.text {
        Some(t) => t,
        None => serde_json::to_string_pretty(&outcome.document).unwrap_or_default(),
    };
    let mut r = json!({
        "content": [{ "type": "text", "text": text }],
        "isError": outcome.is_error,
    });
    if outcome.document.is_object() {
        r["structuredContent"] = outcome.document;
    }
    r
}

/// A JSON-RPC error response.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// A name the client sent, as an error quotes it: short, printable.
fn shown(name: &str) -> String {
    let masked = crate::policy::mask::masked(name, &[name]);
    let s: String = masked
        .chars()
        .filter(|c| !c.is_control())
        .take(60)
        .collect();
    format!("`{s}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl Handler for Echo {
        fn call(&mut self, tool: &ToolSpec, args: Arguments) -> ToolOutcome {
            ToolOutcome {
                document: json!({ "tool": tool.name, "args": args.len() }),
                text: None,
                is_error: false,
            }
        }
    }

    fn server() -> Server<Echo> {
        let tool = ToolSpec {
            name: "echo",
            title: "Echo",
            description: "d",
            effect: Effect::ReadOnly,
            output: json!({ "type": "object" }),
            params: vec![Param {
                name: "x",
                kind: Kind::Text { non_empty: false },
                required: true,
                description: "x",
            }],
        };
        let info = ServerInfo {
            name: "memoir".into(),
            version: "0".into(),
            instructions: "i".into(),
        };
        Server::new(info, vec![tool], Echo)
    }

    fn answer(s: &mut Server<Echo>, m: &str) -> Value {
        s.handle(m.as_bytes()).expect("an answer")
    }

    /// initialize agrees on a version the client asked for, else offers the newest.
    #[test]
    fn negotiates_the_version() {
        let mut s = server();
        let r = answer(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
        );
        assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
        let r = answer(
            &mut s,
            r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
        );
        assert_eq!(r["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        assert_eq!(r["id"], "a");
    }

    /// Notifications and responses get no answer; bad messages get JSON-RPC errors.
    #[test]
    fn answers_requests_only() {
        let mut s = server();
        assert_eq!(
            s.handle(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(s.handle(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#), None);
        let cases = [
            ("{", code::PARSE),
            ("[1]", code::INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#,
                code::METHOD_NOT_FOUND,
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                code::INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                code::INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zz"}}"#,
                code::INVALID_PARAMS,
            ),
        ];
        for (m, c) in cases {
            assert_eq!(answer(&mut s, m)["error"]["code"], c, "{m}");
        }
    }

    /// A call with bad arguments is a tool error the model can read.
    #[test]
    fn bad_arguments_are_tool_errors() {
        let mut s = server();
        let r = answer(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
        );
        assert_eq!(r["result"]["isError"], true);
        assert_eq!(r["result"]["structuredContent"]["error"]["code"], "usage");
        let r = answer(
            &mut s,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"y"}}}"#,
        );
        assert_eq!(r["result"]["isError"], false);
        assert_eq!(r["result"]["structuredContent"]["args"], 1);
    }

    /// serve answers line by line and redacts what it sends.
    #[test]
    fn serves_lines_and_redacts() {
        struct Leaky;
        impl Handler for Leaky {
            fn call(&mut self, _: &ToolSpec, _: Arguments) -> ToolOutcome {
                ToolOutcome {
                    document: json!({ "body": "token ghp_0123456789abcdefghijABCDEFGHIJ012345" }),
                    text: None,
                    is_error: false,
                }
            }
        }
        let mut s = Server::new(server().info, server().tools, Leaky);
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\n\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":""}}}"#,
            "\n"
        );
        let mut out = Vec::new();
        s.serve(input.as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(!text.contains("ghp_0123456789"), "{text}");
    }
}
