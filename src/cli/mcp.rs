//! `memoir mcp`

use super::error::{code, CliError};
use super::output::Output;
use super::{dispatch, App, Cli, Global};
use clap::Parser;
use memoir::mcp::{
    Arg, Arguments, Effect, Handler, Kind, Param, Server, ServerInfo, ToolOutcome, ToolSpec,
};
use serde_json::{json, Value};

/// Serve memoir to an agent over the Model Context Protocol (stdio).
///
/// Reads JSON-RPC messages on stdin, one a line, and answers on stdout.
/// Each tool is the memoir command of the same name run with --json: the
/// same write policy, the same JSON (docs/cli.md), and an error as
/// `{"error": {"code", "message", "exit"}}` with `isError` set. A change
/// to an existing memory is kept as a proposal for a human; no tool
/// overwrites or resolves. Configure a client with the command
/// `memoir mcp` (docs/cli.md).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir mcp\n  npx @modelcontextprotocol/inspector --cli memoir mcp -- --method tools/list\n  claude mcp add memoir -- memoir mcp"
)]
pub struct Args {}

/// What the model reads before it uses the tools.
const INSTRUCTIONS: &str = "\
memoir is this project's memory, kept in git as plain markdown and reviewed by people.

Before a task, call `context` with what you are about to do (or `recall` with a question); \
treat what it returns as what the team already knows. Notes in results are unconfirmed.

Remember (tool `remember`) only what is stable, reusable, confirmed and low risk: a decision, \
a convention, a command that works, a preference the user stated. Give the source that makes \
it trustworthy (\"stated by the user on 2026-11-29\", \"CI log of 2026-11-28\"). One fact a memory, \
a short description line, a lowercase slug name. Scope `user` is the person, `project` the \
repository, `task` the work in hand.

Never remember secrets (keys, tokens, passwords: they are refused), guesses, one-off logs, or \
what the code or git history already says. Use `note` for a raw observation you are not sure of: \
recall and context find notes, marked unconfirmed, and a person (or consolidation with an \
extractor) turns them into memories.

If `remember` answers with a proposal (exit 4, \"decision\"), a memory with that name or nearly \
the same content exists: nothing was overwritten; tell the user, who decides with \
`memoir conflicts` and `memoir consolidate`. Use `forget` only when the user says a memory is wrong \
or obsolete, with the reason.";

/// Starts the server on stdin and stdout.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    // Scopes come from the store's config; without a store yet, the
    // defaults (each call then says there is no store).
    let scopes = app
        .store()
        .map(|s| s.config.scopes.clone())
        .unwrap_or_else(|_| memoir::model::config::Config::default().scopes);
    let info = ServerInfo {
        name: "memoir".into(),
        version: env!("MEMOIR_VERSION").into(),
        instructions: INSTRUCTIONS.into(),
    };
    let handler = Commands {
        global: app.global.clone(),
        cwd: app.cwd.clone(),
        named: app.named.clone(),
    };
    let mut server = Server::new(info, tools(scopes), handler);
    // A server lives as long as the agent's session: it watches the
    // store meanwhile (unless a `memoir watch` already does), so that its
    // own tools and the session's hooks stat only what changed.
    #[cfg(unix)]
    let watched = app.store().ok();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        #[cfg(unix)]
        if let Some(store) = &watched {
            let opts = memoir::ops::watch::Options {
                stop: &stop,
                overflow_events: 0,
            };
            // Not watching (busy, or the folder cannot be watched) only
            // costs speed: the commands scan.
            s.spawn(move || memoir::ops::watch::watch(store, opts).ok());
        }
        let served = server.serve(std::io::stdin().lock(), std::io::stdout().lock());
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        served
    })?;
    Ok(code::OK)
}

/// Runs a tool as the memoir command of its name.
struct Commands {
    global: Global,
    cwd: Option<std::path::PathBuf>,
    named: Option<memoir::git::NamedRepo>,
}

impl Handler for Commands {
    fn usage_error(&self, message: String) -> ToolOutcome {
        failure(&CliError::Usage(message), &[])
    }

    fn call(&mut self, tool: &ToolSpec, args: Arguments) -> ToolOutcome {
        let argv = argv(tool.name, &args);
        // What the client sent, as the command line's masking reads it:
        // each value alone, not in its `--flag=value` form.
        let given: Vec<&str> = argv
            .iter()
            .map(|a| a.split_once('=').map_or(a.as_str(), |(_, v)| v))
            .chain(argv.iter().map(String::as_str))
            .collect();
        let command = match Cli::try_parse_from(&argv) {
            Ok(cli) => cli.command,
            Err(e) => {
                let message = e.render().to_string();
                let first = message.lines().next().unwrap_or("bad arguments");
                return failure(
                    &CliError::Usage(first.trim_start_matches("error: ").to_string()),
                    &given,
                );
            }
        };
        let mut global = self.global.clone();
        global.json = true;
        global.quiet = false;
        let mut app = App {
            global,
            cwd: self.cwd.clone(),
            out: Output::capture(),
            stats: Default::default(),
            private: Default::default(),
            named: self.named.clone(),
        };
        let result = dispatch(command, &mut app);
        let printed = app.out.captured();
        let document = serde_json::from_slice::<Value>(&printed).unwrap_or_else(|_| json!({}));
        match result {
            Err(e) => failure(&e, &given),
            Ok(exit) => {
                let mut done = outcome(document, exit);
                if tool.name == "context" {
                    say_when_nothing_is_relevant(&mut done, &args);
                }
                done
            }
        }
    }
}

/// A command that ran: its JSON as the result; a non-zero exit (a
/// proposal kept for a human) as a tool error carrying that JSON too.
fn outcome(document: Value, exit: u8) -> ToolOutcome {
    let text = document
        .get("text")
        .and_then(Value::as_str)
        .map(String::from);
    let mut document = document;
    if exit != code::OK {
        let message = match exit {
            code::DECISION => "needs a human decision: nothing was overwritten; the memory is kept as a proposal for review (`memoir conflicts`, `memoir consolidate`)",
            _ => "the command failed",
        };
        document["error"] = json!({ "code": code::name(exit), "message": message, "exit": exit });
    }
    ToolOutcome {
        document,
        text: text.filter(|_| exit == code::OK),
        is_error: exit != code::OK,
    }
}

/// `context` with nothing to give: one line saying so, where the CLI
/// prints nothing (a hook injects nothing), since an empty text block
/// reads to a model as a broken call. The document stays as it is (its
/// `memories` list is empty).
fn say_when_nothing_is_relevant(done: &mut ToolOutcome, args: &Arguments) {
    if done.is_error || done.text.as_deref().is_some_and(|t| !t.trim().is_empty()) {
        return;
    }
    let omitted = done.document["omitted"].as_u64().unwrap_or(0);
    let asked = args
        .iter()
        .any(|(n, a)| *n == "query" && matches!(a, Arg::Text(t) if !t.trim().is_empty()));
    let line = if omitted > 0 {
        format!("No memory fits the token budget ({omitted} left out): call context again with a larger budget.")
    } else if asked {
        "No memory is relevant to this task: nothing in the store matched it.".to_string()
    } else {
        "No memory to show at a session's start: the store has none yet, or none fits the token budget.".to_string()
    };
    done.text = Some(line);
}

/// An error as a tool error, masked as the command line masks its own
/// (`memoir::policy::mask`) by the values the client sent.
fn failure(e: &CliError, given: &[&str]) -> ToolOutcome {
    let mut error = e.to_json();
    for field in ["message", "path"] {
        if let Some(text) = error[field].as_str() {
            error[field] = memoir::policy::mask::masked(text, given).into();
        }
    }
    ToolOutcome {
        document: json!({ "format": super::output::JSON_FORMAT, "error": error }),
        text: None,
        is_error: true,
    }
}

/// The command line a call stands for. Values go in `--flag=value` form
/// and positionals after `--`, so no value is ever read as a flag.
fn argv(tool: &str, args: &Arguments) -> Vec<String> {
    let mut flags = vec!["memoir".to_string(), tool.to_string()];
    let mut positional = Vec::new();
    let text = |name: &str| {
        args.iter().find_map(|(n, a)| match a {
            Arg::Text(t) if *n == name => Some(t.clone()),
            _ => None,
        })
    };
    if tool == "remember" {
        let scope = text("scope").unwrap_or_default();
        let name = text("name").unwrap_or_default();
        positional.push(format!("{scope}/{name}"));
    }
    for (name, arg) in args {
        let flag = format!("--{}", name.replace('_', "-"));
        match (*name, arg) {
            ("scope" | "name", _) if tool == "remember" => {}
            // No words to look for: the hot memory, as without a query.
            ("query", Arg::Text(t)) if tool == "context" && t.trim().is_empty() => {}
            ("key" | "query" | "text", Arg::Text(t)) => positional.push(t.clone()),
            ("notes", Arg::Flag(false)) => flags.push("--no-notes".into()),
            ("notes", _) => {}
            // Each tag as the client sent it: `--tags` would split "ci,cd".
            ("tags", Arg::Texts(items)) => {
                flags.extend(items.iter().map(|i| format!("--tag={i}")));
            }
            (_, Arg::Flag(true)) => flags.push(flag),
            (_, Arg::Flag(false)) => {}
            (_, Arg::Text(t)) => flags.push(format!("{flag}={t}")),
            (_, Arg::Number(n)) => flags.push(format!("{flag}={n}")),
            (_, Arg::Texts(items)) => flags.extend(items.iter().map(|i| format!("{flag}={i}"))),
        }
    }
    flags.push("--".into());
    flags.extend(positional);
    flags
}

/// A parameter.
fn param(name: &'static str, kind: Kind, required: bool, description: &'static str) -> Param {
    Param {
        name,
        kind,
        required,
        description,
    }
}

/// A string parameter.
fn text(name: &'static str, required: bool, description: &'static str) -> Param {
    param(
        name,
        Kind::Text {
            non_empty: required,
        },
        required,
        description,
    )
}

/// The tools, each the CLI command of its name; `scopes` are the store's.
fn tools(scopes: Vec<String>) -> Vec<ToolSpec> {
    vec![
        remember_tool(&scopes),
        recall_tool(&scopes),
        context_tool(),
        note_tool(),
        forget_tool(),
        show_tool(),
        list_tool(&scopes),
        conflicts_tool(),
    ]
}

/// The `scope` parameter: one of the store's scopes.
fn scope(scopes: &[String], required: bool, description: &'static str) -> Param {
    param("scope", Kind::OneOf(scopes.to_vec()), required, description)
}

/// The `type` parameter: one of the memory types.
fn memory_type(description: &'static str) -> Param {
    let types = ["user", "feedback", "project", "reference"].map(String::from);
    param("type", Kind::OneOf(types.to_vec()), false, description)
}

/// The `key` parameter of a tool about one memory.
fn key() -> Param {
    text(
        "key",
        true,
        "The memory: <scope>/<name>, as recall and list give it.",
    )
}

/// How `remember` takes a name: the rule of `memoir remember <scope>/<name>`
/// (the slug algorithm of docs/format.md), refusals and all.
const NAME_RULE: &str = "The memory's name, kept in its file; its key is <scope>/<slug>, the slug \
    being the name lowercased with each run of characters other than letters and digits made one \
    dash, at most 64 characters (\"My Fact Name\" is key project/my-fact-name; the result gives \
    both key and name). Refused (code \"refused\", as the CLI refuses it): a / or \\, a control, \
    bidirectional or invisible character, no letter or digit, more than 200 characters, or a \
    reserved device name (con, nul...). Best given as the slug itself, e.g. test-command.";

/// The `remember` tool.
fn remember_tool(scopes: &[String]) -> ToolSpec {
    ToolSpec {
        name: "remember",
        title: "Remember a fact",
        description: "Remember one stable, confirmed, reusable fact (a decision, a convention, a \
            working command, a stated preference) as a memory in git. Checked by the write \
            policy: secrets, missing sources and bad names are refused. A change to an existing \
            memory, or a near-duplicate of one, is kept as a proposal for a human (isError, \
            code \"decision\") and overwrites nothing.",
        effect: Effect::Additive,
        output: remember_output(),
        params: vec![
            scope(scopes, true, "Whose fact: user (the person), project (this repository), task (the work in hand)."),
            text("name", true, NAME_RULE),
            text("description", true, "One line saying what the memory is; shown in the index."),
            text("source", true, "Why it can be trusted, e.g. \"stated by the user on 2026-11-29\"."),
            text("body", false, "The fact in a few lines of markdown, with why and how to apply it."),
            memory_type("user, feedback, project or reference (default: user in the user scope, else project)."),
            param("tags", Kind::Texts, false, "Labels, each stored as sent (non-empty, one line), e.g. [\"tooling\", \"tests\"]."),
            param("confidence", Kind::Number { min: 0.0, max: 1.0 }, false, "0..1 (default 1)."),
            text("review_by", false, "Flag for review after this date (YYYY-MM-DD)."),
            text("expires", false, "Forget after this date (YYYY-MM-DD)."),
            param("propose", Kind::Flag, false, "Only propose it, for a human to review at consolidation."),
            text("expect", false, "Write only if the memory's current version is this event id (from show's heads)."),
        ],
    }
}

/// The `recall` tool.
fn recall_tool(scopes: &[String]) -> ToolSpec {
    ToolSpec {
        name: "recall",
        title: "Recall memories",
        description:
            "The memories (and unconfirmed notes) that best match a question, best first. \
            Each hit says `relevant`: true for what the store counts as an answer, false for a \
            weaker match shown for you to judge; `answered` is false when nothing reached the \
            store's threshold (then every hit is a weaker match).",
        effect: Effect::ReadOnly,
        output: recall_output(),
        params: vec![
            text("query", true, "The question or topic, in natural language."),
            param(
                "limit",
                Kind::Integer { min: 1, max: 100 },
                false,
                "At most this many hits (default 10).",
            ),
            param(
                "min_score",
                Kind::Number { min: 0.0, max: 1.0 },
                false,
                "Relevance threshold (default 0.3; 0 shows any match).",
            ),
            scope(scopes, false, "Only this scope."),
            memory_type("Only this type."),
            text("tag", false, "Only memories with this tag."),
            param("notes", Kind::Flag, false, "Include notes (default true)."),
            param(
                "relevant_only",
                Kind::Flag,
                false,
                "Only what the store counts as an answer, no weaker matches.",
            ),
        ],
    }
}

/// The `context` tool.
fn context_tool() -> ToolSpec {
    ToolSpec {
        name: "context",
        title: "Memory for a task",
        description: "The block of memory to read before a task, within a token budget: the \
            memories relevant to what you are about to do, or without a query the hot memory \
            for a session's start.",
        effect: Effect::ReadOnly,
        output: document(
            json!({
                "text": string(),
                "tokens": count(),
                "omitted": count(),
                "memories": list_of(string()),
                "personal": list_of(string()),
            }),
            &["text", "tokens", "omitted", "memories", "personal"],
        ),
        params: vec![
            text("query", false, "What you are about to do."),
            param(
                "budget",
                Kind::Integer {
                    min: 1,
                    max: 1_000_000,
                },
                false,
                "Token budget (default as the CLI's).",
            ),
        ],
    }
}

/// The `note` tool.
fn note_tool() -> ToolSpec {
    ToolSpec {
        name: "note",
        title: "Note an observation",
        description: "Append a raw observation to today's log. Notes are never applied to \
            memories; recall and context find them, marked unconfirmed.",
        effect: Effect::Appends,
        output: document(json!({ "id": string() }), &["id"]),
        params: vec![text("text", true, "The observation, one or a few lines.")],
    }
}

/// The `forget` tool.
fn forget_tool() -> ToolSpec {
    ToolSpec {
        name: "forget",
        title: "Forget a memory",
        description: "Forget a memory the user says is wrong or obsolete. The log keeps it \
            (memoir history), so a rollback can bring it back.",
        effect: Effect::Destructive,
        output: document(
            json!({ "key": string(), "id": string(), "store": store() }),
            &["key", "id", "store"],
        ),
        params: vec![key(), text("reason", true, "Why it is forgotten.")],
    }
}

/// The `show` tool.
fn show_tool() -> ToolSpec {
    ToolSpec {
        name: "show",
        title: "Show a memory",
        description: "One memory's fields and body, with its version ids (heads).",
        effect: Effect::ReadOnly,
        output: show_output(),
        params: vec![key()],
    }
}

/// The `list` tool.
fn list_tool(scopes: &[String]) -> ToolSpec {
    ToolSpec {
        name: "list",
        title: "List memories",
        description: "Every memory's key, type, description and date.",
        effect: Effect::ReadOnly,
        output: document(
            json!({ "memories": list_of(memory_summary()) }),
            &["memories"],
        ),
        params: vec![
            scope(scopes, false, "Only this scope."),
            memory_type("Only this type."),
        ],
    }
}

/// The `conflicts` tool.
fn conflicts_tool() -> ToolSpec {
    ToolSpec {
        name: "conflicts",
        title: "Open conflicts",
        description: "What waits for a human decision: memories changed two ways, with each \
            candidate version.",
        effect: Effect::ReadOnly,
        output: conflicts_output(),
        params: vec![],
    }
}

/// A JSON Schema of one JSON type.
fn of_type(kind: &str) -> Value {
    json!({ "type": kind })
}

/// A string.
fn string() -> Value {
    of_type("string")
}

/// A string or null (a field a memory may not have).
fn string_or_null() -> Value {
    json!({ "type": ["string", "null"] })
}

/// A whole number of zero or more.
fn count() -> Value {
    json!({ "type": "integer", "minimum": 0 })
}

/// A list of `items`.
fn list_of(items: Value) -> Value {
    json!({ "type": "array", "items": items })
}

/// Which store a result is from.
fn store() -> Value {
    json!({ "type": "string", "enum": ["repo", "personal"] })
}

/// An object with these `properties`, of which `required` are always there.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// A command's JSON document (docs/cli.md): its `format` version first,
/// then these fields.
fn document(properties: Value, required: &[&str]) -> Value {
    let mut properties = properties;
    properties["format"] = json!({ "type": "integer", "const": super::output::JSON_FORMAT });
    let required: Vec<&str> = std::iter::once("format")
        .chain(required.iter().copied())
        .collect();
    object(properties, &required)
}

/// A memory as `list` and `recall` give it (`output::memory_json`).
fn summary_fields() -> serde_json::Map<String, Value> {
    let fields = json!({
        "key": string(),
        "scope": string(),
        "name": string(),
        "type": string(),
        "description": string(),
        "tags": list_of(string()),
        "source": string_or_null(),
        "confidence": of_type("number"),
        "updated": string_or_null(),
        "path": string(),
        "conflict": of_type("boolean"),
        "store": store(),
    });
    match fields {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// A memory as `list` gives it.
fn memory_summary() -> Value {
    let fields = summary_fields();
    let required: Vec<&str> = fields.keys().map(String::as_str).collect();
    object(json!(fields), &required)
}

/// What `remember` answers: written, unchanged, or proposed (asked for
/// with `propose`; a collision's proposal is a tool error with the same
/// fields and its `error`).
fn remember_output() -> Value {
    document(
        json!({
            "status": { "type": "string", "enum": ["written", "unchanged", "proposed", "moved"] },
            "key": string(),
            "name": string(),
            "path": string(),
            "id": string(),
            "replaced": of_type("boolean"),
            "superseded": list_of(string()),
            "reason": { "type": "string", "enum": ["requested", "changed", "conflict", "near-duplicate"] },
            "other": string_or_null(),
            "diff": string(),
            "expected": string(),
            "heads": list_of(string()),
            "store": store(),
        }),
        &["status", "key", "name", "store"],
    )
}

/// What `recall` answers: whether the store holds an answer, and the
/// hits, each a memory or a note.
fn recall_output() -> Value {
    let score = || of_type("number");
    let mut memory = summary_fields();
    for (name, schema) in [
        ("score", score()),
        ("rank", score()),
        ("stale", of_type("boolean")),
        ("relevant", of_type("boolean")),
        ("similarity", json!({ "type": ["number", "null"] })),
        ("mode", string()),
    ] {
        memory.insert(name.into(), schema);
    }
    let required: Vec<&str> = memory.keys().map(String::as_str).collect();
    let memory = object(json!(memory), &required);
    let note = object(
        json!({
            "key": of_type("null"),
            "type": { "type": "string", "enum": ["note", "team-text"] },
            "note": string(),
            "time": string_or_null(),
            "writer": string_or_null(),
            "text": string(),
            "score": score(),
            "rank": score(),
            "relevant": of_type("boolean"),
            "mode": string(),
            "store": store(),
        }),
        &[
            "key", "type", "note", "time", "writer", "text", "score", "rank", "relevant", "mode",
            "store",
        ],
    );
    document(
        json!({
            "answered": of_type("boolean"),
            "hits": list_of(json!({ "anyOf": [memory, note] })),
        }),
        &["answered", "hits"],
    )
}

/// What `show` answers: the memory's fields, body and version ids.
fn show_output() -> Value {
    document(
        json!({
            "key": string(),
            "path": string(),
            "name": string(),
            "description": string(),
            "type": string(),
            "tags": list_of(string()),
            "source": string_or_null(),
            "confidence": of_type("number"),
            "created": string_or_null(),
            "updated": string_or_null(),
            "review_by": string_or_null(),
            "expires": string_or_null(),
            "body": string(),
            "heads": list_of(string()),
            "conflict": of_type("boolean"),
            "store": store(),
        }),
        &[
            "key",
            "path",
            "name",
            "description",
            "type",
            "tags",
            "source",
            "confidence",
            "created",
            "updated",
            "review_by",
            "expires",
            "body",
            "heads",
            "conflict",
            "store",
        ],
    )
}

/// What `conflicts` answers: each memory waiting, with its candidates.
fn conflicts_output() -> Value {
    let candidate = object(
        json!({
            "id": string(),
            "op": string(),
            "actor": string(),
            "time": string(),
            "source": string_or_null(),
            "content": string_or_null(),
            "diff": string(),
        }),
        &["id", "op", "actor", "time", "source", "content", "diff"],
    );
    let conflict = object(
        json!({
            "key": string(),
            "current": string_or_null(),
            "candidates": list_of(candidate),
        }),
        &["key", "current", "candidates"],
    );
    document(json!({ "conflicts": list_of(conflict) }), &["conflicts"])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values never become flags: a description that looks like one stays text.
    #[test]
    fn values_stay_values() {
        let args = vec![
            ("scope", Arg::Text("project".into())),
            ("name", Arg::Text("x".into())),
            ("description", Arg::Text("--replace".into())),
            ("tags", Arg::Texts(vec!["a".into(), "-b".into()])),
        ];
        assert_eq!(
            argv("remember", &args),
            [
                "memoir",
                "remember",
                "--description=--replace",
                "--tag=a",
                "--tag=-b",
                "--",
                "project/x"
            ]
        );
    }

    /// An empty query asks `context` for the hot memory, as none does.
    #[test]
    fn an_empty_context_query_is_the_hot_memory() {
        for query in ["", "  "] {
            let args = vec![("query", Arg::Text(query.into()))];
            assert_eq!(argv("context", &args), ["memoir", "context", "--"]);
        }
    }

    /// Every tool's parameters are flags its command knows.
    #[test]
    fn every_parameter_is_a_flag() {
        for tool in tools(vec!["user".into(), "project".into()]) {
            let mut args: Arguments = Vec::new();
            for p in &tool.params {
                let v = match &p.kind {
                    Kind::Text { .. } => {
                        Arg::Text(if p.name.contains("by") || p.name == "expires" {
                            "2030-01-01".into()
                        } else {
                            "project".into()
                        })
                    }
                    Kind::OneOf(v) => Arg::Text(v[0].clone()),
                    Kind::Flag => Arg::Flag(p.name != "propose"),
                    Kind::Number { max, .. } => Arg::Number(*max),
                    Kind::Integer { min, .. } => Arg::Number(*min as f64),
                    Kind::Texts => Arg::Texts(vec!["t".into()]),
                };
                args.push((p.name, v));
            }
            let argv = argv(tool.name, &args);
            if let Err(e) = Cli::try_parse_from(&argv) {
                panic!("{}: {argv:?}: {e}", tool.name);
            }
        }
    }
}
