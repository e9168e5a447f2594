//! What an extractor reads and prints: the pending notes as JSON lines,
//! and its answers, one a line, checked into `remember` requests as
//! `remember` checks its flags (protocol in docs/cli.md).

use super::ExtractError;
use crate::model::event::Event;
use crate::model::key::Key;
use crate::model::memory::MemoryType;
use crate::model::remember::Remember;
use crate::model::time::Date;
use serde_json::json;
use std::collections::HashSet;

/// One line of an extractor's output: a candidate memory, or the notes it
/// read and found nothing in worth remembering.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Answer {
    Candidate(Box<Candidate>),
    Consumed { consumed: Vec<String> },
}

/// A candidate memory an extractor proposes.
#[derive(serde::Deserialize)]
struct Candidate {
    key: String,
    description: String,
    source: String,
    #[serde(rename = "type", default = "default_type")]
    kind: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default = "default_confidence")]
    confidence: f64,
    #[serde(default)]
    body: String,
    #[serde(default)]
    review_by: Option<String>,
    #[serde(default)]
    expires: Option<String>,
    /// The notes it was drawn from: consumed.
    #[serde(default)]
    notes: Vec<String>,
}

/// A candidate's type when it names none.
fn default_type() -> String {
    "project".into()
}

/// A candidate's confidence when it gives none.
fn default_confidence() -> f64 {
    0.8
}

/// The notes as the extractor reads them: one JSON object a line.
pub(super) fn input(notes: &[Event]) -> String {
    let mut input = String::new();
    for n in notes {
        input.push_str(
            &json!({"id": n.id, "time": n.time.millis(), "actor": n.actor, "source": n.reason, "text": n.body})
                .to_string(),
        );
        input.push('\n');
    }
    input
}

/// An error in line `n` (1-based) of the extractor's output.
fn at_line(n: usize, message: impl std::fmt::Display) -> ExtractError {
    ExtractError::Line {
        line: n,
        message: message.to_string(),
    }
}

/// Parses the extractor's answers, one a line (blank lines skipped): the
/// candidates as requests, and the notes answered for, each once, every
/// one among those it was `given`.
pub(super) fn answers(
    text: &str,
    given: &HashSet<&str>,
) -> Result<(Vec<Remember>, Vec<String>), ExtractError> {
    let mut consumed: Vec<String> = Vec::new();
    let mut candidates = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let n = i + 1;
        let answer = answer(line, n)?;
        let answered = match &answer {
            Answer::Candidate(c) => &c.notes,
            Answer::Consumed { consumed } => consumed,
        };
        for id in answered {
            if !given.contains(id.as_str()) {
                return Err(at_line(n, format!("`{id}` is not a note it was given")));
            }
            if !consumed.contains(id) {
                consumed.push(id.clone());
            }
        }
        if let Answer::Candidate(c) = answer {
            candidates.push(request(*c, n)?);
        }
    }
    Ok((candidates, consumed))
}

/// Line `n` of the extractor's output as an answer.
fn answer(line: &str, n: usize) -> Result<Answer, ExtractError> {
    // A candidate's own errors (a missing field) are worth naming.
    serde_json::from_str(line).map_err(|e| {
        at_line(n, match serde_json::from_str::<Candidate>(line) {
            Err(c) if line.contains("\"key\"") => c.to_string(),
            _ if e.is_data() => "neither a candidate ({\"key\", \"description\", \"source\", …}) nor {\"consumed\": [note ids]}".into(),
            _ => e.to_string(),
        })
    })
}

/// A candidate (from line `n`) as a request, its fields checked as
/// `remember` checks its flags.
fn request(c: Candidate, n: usize) -> Result<Remember, ExtractError> {
    let (key, name) = Key::parse(&c.key).map_err(|e| ExtractError::Key {
        key: c.key.clone(),
        message: e.to_string(),
    })?;
    let kind = MemoryType::parse(&c.kind).ok_or_else(|| ExtractError::Type {
        line: n,
        kind: c.kind.clone(),
    })?;
    if !(0.0..=1.0).contains(&c.confidence) {
        return Err(at_line(n, "`confidence` must be between 0 and 1"));
    }
    let date = |d: &Option<String>| {
        d.as_deref()
            .map(Date::parse)
            .transpose()
            .map_err(|e| at_line(n, e))
    };
    Ok(Remember {
        key,
        name,
        description: c.description,
        kind,
        tags: c.tags,
        source: c.source,
        confidence: c.confidence,
        body: c.body,
        review_by: date(&c.review_by)?,
        expires: date(&c.expires)?,
        collision: Default::default(),
        expect: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given() -> HashSet<&'static str> {
        ["n1", "n2"].into_iter().collect()
    }

    #[test]
    fn a_candidate_takes_the_defaults_and_its_notes_are_consumed_once() {
        let text = concat!(
            r#"{"key":"project/db","description":"d","source":"s","notes":["n1"]}"#,
            "\n\n",
            r#"{"consumed":["n1","n2"]}"#,
        );
        let (candidates, consumed) = answers(text, &given()).unwrap();
        assert_eq!(candidates.len(), 1);
        assert_eq!(candidates[0].kind, MemoryType::Project);
        assert_eq!(candidates[0].confidence, 0.8);
        assert_eq!(consumed, ["n1", "n2"]);
    }

    #[test]
    fn each_bad_answer_names_its_line() {
        let bad = |text: &str| answers(text, &given()).unwrap_err().to_string();
        assert_eq!(
            bad("\n{\"consumed\":[\"n9\"]}"),
            "extractor output line 2: `n9` is not a note it was given"
        );
        assert!(bad("[1]").starts_with("extractor output line 1: neither a candidate"));
        assert!(bad(r#"{"key":"project/x"}"#).contains("missing field `description`"));
        let typed = r#"{"key":"project/x","description":"d","source":"s","type":"nope"}"#;
        assert!(matches!(
            answers(typed, &given()),
            Err(ExtractError::Type { line: 1, .. })
        ));
        let sure = r#"{"key":"project/x","description":"d","source":"s","confidence":2}"#;
        assert_eq!(
            bad(sure),
            "extractor output line 1: `confidence` must be between 0 and 1"
        );
    }
}
