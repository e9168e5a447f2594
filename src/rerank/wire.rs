//! The JSON both transports speak, the rerank shape llama.cpp's server,
//! vLLM, LocalAI, Jina and Cohere share: the request `{"model"?: M,
//! "query": Q, "documents": [texts...], "top_n": N}`, the answer
//! `{"results": [{"index": i, "relevance_score": s}, ...]}` (other keys,
//! `document` among them, ignored), or the top-level array
//! `[{"index": i, "score": s}, ...]` Text Embeddings Inference answers
//! (its own request names the texts `texts`: a `command` renames it).
//!
//! Servers do not all keep the documents' order, sort by score, or honour
//! `top_n`, so an answer is read by `index` alone: each document needs
//! exactly one finite score, and anything else is refused rather than
//! guessed at (a document without a score would otherwise rank as if it
//! had been judged).

use super::RerankError;
use crate::service::{quote, MAX_ANSWER_BYTES};
use serde::Deserialize;

/// The request body for scoring `documents` against `query`: `top_n` asks
/// for every document's score (a server that honours it would otherwise
/// drop some); `model` only when the config names one.
pub(crate) fn request(model: Option<&str>, query: &str, documents: &[String]) -> Vec<u8> {
    let mut body = serde_json::json!({
        "query": query,
        "documents": documents,
        "top_n": documents.len(),
    });
    if let (Some(model), Some(fields)) = (model, body.as_object_mut()) {
        fields.insert("model".into(), model.into());
    }
    // Serializing strings into a JSON value cannot fail.
    serde_json::to_vec(&body).unwrap_or_default()
}

#[derive(Deserialize)]
struct Answer {
    results: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    // Text Embeddings Inference says `score`; both in one item is an error.
    #[serde(alias = "score")]
    relevance_score: f64,
}

/// The scores in an answer to a request of `n` documents, in the
/// documents' order, checked.
pub(crate) fn parse_answer(bytes: &[u8], n: usize) -> Result<Vec<f64>, RerankError> {
    // The transports cap what they read; this holds for any bytes given.
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(RerankError::BadResponse(format!(
            "more than {} MiB",
            MAX_ANSWER_BYTES >> 20
        )));
    }
    let not_json = |e: serde_json::Error| {
        RerankError::BadResponse(format!(
            "not the expected JSON ({})",
            quote(&unquoted(&e.to_string()), 120, None)
        ))
    };
    let tei = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    let items: Vec<Item> = if tei {
        serde_json::from_slice(bytes).map_err(not_json)?
    } else {
        serde_json::from_slice::<Answer>(bytes)
            .map_err(not_json)?
            .results
    };
    let mut scores: Vec<Option<f64>> = vec![None; n];
    for item in items {
        let Some(slot) = scores.get_mut(item.index) else {
            return Err(RerankError::BadResponse(format!(
                "a score for index {} of {n} documents",
                item.index
            )));
        };
        if slot.is_some() {
            return Err(RerankError::BadResponse(format!(
                "two scores for index {}",
                item.index
            )));
        }
        if !item.relevance_score.is_finite() {
            return Err(RerankError::BadResponse(
                "a score that is not a finite number".into(),
            ));
        }
        *slot = Some(item.relevance_score);
    }
    scores
        .iter()
        .enumerate()
        .map(|(at, s)| {
            s.ok_or_else(|| {
                RerankError::BadResponse(format!("no score for index {at} of {n} documents"))
            })
        })
        .collect()
}

/// A JSON error's message with each string it quotes blanked: a server
/// may echo the documents, and an error must not carry them.
fn unquoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut parts = message.split('"');
    out.push_str(parts.next().unwrap_or(""));
    // Odd pieces are inside quotes (serde_json quotes without escaping
    // the text's own quotes, so an odd one out leaves the rest blanked).
    for (at, part) in parts.enumerate() {
        out.push_str(if at % 2 == 0 { "\"…" } else { "\"" });
        if at % 2 == 1 {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(json: &str, n: usize) -> String {
        match parse_answer(json.as_bytes(), n) {
            Err(RerankError::BadResponse(m)) => m,
            other => panic!("{json}: {other:?}"),
        }
    }

    #[test]
    fn rerank_request_is_the_common_shape() {
        let docs: Vec<String> = vec!["a \"b\"".into(), "数据".into()];
        let v: serde_json::Value =
            serde_json::from_slice(&request(Some("bge"), "q", &docs)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"model": "bge", "query": "q", "documents": ["a \"b\"", "数据"], "top_n": 2})
        );
        // No model configured, none sent.
        let v: serde_json::Value = serde_json::from_slice(&request(None, "q", &docs)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"query": "q", "documents": ["a \"b\"", "数据"], "top_n": 2})
        );
    }

    #[test]
    fn rerank_answers_are_read_by_index_whatever_the_order() {
        // Sorted by score, as Cohere, Jina and llama.cpp answer, with the
        // documents echoed and keys of their own.
        let sorted = r#"{"id":"x","model":"m","results":[
            {"index":2,"relevance_score":0.9,"document":{"text":"c"}},
            {"index":0,"relevance_score":0.5,"document":"a"},
            {"index":1,"relevance_score":-3.25}],"usage":{"total_tokens":9}}"#;
        assert_eq!(
            parse_answer(sorted.as_bytes(), 3).unwrap(),
            vec![0.5, -3.25, 0.9]
        );
        // Text Embeddings Inference: a top-level array, `score`.
        let tei = r#" [{"index":1,"score":0.25},{"index":0,"score":1e-3,"text":"a"}]"#;
        assert_eq!(parse_answer(tei.as_bytes(), 2).unwrap(), vec![1e-3, 0.25]);
        assert_eq!(parse_answer(b"[]", 0).unwrap(), Vec::<f64>::new());
        assert_eq!(
            parse_answer(br#"{"results":[]}"#, 0).unwrap(),
            Vec::<f64>::new()
        );
    }

    #[test]
    fn rerank_answers_are_checked() {
        // A server that honoured a smaller top_n, or lost one: no default.
        assert!(bad(r#"{"results":[{"index":1,"relevance_score":0.5}]}"#, 2)
            .contains("no score for index 0 of 2"));
        assert!(bad(
            r#"{"results":[{"index":0,"relevance_score":0.5},{"index":0,"relevance_score":0.4}]}"#,
            2
        )
        .contains("two scores for index 0"));
        assert!(bad(r#"{"results":[{"index":2,"relevance_score":0.5}]}"#, 2)
            .contains("index 2 of 2 documents"));
        assert!(bad(r#"[{"index":-1,"score":0.5}]"#, 1).contains("JSON"));
        assert!(bad(r#"[{"score":0.5}]"#, 1).contains("JSON"));
        assert!(bad(r#"[{"index":0}]"#, 1).contains("JSON"));
        assert!(bad(r#"[{"index":0,"score":"high"}]"#, 1).contains("JSON"));
        assert!(bad(r#"[{"index":0,"score":null}]"#, 1).contains("JSON"));
        // Not finite: NaN is no JSON, and 1e999 is no f64.
        assert!(bad(r#"[{"index":0,"score":NaN}]"#, 1).contains("JSON"));
        let e = bad(r#"[{"index":0,"score":1e999}]"#, 1);
        assert!(e.contains("JSON") || e.contains("finite"), "{e}");
        assert!(bad(r#"{"error":{"message":"no"}}"#, 1).contains("JSON"));
        assert!(bad("<html>", 1).contains("JSON"));
        assert!(bad("", 1).contains("JSON"));
        // Both names in one item is ambiguous.
        assert!(bad(r#"[{"index":0,"score":0.5,"relevance_score":0.4}]"#, 1).contains("JSON"));
    }

    #[test]
    fn rerank_huge_answers_are_refused() {
        // Many results for few documents end at the first stray index.
        let many: Vec<String> = (0..100_000)
            .map(|i| format!(r#"{{"index":{i},"relevance_score":0.5}}"#))
            .collect();
        let json = format!(r#"{{"results":[{}]}}"#, many.join(","));
        assert!(bad(&json, 3).contains("index 3 of 3"));
        // Past the cap, not even parsed.
        let mut huge = br#"{"results":[]}"#.to_vec();
        huge.resize(MAX_ANSWER_BYTES + 1, b' ');
        match parse_answer(&huge, 0) {
            Err(RerankError::BadResponse(m)) => assert!(m.contains("more than 64 MiB"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rerank_error_messages_hold_no_text_sent() {
        let m = bad(
            r#"{"results":[{"index":0,"relevance_score":"secret document text"}]}"#,
            1,
        );
        assert!(!m.contains("secret document"), "{m}");
        assert!(m.contains(r#"string "…", expected f64"#), "{m}");
    }
}
