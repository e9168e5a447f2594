//! Claude Code, both directions: the project files `memoir setup
//! claude-code` writes, and the note of a session its end hook records.
//!
//! Setup merges into the user's own files and never drops what is there:
//! `.claude/settings.json` gains memoir's hooks, a permission for its MCP
//! tools and the approval of its `.mcp.json` server; `.mcp.json` gains the
//! `memoir` server unless one of that name exists; `CLAUDE.md` gains a
//! section between marker lines, replaced on the next run. An entry memoir
//! already wrote is recognized and left alone, so a second run changes
//! nothing. The formats are Claude Code's documented ones (settings
//! `hooks.<Event>[].hooks[] = {type: command, command}`, permission rules
//! `mcp__<server>`, `enabledMcpjsonServers`; `.mcp.json` `mcpServers`).

use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The hooks memoir registers: (event, command). SessionStart and
/// UserPromptSubmit inject memory; SessionEnd notes what the user asked.
pub const HOOKS: [(&str, &str); 3] = [
    ("SessionStart", "memoir context --from-hook --budget 1500"),
    (
        "UserPromptSubmit",
        "memoir context --from-hook --budget 800",
    ),
    ("SessionEnd", "memoir note --from-hook"),
];

/// The permission rule that lets the agent call memoir's MCP tools.
pub const PERMISSION: &str = "mcp__memoir";

const SETTINGS: &str = ".claude/settings.json";
const MCP_JSON: &str = ".mcp.json";
const CLAUDE_MD: &str = "CLAUDE.md";
const START: &str = "<!-- memoir:start (written by `memoir setup claude-code`; edits between these lines are replaced) -->";
const END: &str = "<!-- memoir:end -->";

/// What CLAUDE.md tells the agent.
const SECTION: &str = "\
## Memory

This project's memory is memoir: plain markdown in git (`memory/`,
`MEMORY.md`), reviewed by people. Use the `memoir` MCP tools for it, not a
memory folder of your own.

- Before a task, call `context` with what you are about to do, or
  `recall` with a question. Notes in the results are unconfirmed.
- When the user states a preference or a decision, or you confirm a fact
  that will matter again (a command that works, a convention), call
  `remember` with the source that makes it trustworthy.
- Never remember secrets, guesses, one-off logs, or what the code and git
  history already say. Use `note` for an observation you are not sure of.
- If `remember` answers with a proposal (`decision`), a memory already
  says something else: tell the user; they decide with `memoir conflicts`.
";

/// A file setup would write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Relative to the project's root.
    pub path: &'static str,
    /// What it holds now (`None`: it does not exist).
    pub before: Option<String>,
    /// What it will hold.
    pub after: String,
}

/// Why setup cannot go on: a file of the user's is not what Claude Code reads.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A settings file is not the JSON Claude Code expects.
    #[error("{path}{}: {message}; nothing was written", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The file, relative to the root.
        path: &'static str,
        /// 1-based line, for a JSON syntax error.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
}

/// The files setup would change under `root`, each with its new content;
/// empty when everything is in place. Reads, never writes.
pub fn plan(root: &Path) -> Result<Vec<Planned>, SetupError> {
    let mut out = Vec::new();
    let mut planned = |path: &'static str, before: Option<String>, after: String| {
        let after = same_line_ends(before.as_deref(), after);
        if before.as_deref() != Some(after.as_str()) {
            out.push(Planned {
                path,
                before,
                after,
            });
        }
    };
    // Each merged with LF line ends, and written back with the file's own.
    let lf = |text: &Option<String>| text.as_deref().map(|t| t.replace("\r\n", "\n"));
    let before = read(root, SETTINGS)?;
    let after = merge_settings(lf(&before).as_deref(), &|command| {
        hook_script(root, command)
    })?;
    planned(SETTINGS, before, after);
    let before = read(root, MCP_JSON)?;
    let after = merge_mcp_json(lf(&before).as_deref())?;
    planned(MCP_JSON, before, after);
    let before = read(root, CLAUDE_MD)?;
    let after = merge_claude_md(lf(&before).as_deref());
    planned(CLAUDE_MD, before, after);
    Ok(out)
}

/// `after` with the line ends of `before`: a file whose lines end in CRLF
/// (written on Windows) keeps them, rather than gaining LF lines beside
/// its own.
fn same_line_ends(before: Option<&str>, after: String) -> String {
    match before {
        Some(b) if b.contains("\r\n") => after.replace("\r\n", "\n").replace('\n', "\r\n"),
        _ => after,
    }
}

/// The text of the script a hook command runs (its first word, with
/// `$CLAUDE_PROJECT_DIR` as `root`), if it is a small file.
fn hook_script(root: &Path, command: &str) -> Option<String> {
    let first = command.split_whitespace().next()?.trim_matches(['"', '\'']);
    let path = first
        .replace("${CLAUDE_PROJECT_DIR}", &root.to_string_lossy())
        .replace("$CLAUDE_PROJECT_DIR", &root.to_string_lossy());
    let path = root.join(path);
    let bytes = crate::fs::safe_file::read(&path, 64 * 1024).ok()??;
    String::from_utf8(bytes).ok()
}

/// Does a hook command run `memoir <sub> --from-hook`, itself or through
/// the script it names (`script`: its text)? Any path to memoir, any
/// other flags.
fn runs_memoir(command: &str, sub: &str, script: &dyn Fn(&str) -> Option<String>) -> bool {
    let runs = |line: &str| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let memoir =
            |w: &str| Path::new(w.trim_matches(['"', '\''])).file_name() == Some("memoir".as_ref());
        words.windows(2).any(|w| memoir(w[0]) && w[1] == sub) && words.contains(&"--from-hook")
    };
    runs(command) || script(command).is_some_and(|text| text.lines().any(runs))
}

/// Writes the planned files (each replaced whole, by a rename, and synced:
/// a settings file cut short by a crash would stop Claude Code).
pub fn apply(root: &Path, planned: &[Planned]) -> std::io::Result<()> {
    for p in planned {
        let path = root.join(p.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::fs::replace::replace(
            &path,
            p.after.as_bytes(),
            crate::fs::replace::Durability::Synced,
        )?;
    }
    Ok(())
}

/// A file's text, `None` if it does not exist.
fn read(root: &Path, rel: &str) -> Result<Option<String>, SetupError> {
    use crate::fs::safe_file::ReadError;
    /// Far more than any settings file or CLAUDE.md.
    const MAX_BYTES: u64 = 4 << 20;
    let path = root.join(rel);
    // Never blocking on a FIFO nor reading a device without end; a link is
    // followed as before (`CLAUDE.md` is often one to `AGENTS.md`).
    match crate::fs::safe_file::read_following(&path, MAX_BYTES) {
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| SetupError::Invalid {
                path: static_path(rel),
                line: None,
                message: "not UTF-8".into(),
            }),
        Ok(None) => Ok(None),
        Err(ReadError::Io(source)) => Err(SetupError::Io { path, source }),
        Err(e) => Err(SetupError::Invalid {
            path: static_path(rel),
            line: None,
            message: e.to_string(),
        }),
    }
}

/// The static name of one of setup's files.
fn static_path(rel: &str) -> &'static str {
    [SETTINGS, MCP_JSON, CLAUDE_MD]
        .into_iter()
        .find(|p| *p == rel)
        .unwrap_or(SETTINGS)
}

/// A JSON file's top-level object (a new one when the file is missing or empty).
fn object(path: &'static str, text: Option<&str>) -> Result<Map<String, Value>, SetupError> {
    let text = text.unwrap_or("");
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(SetupError::Invalid {
            path,
            line: None,
            message: "expected a JSON object".into(),
        }),
        Err(e) => Err(SetupError::Invalid {
            path,
            line: Some(e.line()),
            message: format!("not JSON ({e})"),
        }),
    }
}

/// The member `key` of `map` as an object or array, created when missing.
fn member<'a>(
    path: &'static str,
    map: &'a mut Map<String, Value>,
    key: &str,
    array: bool,
) -> Result<&'a mut Value, SetupError> {
    let v = map
        .entry(key.to_string())
        .or_insert_with(|| if array { json!([]) } else { json!({}) });
    if (array && !v.is_array()) || (!array && !v.is_object()) {
        return Err(SetupError::Invalid {
            path,
            line: None,
            message: format!(
                "`{key}` must be {}",
                if array { "an array" } else { "an object" }
            ),
        });
    }
    Ok(v)
}

/// JSON in the style of the file it replaces, `before`: a compact file
/// (one line) stays compact, an indented one keeps its indent (spaces or
/// tabs), and the final newline is kept or left out as it was; a new file
/// as Claude Code writes its own (two-space indent, a newline at the end).
fn styled(map: Map<String, Value>, before: Option<&str>) -> String {
    use serde::Serialize;
    let value = Value::Object(map);
    let before = before.filter(|b| !b.trim().is_empty());
    let newline = before.is_none_or(|b| b.ends_with('\n'));
    let mut s = match before {
        Some(b) if !b.trim().contains('\n') => serde_json::to_string(&value).unwrap_or_default(),
        _ => {
            // The first indented line's leading whitespace is the file's unit.
            let indent = before
                .and_then(|b| {
                    b.lines()
                        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
                        .find(|w| !w.is_empty())
                })
                .unwrap_or("  ");
            let mut out = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
            match value.serialize(&mut ser) {
                Ok(()) => String::from_utf8(out).unwrap_or_default(),
                Err(_) => serde_json::to_string_pretty(&value).unwrap_or_default(),
            }
        }
    };
    if newline {
        s.push('\n');
    }
    s
}

/// settings.json with memoir's hooks, permission and server approval added.
fn merge_settings(
    before: Option<&str>,
    script: &dyn Fn(&str) -> Option<String>,
) -> Result<String, SetupError> {
    let mut settings = object(SETTINGS, before)?;
    let unchanged = settings.clone();
    let hooks = member(SETTINGS, &mut settings, "hooks", false)?;
    for (event, command) in HOOKS {
        let Value::Object(hooks) = hooks else { break };
        let groups = member(SETTINGS, hooks, event, true)?;
        let sub = command.split_whitespace().nth(1).unwrap_or_default();
        let present = groups.as_array().into_iter().flatten().any(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|h| h.get("command").and_then(Value::as_str))
                .any(|c| runs_memoir(c, sub, script))
        });
        if !present {
            if let Value::Array(groups) = groups {
                groups.push(json!({ "hooks": [{ "type": "command", "command": command }] }));
            }
        }
    }
    let permissions = member(SETTINGS, &mut settings, "permissions", false)?;
    if let Value::Object(permissions) = permissions {
        add_string(member(SETTINGS, permissions, "allow", true)?, PERMISSION);
    }
    add_string(
        member(SETTINGS, &mut settings, "enabledMcpjsonServers", true)?,
        "memoir",
    );
    if settings == unchanged {
        return Ok(before.unwrap_or_default().to_string());
    }
    Ok(styled(settings, before))
}

/// Appends `item` to a JSON array that lacks it.
fn add_string(array: &mut Value, item: &str) {
    if let Value::Array(items) = array {
        if !items.iter().any(|i| i.as_str() == Some(item)) {
            items.push(json!(item));
        }
    }
}

/// .mcp.json with the memoir server, unless a server of that name is there.
fn merge_mcp_json(before: Option<&str>) -> Result<String, SetupError> {
    let mut file = object(MCP_JSON, before)?;
    let servers = member(MCP_JSON, &mut file, "mcpServers", false)?;
    let Value::Object(servers) = servers else {
        return Ok(before.unwrap_or_default().to_string());
    };
    if servers.contains_key("memoir") {
        return Ok(before.unwrap_or_default().to_string());
    }
    servers.insert(
        "memoir".into(),
        json!({ "type": "stdio", "command": "memoir", "args": ["mcp"] }),
    );
    Ok(styled(file, before))
}

/// CLAUDE.md with memoir's section: replaced between its markers, else appended.
fn merge_claude_md(before: Option<&str>) -> String {
    let block = format!("{START}\n{SECTION}{END}\n");
    let text = before.unwrap_or("");
    if let (Some(start), Some(end)) = (text.find(START), text.find(END)) {
        if start < end {
            let end = end + END.len();
            let end = end + usize::from(text[end..].starts_with('\n'));
            return format!("{}{block}{}", &text[..start], &text[end..]);
        }
    }
    if text.is_empty() {
        return block;
    }
    let sep = if text.ends_with("\n\n") {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    format!("{text}{sep}{block}")
}

/// The most a session note quotes of one request.
const REQUEST_CHARS: usize = 400;
/// The most requests a session note lists (the first and the last ones).
const REQUESTS: usize = 40;

/// The note of a Claude Code session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionNote {
    /// Where it came from (`Claude Code session 8f0c2a4e ended
    /// (prompt_input_exit)`), kept beside the text (the event's `reason`),
    /// not as its first line: a recall shows what was asked.
    pub source: String,
    /// What the user asked, a `- ` line each.
    pub text: String,
}

/// The note of a Claude Code session: what the user asked, from its
/// transcript (JSONL), bounded and with secrets redacted; `None` when the
/// user asked nothing. Lines that are not JSON, tool results, slash
/// commands and Claude Code's own meta messages are skipped.
pub fn session_note(transcript: &str, session: &str, reason: &str) -> Option<SessionNote> {
    let mut requests: Vec<String> = transcript
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|entry| entry.get("type").and_then(Value::as_str) == Some("user"))
        .filter(|entry| entry.get("isMeta").and_then(Value::as_bool) != Some(true))
        .filter_map(|entry| request_text(entry.get("message")?.get("content")?))
        .map(|text| one_line(&text))
        .filter(|text| !text.is_empty() && !text.starts_with('<') && !text.starts_with("Caveat:"))
        .collect();
    if requests.is_empty() {
        return None;
    }
    let total = requests.len();
    if total > REQUESTS {
        // The first requests set the task, the last ones say where it ended.
        let tail = requests.split_off(total - REQUESTS / 2);
        requests.truncate(REQUESTS / 2);
        requests.push(format!("… {} more …", total - REQUESTS));
        requests.extend(tail);
    }
    let session: String = session
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    let reason: String = reason
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(40)
        .collect();
    let source = format!(
        "Claude Code session {}ended{}",
        if session.is_empty() {
            String::new()
        } else {
            format!("{session} ")
        },
        if reason.is_empty() {
            String::new()
        } else {
            format!(" ({reason})")
        }
    );
    let lines: Vec<String> = requests.iter().map(|r| format!("- {r}")).collect();
    let note = crate::policy::secrets::redact(&lines.join("\n"));
    Some(SessionNote {
        source,
        text: cut(&note, crate::policy::MAX_NOTE_BYTES - 64),
    })
}

/// A user message's text: a string, or its text blocks (none if it only
/// carries tool results).
fn request_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join(" "))
        }
        _ => None,
    }
}

/// A request on one line, control characters out, at most REQUEST_CHARS.
/// Redacted first, as it was typed: a key pasted over several lines is
/// one only before they are joined, and a token cut at the limit no
/// longer looks like one (15 of its characters were noted).
fn one_line(text: &str) -> String {
    let text = crate::policy::secrets::redact(text);
    let flat: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if flat.chars().count() <= REQUEST_CHARS {
        return flat;
    }
    let mut s: String = flat.chars().take(REQUEST_CHARS).collect();
    s.push('…');
    s
}

/// `text` cut to at most `max` bytes on a line boundary.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').unwrap_or(end);
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second merge changes nothing; the user's own entries stay, in place.
    #[test]
    fn settings_merge_is_idempotent_and_keeps_the_users_entries() {
        let mine = r#"{
  "model": "opus",
  "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": "say done" }] }] },
  "permissions": { "allow": ["Bash(npm test:*)"], "deny": ["Read(.env)"] }
}"#;
        let once = merge_settings(Some(mine), &|_| None).unwrap();
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
        assert_eq!(
            v["permissions"]["allow"],
            json!(["Bash(npm test:*)", "mcp__memoir"])
        );
        assert_eq!(v["permissions"]["deny"], json!(["Read(.env)"]));
        assert_eq!(v["enabledMcpjsonServers"], json!(["memoir"]));
        for (event, command) in HOOKS {
            assert_eq!(v["hooks"][event][0]["hooks"][0]["command"], command);
        }
        assert!(
            once.find("\"model\"") < once.find("\"hooks\""),
            "keys keep their order"
        );
        assert_eq!(merge_settings(Some(&once), &|_| None).unwrap(), once);
    }

    /// A hook the user pointed at memoir already (their own budget) is kept as it is.
    #[test]
    fn an_existing_memoir_hook_is_not_doubled() {
        let mine = r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"memoir context --from-hook --budget 3000"}]}]}}"#;
        let v: Value =
            serde_json::from_str(&merge_settings(Some(mine), &|_| None).unwrap()).unwrap();
        assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 1);
        assert_eq!(
            v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "memoir context --from-hook --budget 3000"
        );
        // Another path to memoir, or a script that runs it, is memoir's too.
        let other = r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"/usr/local/bin/memoir context --from-hook"}]}],
            "SessionStart":[{"hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/hooks/start.sh"}]}]}}"#;
        let script = |c: &str| {
            c.contains("start.sh")
                .then(|| "#!/bin/sh\nexec memoir context --from-hook\n".to_string())
        };
        let v: Value =
            serde_json::from_str(&merge_settings(Some(other), &script).unwrap()).unwrap();
        for event in ["UserPromptSubmit", "SessionStart"] {
            assert_eq!(
                v["hooks"][event].as_array().unwrap().len(),
                1,
                "{event}: {v}"
            );
        }
        assert_eq!(v["hooks"]["SessionEnd"].as_array().unwrap().len(), 1);
    }

    /// Broken settings are refused with their line; nothing is planned.
    #[test]
    fn broken_settings_are_refused() {
        let err = merge_settings(Some("{\n  \"hooks\": [,]\n}"), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(".claude/settings.json:2: not JSON"),
            "{err}"
        );
        let err = merge_settings(Some(r#"{"hooks": []}"#), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`hooks` must be an object"), "{err}");
    }

    /// .mcp.json keeps a server the user named memoir.
    #[test]
    fn mcp_json_adds_the_server_once() {
        let added = merge_mcp_json(Some(r#"{"mcpServers":{"db":{"command":"pg-mcp"}}}"#)).unwrap();
        let v: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(v["mcpServers"]["db"]["command"], "pg-mcp");
        assert_eq!(v["mcpServers"]["memoir"]["args"], json!(["mcp"]));
        assert_eq!(merge_mcp_json(Some(&added)).unwrap(), added);
        let mine = r#"{"mcpServers":{"memoir":{"command":"/opt/memoir","args":["mcp"]}}}"#;
        assert_eq!(merge_mcp_json(Some(mine)).unwrap(), mine);
    }

    /// CLAUDE.md: appended after the user's text, then replaced in place.
    #[test]
    fn claude_md_section_is_appended_then_replaced() {
        let once = merge_claude_md(Some("# Project\n\nUse pnpm."));
        assert!(once.starts_with("# Project\n\nUse pnpm.\n\n<!-- memoir:start"));
        assert_eq!(merge_claude_md(Some(&once)), once);
        let edited = once.replace("## Memory", "## Old memory") + "\nMore of mine.\n";
        let again = merge_claude_md(Some(&edited));
        assert!(again.contains("## Memory") && !again.contains("## Old memory"));
        assert!(again.ends_with("\nMore of mine.\n"));
    }

    /// The note lists the user's requests only, redacted and bounded.
    #[test]
    fn a_session_note_lists_what_the_user_asked() {
        let secret = concat!("ghp_", "0123456789abcdefghijABCDEFGHIJ012345");
        let transcript = [
            r#"{"type":"user","message":{"role":"user","content":"Fix the flaky payment test"},"sessionId":"abc"}"#.to_string(),
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Looking"}]}}"#.into(),
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}"#.into(),
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: meta"}}"#.into(),
            r#"{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}"#.into(),
            format!(r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"use token {secret}\nthen push"}}]}}}}"#),
            "not json".into(),
        ]
        .join("\n");
        let SessionNote { source, text: note } =
            session_note(&transcript, "8f0c2a4e-demo", "prompt_input_exit").unwrap();
        assert_eq!(
            source,
            "Claude Code session 8f0c2a4e ended (prompt_input_exit)"
        );
        assert_eq!(note.lines().next().unwrap(), "- Fix the flaky payment test");
        assert_eq!(note.lines().count(), 2, "{note}");
        assert!(note.contains("- Fix the flaky payment test"));
        assert!(
            !note.contains(secret) && note.contains("then push"),
            "{note}"
        );
        assert_eq!(session_note("{\"type\":\"assistant\"}", "x", "y"), None);
        // A token where the request is cut, and a key pasted over lines:
        // redacted whole, before the request is made one cut line.
        let at_the_cut = format!("{} {secret}", "y".repeat(380));
        let key_data =
            "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0";
        let key = format!(
            "key\n-----BEGIN RSA PRIVATE KEY-----\n{key_data}\n-----END RSA PRIVATE KEY-----"
        );
        let transcript: String = [at_the_cut, key]
            .iter()
            .map(|t| {
                format!(
                    "{}\n",
                    serde_json::json!({"type": "user", "message": {"role": "user", "content": t}})
                )
            })
            .collect();
        let note = session_note(&transcript, "s", "other").unwrap().text;
        assert!(
            !note.contains("ghp_") && !note.contains(&key_data[..12]),
            "{note}"
        );
        let long: String = (0..500)
            .map(|i| {
                format!(
                    "{{\"type\":\"user\",\"message\":{{\"content\":\"request {i} {}\"}}}}\n",
                    "x".repeat(1000)
                )
            })
            .collect();
        let note = session_note(&long, "s", "other").unwrap().text;
        assert!(note.len() < crate::policy::MAX_NOTE_BYTES);
        assert!(
            note.contains("request 0 ")
                && note.contains("request 499 ")
                && note.contains("… 460 more …")
        );
    }
}
