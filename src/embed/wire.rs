//! The JSON both transports speak, OpenAI's embeddings shape: the request
//! `{"model": M, "input": [texts...]}`, the answer
//! `{"data": [{"index": i, "embedding": [numbers...]}, ...]}` (other keys
//! ignored), and the checks every answer passes before it is used.

use super::{quote, EmbedError, MAX_DIM};
use serde::Deserialize;

/// The request body for `texts`.
pub(crate) fn request(model: &str, texts: &[String]) -> Vec<u8> {
    // Serializing strings into a JSON value cannot fail.
    serde_json::to_vec(&serde_json::json!({"model": model, "input": texts})).unwrap_or_default()
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: Option<usize>,
    embedding: Vec<f32>,
}

/// The vectors in an answer to a request of `n` texts, in the texts'
/// order (by `index`; in the order given where no item has one), checked.
pub(crate) fn parse_answer(bytes: &[u8], n: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    let answer: Answer = serde_json::from_slice(bytes).map_err(|e| {
        EmbedError::BadResponse(format!(
            "not the expected JSON ({})",
            quote(&e.to_string(), 120, None)
        ))
    })?;
    let mut items = answer.data;
    if items.len() != n {
        return Err(EmbedError::BadResponse(format!(
            "{} vectors for {n} texts",
            items.len()
        )));
    }
    match items.iter().filter(|i| i.index.is_some()).count() {
        0 => {}
        k if k == n => {
            items.sort_by_key(|i| i.index);
            if items.iter().enumerate().any(|(at, i)| i.index != Some(at)) {
                return Err(EmbedError::BadResponse(format!(
                    "the indexes are not 0 to {} each once",
                    n.saturating_sub(1)
                )));
            }
        }
        _ => {
            return Err(EmbedError::BadResponse(
                "some vectors have an index and some not".into(),
            ))
        }
    }
    let vectors: Vec<Vec<f32>> = items.into_iter().map(|i| i.embedding).collect();
    check_vectors(n, &vectors)?;
    Ok(vectors)
}

/// Checks an answer to `n` texts: one vector each, all of one dimension
/// between 1 and [`MAX_DIM`], every number finite. Returns the dimension
/// (0 for no texts).
pub fn check_vectors(n: usize, vectors: &[Vec<f32>]) -> Result<usize, EmbedError> {
    if vectors.len() != n {
        return Err(EmbedError::BadResponse(format!(
            "{} vectors for {n} texts",
            vectors.len()
        )));
    }
    let Some(first) = vectors.first() else {
        return Ok(0);
    };
    let dim = first.len();
    if !(1..=MAX_DIM).contains(&dim) {
        return Err(EmbedError::BadResponse(format!(
            "vectors of {dim} dimensions (1 to {MAX_DIM} are usable)"
        )));
    }
    if let Some(other) = vectors.iter().find(|v| v.len() != dim) {
        return Err(EmbedError::BadResponse(format!(
            "vectors of {dim} and of {} dimensions in one answer",
            other.len()
        )));
    }
    if vectors.iter().flatten().any(|x| !x.is_finite()) {
        // 1e39 is valid JSON but no f32: it reads as infinity.
        return Err(EmbedError::BadResponse(
            "a number that is not a finite 32-bit float".into(),
        ));
    }
    Ok(dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(json: &str, n: usize) -> String {
        match parse_answer(json.as_bytes(), n) {
            Err(EmbedError::BadResponse(m)) => m,
            other => panic!("{json}: {other:?}"),
        }
    }

    #[test]
    fn embed_request_is_openai_shaped() {
        let body = request("m", &["a \"b\"".into(), "数据".into()]);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"model": "m", "input": ["a \"b\"", "数据"]})
        );
    }

    #[test]
    fn embed_answers_are_ordered_by_index_and_checked() {
        let json = r#"{"object":"list","data":[
            {"object":"embedding","index":1,"embedding":[0,1]},
            {"object":"embedding","index":0,"embedding":[1.5,-2e-3]}],"usage":{}}"#;
        assert_eq!(
            parse_answer(json.as_bytes(), 2).unwrap(),
            vec![vec![1.5, -2e-3], vec![0.0, 1.0]]
        );
        let no_index = r#"{"data":[{"embedding":[1]},{"embedding":[2]}]}"#;
        assert_eq!(
            parse_answer(no_index.as_bytes(), 2).unwrap(),
            vec![vec![1.0], vec![2.0]]
        );
        assert!(bad(r#"{"data":[{"index":0,"embedding":[1]}]}"#, 2).contains("1 vectors for 2"));
        assert!(bad(r#"{"error":{"message":"no"}}"#, 1).contains("JSON"));
        assert!(bad("<html>", 1).contains("JSON"));
        assert!(bad(r#"{"data":[{"index":0,"embedding":"AAAA"}]}"#, 1).contains("JSON"));
        assert!(bad(
            r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}"#,
            2
        )
        .contains("indexes"));
        assert!(bad(
            r#"{"data":[{"index":0,"embedding":[1]},{"embedding":[2]}]}"#,
            2
        )
        .contains("some vectors"));
        assert!(bad(
            r#"{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[2]}]}"#,
            2
        )
        .contains("of 2 and of 1"));
        assert!(bad(r#"{"data":[{"index":0,"embedding":[]}]}"#, 1).contains("0 dimensions"));
        assert!(bad(r#"{"data":[{"index":0,"embedding":[1e39]}]}"#, 1).contains("finite"));
        let wide = format!(
            r#"{{"data":[{{"index":0,"embedding":[{}]}}]}}"#,
            vec!["0.5"; MAX_DIM + 1].join(",")
        );
        assert!(bad(&wide, 1).contains("8193 dimensions"));
    }
}
