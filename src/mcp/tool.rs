//! A tool as MCP describes it: its parameters, their JSON Schema, and the
//! check of a call's arguments against them.
//!
//! The parameters are declared once, as data: the schema a client lists
//! and the validation of what it sends come from the same declaration, so
//! they cannot disagree.

use serde_json::{json, Map, Value};

/// What a parameter holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A string; `non_empty` refuses `""`.
    Text {
        /// `""` is refused.
        non_empty: bool,
    },
    /// `true` or `false`.
    Flag,
    /// A number within bounds.
    Number {
        /// Least allowed.
        min: f64,
        /// Most allowed.
        max: f64,
    },
    /// A whole number within bounds.
    Integer {
        /// Least allowed.
        min: u64,
        /// Most allowed.
        max: u64,
    },
    /// A list of strings.
    Texts,
    /// One of these strings.
    OneOf(Vec<String>),
}

/// One named parameter of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The argument's name.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Must be given.
    pub required: bool,
    /// What it means, for the model.
    pub description: &'static str,
}

/// What a tool does to the store, as MCP's annotations say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only.
    ReadOnly,
    /// Adds to the store; repeating the same call changes nothing more.
    Additive,
    /// Adds to the store each time it is called (two calls, two entries).
    Appends,
    /// Removes or overwrites.
    Destructive,
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Its name.
    pub name: &'static str,
    /// A human title.
    pub title: &'static str,
    /// What it does and when to use it, for the model.
    pub description: &'static str,
    /// Its parameters.
    pub params: Vec<Param>,
    /// What it does to the store.
    pub effect: Effect,
    /// The JSON Schema of what a successful call returns as
    /// `structuredContent`: an object schema (`properties`, `required`).
    /// A failed call's document, with its `error`, is allowed beside it
    /// (see [`ToolSpec::output_schema`]).
    pub output: Value,
}

/// A checked argument's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A string (of `Text` or `OneOf`).
    Text(String),
    /// A flag.
    Flag(bool),
    /// A number (of `Number` or `Integer`).
    Number(f64),
    /// A list of strings.
    Texts(Vec<String>),
}

/// A call's arguments, checked: in the order of the tool's parameters.
pub type Arguments = Vec<(&'static str, Arg)>;

impl ToolSpec {
    /// The tool as `tools/list` gives it.
    pub fn to_json(&self) -> Value {
        let mut properties = Map::new();
        for p in &self.params {
            let mut schema = match &p.kind {
                Kind::Text { non_empty: false } => json!({ "type": "string" }),
                Kind::Text { non_empty: true } => json!({ "type": "string", "minLength": 1 }),
                Kind::Flag => json!({ "type": "boolean" }),
                Kind::Number { min, max } => {
                    json!({ "type": "number", "minimum": min, "maximum": max })
                }
                Kind::Integer { min, max } => {
                    json!({ "type": "integer", "minimum": min, "maximum": max })
                }
                Kind::Texts => json!({ "type": "array", "items": { "type": "string" } }),
                Kind::OneOf(values) => json!({ "type": "string", "enum": values }),
            };
            schema["description"] = json!(p.description);
            properties.insert(p.name.to_string(), schema);
        }
        let required: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name)
            .collect();
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            },
            "outputSchema": self.output_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.effect == Effect::ReadOnly,
                "destructiveHint": self.effect == Effect::Destructive,
                "idempotentHint": matches!(self.effect, Effect::ReadOnly | Effect::Additive),
                "openWorldHint": false,
            },
        })
    }

    /// The tool's `outputSchema`: its success document, or a failed call's
    /// (one with an `error`). A failed call is a result with `isError`
    /// that still carries its document (a proposal's diff, a refusal's
    /// rule), and some clients validate every `structuredContent` they
    /// get, an error's too: a schema of the success alone would make them
    /// reject the very answers a model must read.
    pub fn output_schema(&self) -> Value {
        let mut properties = match self.output.get("properties") {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        properties.insert("error".into(), error_schema());
        let required = self.output.get("required").cloned().unwrap_or(json!([]));
        json!({
            "type": "object",
            "properties": properties,
            "anyOf": [{ "required": required }, { "required": ["error"] }],
        })
    }

    /// Checks a call's arguments: every required one given, none unknown,
    /// each of its kind. The error names the argument, never its value (a
    /// model may have pasted a secret into it).
    pub fn check(&self, arguments: Option<&Value>) -> Result<Arguments, String> {
        let empty = Map::new();
        let given = match arguments {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(m)) => m,
            Some(_) => return Err("arguments must be an object".into()),
        };
        if let Some(unknown) = given
            .keys()
            .find(|k| !self.params.iter().any(|p| p.name == k.as_str()))
        {
            let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
            return Err(format!(
                "unknown argument `{}` (expected: {})",
                printable_name(unknown),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
        let mut out = Vec::new();
        for p in &self.params {
            match given.get(p.name) {
                None | Some(Value::Null) if p.required => {
                    return Err(format!("`{}` is required", p.name))
                }
                None | Some(Value::Null) => {}
                Some(v) => out.push((p.name, value(p, v)?)),
            }
        }
        Ok(out)
    }
}

/// A failed call's `error`, as every memoir command gives it in JSON
/// (`docs/cli.md`, exit codes): a code name, a message, the exit code,
/// and for a refusal the rule and what was refused.
fn error_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": { "type": "string" },
            "message": { "type": "string" },
            "exit": { "type": "integer" },
            "rule": { "type": "string" },
            "path": { "type": "string" },
            "line": { "type": "integer" },
        },
        "required": ["code", "message", "exit"],
    })
}

/// One argument's value, if it is of the parameter's kind.
fn value(p: &Param, v: &Value) -> Result<Arg, String> {
    let wrong = |expected: &str| format!("`{}` must be {expected}", p.name);
    match &p.kind {
        Kind::Text { non_empty } => match v.as_str() {
            Some("") if *non_empty => Err(wrong("a non-empty string")),
            Some(s) => Ok(Arg::Text(s.to_string())),
            None => Err(wrong("a string")),
        },
        Kind::Flag => v
            .as_bool()
            .map(Arg::Flag)
            .ok_or_else(|| wrong("true or false")),
        Kind::Number { min, max } => match v.as_f64() {
            Some(n) if (*min..=*max).contains(&n) => Ok(Arg::Number(n)),
            _ => Err(wrong(&format!("a number from {min} to {max}"))),
        },
        Kind::Integer { min, max } => match v.as_u64() {
            Some(n) if (*min..=*max).contains(&n) => Ok(Arg::Number(n as f64)),
            _ => Err(wrong(&format!("a whole number from {min} to {max}"))),
        },
        Kind::Texts => match v.as_array() {
            Some(items) if items.iter().all(Value::is_string) => Ok(Arg::Texts(
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(String::from))
                    .collect(),
            )),
            _ => Err(wrong("a list of strings")),
        },
        Kind::OneOf(values) => match v.as_str() {
            Some(s) if values.iter().any(|x| x == s) => Ok(Arg::Text(s.to_string())),
            _ => Err(wrong(&format!("one of {}", values.join(", ")))),
        },
    }
}

/// An unknown argument's name as the error shows it: short and printable
/// (it is the client's text, not memoir's), and masked as any argument is
/// (`policy::mask`: a token sent as a name is not quoted back).
fn printable_name(name: &str) -> String {
    let masked = crate::policy::mask::masked(name, &[name]);
    let shown: String = masked
        .chars()
        .filter(|c| !c.is_control())
        .take(40)
        .collect();
    if shown.chars().count() < masked.chars().count() {
        format!("{shown}…")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ToolSpec {
        ToolSpec {
            name: "t",
            title: "T",
            description: "d",
            effect: Effect::ReadOnly,
            output: json!({
                "type": "object",
                "properties": { "hits": { "type": "array" } },
                "required": ["hits"],
            }),
            params: vec![
                Param {
                    name: "query",
                    kind: Kind::Text { non_empty: true },
                    required: true,
                    description: "q",
                },
                Param {
                    name: "limit",
                    kind: Kind::Integer { min: 1, max: 50 },
                    required: false,
                    description: "n",
                },
                Param {
                    name: "scope",
                    kind: Kind::OneOf(vec!["user".into(), "project".into()]),
                    required: false,
                    description: "s",
                },
            ],
        }
    }

    /// Given arguments come back typed, in the parameters' order.
    #[test]
    fn checks_arguments() {
        let args = json!({ "scope": "user", "query": "tests" });
        assert_eq!(
            spec().check(Some(&args)).unwrap(),
            vec![
                ("query", Arg::Text("tests".into())),
                ("scope", Arg::Text("user".into()))
            ]
        );
    }

    /// Each kind of bad call gets an error naming the argument.
    #[test]
    fn refuses_bad_arguments() {
        let s = spec();
        let cases = [
            (json!({}), "`query` is required"),
            (json!({ "query": "" }), "`query` must be a non-empty string"),
            (json!({ "query": 3 }), "`query` must be a string"),
            (
                json!({ "query": "x", "limit": 0 }),
                "`limit` must be a whole number from 1 to 50",
            ),
            (
                json!({ "query": "x", "limit": 2.5 }),
                "`limit` must be a whole number",
            ),
            (
                json!({ "query": "x", "scope": "team" }),
                "`scope` must be one of user, project",
            ),
            (
                json!({ "query": "x", "sk-live": 1 }),
                "unknown argument `sk-live`",
            ),
            (json!([1]), "arguments must be an object"),
        ];
        for (args, expected) in cases {
            let err = s.check(Some(&args)).unwrap_err();
            assert!(err.starts_with(expected), "{args}: {err}");
        }
    }

    /// The schema lists the parameters, the required ones, and no others.
    #[test]
    fn schema_matches_parameters() {
        let j = spec().to_json();
        assert_eq!(j["inputSchema"]["required"], json!(["query"]));
        assert_eq!(j["inputSchema"]["additionalProperties"], json!(false));
        assert_eq!(
            j["inputSchema"]["properties"]["scope"]["enum"],
            json!(["user", "project"])
        );
        assert_eq!(j["annotations"]["readOnlyHint"], json!(true));
    }

    /// The output schema is the success document's, or a failure's.
    #[test]
    fn output_schema_allows_a_failure_beside_the_result() {
        let j = spec().to_json();
        let schema = &j["outputSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["anyOf"],
            json!([{ "required": ["hits"] }, { "required": ["error"] }])
        );
        assert_eq!(schema["properties"]["hits"]["type"], "array");
        assert_eq!(
            schema["properties"]["error"]["required"],
            json!(["code", "message", "exit"])
        );
    }
}
