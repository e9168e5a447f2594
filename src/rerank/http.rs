//! The HTTP transport: one `POST` of the rerank JSON per call, by the
//! HTTP/1.1 client the services share (`service::http`): plain HTTP to a
//! local server (llama.cpp's `--rerank`, vLLM, LocalAI), the whole call
//! within the timeout, the answer never read past [`MAX_ANSWER_BYTES`].

use super::wire::{parse_answer, request};
use super::{RerankError, Reranker};
use crate::model::config::HttpUrl;
use crate::service::http::HttpCall;
use crate::service::MAX_ANSWER_BYTES;
use std::time::Duration;

/// Reranks through an endpoint of the `/v1/rerank` shape over plain HTTP.
pub struct HttpReranker {
    url: HttpUrl,
    model: Option<String>,
    api_key: Option<String>,
    timeout: Duration,
    /// The most body bytes read ([`MAX_ANSWER_BYTES`]; smaller in tests).
    max_answer: usize,
}

// By hand: the API key must not reach a debug print.
impl std::fmt::Debug for HttpReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpReranker")
            .field("url", &self.url.to_string())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HttpReranker {
    /// A reranker posting to `url`, naming `model` if given, each call
    /// within `timeout`; `api_key` is sent as a bearer token.
    pub fn new(
        url: HttpUrl,
        model: Option<&str>,
        api_key: Option<String>,
        timeout: Duration,
    ) -> HttpReranker {
        HttpReranker {
            url,
            model: model.map(str::to_string),
            api_key,
            timeout,
            max_answer: MAX_ANSWER_BYTES,
        }
    }
}

impl Reranker for HttpReranker {
    fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f64>, RerankError> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let call = HttpCall {
            url: &self.url,
            api_key: self.api_key.as_deref(),
            timeout: self.timeout,
            max_answer: self.max_answer,
        };
        let body = call.post(&request(self.model.as_deref(), query, documents))?;
        parse_answer(&body, documents.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::test_server::serve;
    use std::time::Instant;

    fn url(port: u16) -> HttpUrl {
        HttpUrl::parse(&format!("http://127.0.0.1:{port}/v1/rerank")).unwrap()
    }

    fn client(port: u16, key: Option<&str>, ms: u64) -> HttpReranker {
        HttpReranker::new(
            url(port),
            Some("bge-reranker"),
            key.map(str::to_string),
            Duration::from_millis(ms),
        )
    }

    fn docs() -> Vec<String> {
        vec!["alpha doc".into(), "beta doc".into(), "gamma doc".into()]
    }

    fn ok(body: &str) -> Vec<Vec<u8>> {
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        // In pieces, split mid-head and mid-body.
        let (a, b) = answer.as_bytes().split_at(20);
        let (b, c) = b.split_at(b.len() - 7);
        vec![a.into(), b.into(), c.into()]
    }

    #[test]
    fn rerank_http_posts_the_request_and_maps_by_index() {
        let sorted = r#"{"results":[{"index":1,"relevance_score":0.9},
            {"index":2,"relevance_score":0.1},{"index":0,"relevance_score":0.4}]}"#;
        let (port, rx) = serve(ok(sorted), Duration::from_secs(5));
        let start = Instant::now();
        let got = client(port, Some("sk-test-123"), 3000)
            .rerank("which doc", &docs())
            .unwrap();
        assert_eq!(got, vec![0.4, 0.9, 0.1]);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "waited for the close"
        );
        let req = String::from_utf8(rx.recv().unwrap()).unwrap();
        assert!(req.starts_with("POST /v1/rerank HTTP/1.1\r\n"), "{req}");
        for h in [
            "Content-Type: application/json\r\n",
            "Authorization: Bearer sk-test-123\r\n",
        ] {
            assert!(req.contains(h), "{h} in {req}");
        }
        let body = &req[req.find("\r\n\r\n").unwrap() + 4..];
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"model": "bge-reranker", "query": "which doc",
                "documents": ["alpha doc", "beta doc", "gamma doc"], "top_n": 3})
        );
        // TEI's array, chunked, no key.
        let tei = r#"[{"index":2,"score":3.5},{"index":0,"score":-1.0},{"index":1,"score":0.0}]"#;
        let (x, y) = tei.split_at(11);
        let chunked = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{x}\r\n{:x}\r\n{y}\r\n0\r\n\r\n",
            x.len(),
            y.len()
        );
        let (port, rx) = serve(vec![chunked.into_bytes()], Duration::ZERO);
        assert_eq!(
            client(port, None, 3000).rerank("q", &docs()).unwrap(),
            vec![-1.0, 0.0, 3.5]
        );
        let req = String::from_utf8(rx.recv().unwrap()).unwrap();
        assert!(!req.contains("Authorization"), "{req}");
    }

    #[test]
    fn rerank_http_failures_hold_no_secret_nor_text() {
        let answer =
            "HTTP/1.1 401 Unauthorized\r\nContent-Length: 22\r\n\r\n{\"error\":\"sk-test-123\"}";
        let (port, _rx) = serve(vec![answer.into()], Duration::ZERO);
        let e = client(port, Some("sk-test-123"), 3000)
            .rerank("q", &docs())
            .unwrap_err();
        assert_eq!(e, RerankError::Status(401));
        // A missing score, echoed documents beside it.
        let lost = r#"{"results":[{"index":0,"relevance_score":0.5,"document":"alpha doc"},
            {"index":2,"relevance_score":0.1,"document":"gamma doc"}]}"#;
        let (port, _rx) = serve(ok(lost), Duration::ZERO);
        let e = client(port, Some("sk-test-123"), 3000)
            .rerank("which doc", &docs())
            .unwrap_err();
        assert_eq!(
            e,
            RerankError::BadResponse("no score for index 1 of 3 documents".into())
        );
        let (port, _rx) = serve(ok("<html>alpha doc</html>"), Duration::ZERO);
        let e = client(port, Some("sk-test-123"), 3000)
            .rerank("which doc", &docs())
            .unwrap_err();
        let text = format!("{e} {e:?}");
        assert!(text.starts_with("the rerank service's answer is unusable: not the expected JSON"));
        assert!(!text.contains("sk-test") && !text.contains("alpha") && !text.contains("which"));
        let debug = format!("{:?}", client(1, Some("sk-test-123"), 1));
        assert!(!debug.contains("sk-test"), "{debug}");
    }

    #[test]
    fn rerank_http_cap_timeout_and_unreachable() {
        let big = format!("HTTP/1.1 200 OK\r\n\r\n{}", "x".repeat(5000));
        let (port, _rx) = serve(vec![big.into_bytes()], Duration::ZERO);
        let mut c = client(port, None, 3000);
        c.max_answer = 1000;
        let e = c.rerank("q", &docs()).unwrap_err();
        assert!(
            matches!(&e, RerankError::BadResponse(m) if m.contains("more than")),
            "{e}"
        );
        // Accepts, never answers.
        let (port, _rx) = serve(vec![], Duration::from_secs(5));
        let start = Instant::now();
        let e = client(port, None, 300).rerank("q", &docs()).unwrap_err();
        assert_eq!(e, RerankError::Timeout { ms: 300 });
        assert!(start.elapsed() < Duration::from_secs(2));
        let free = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = client(free, None, 1000).rerank("q", &docs()).unwrap_err();
        assert!(
            matches!(&e, RerankError::Unreachable(m) if m.contains("127.0.0.1")),
            "{e}"
        );
        assert!(e
            .to_string()
            .starts_with("the rerank service is unreachable: "));
        // Nothing to score, nothing sent.
        assert_eq!(client(free, None, 1000).rerank("q", &[]), Ok(Vec::new()));
    }
}

#[cfg(test)]
mod fake_server {
    use super::*;
    use crate::service::test_server::Fixture as Fake;

    /// `tests/fixtures/fake_reranker.py --serve 0 ARGS`, killed on drop.
    fn fake(args: &[&str]) -> Fake {
        Fake::start("fake_reranker.py", args, &["FAKE_RERANKER"])
    }

    fn client(f: &Fake, ms: u64) -> HttpReranker {
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{}/v1/rerank", f.port)).unwrap();
        HttpReranker::new(url, Some("fake"), None, Duration::from_millis(ms))
    }

    fn docs() -> Vec<String> {
        [
            "Deploys go out on Fridays",
            "The staging database URL is postgres://db.internal",
            "staging is down",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn rerank_http_against_the_fake_reranker() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        // Exact: quarters pass through JSON unchanged.
        let want = vec![0.0, 1.0, 0.25];
        for form in ["input", "sorted", "tei"] {
            let f = fake(&["--answer", form, "--log", log.to_str().unwrap()]);
            let got = client(&f, 10_000)
                .rerank("the staging database URL", &docs())
                .unwrap();
            assert_eq!(got, want, "{form}");
        }
        let logged = std::fs::read_to_string(&log).unwrap();
        let first: serde_json::Value =
            serde_json::from_str(logged.lines().next().unwrap()).unwrap();
        assert_eq!(first["model"], "fake");
        assert_eq!(first["top_n"], 3);
        assert_eq!(logged.lines().count(), 3);
    }

    #[test]
    fn rerank_http_fake_failures() {
        let q = "staging database";
        let f = fake(&["--fail"]);
        assert_eq!(
            client(&f, 10_000).rerank(q, &docs()),
            Err(RerankError::Status(500))
        );
        let f = fake(&["--sleep", "2"]);
        assert_eq!(
            client(&f, 300).rerank(q, &docs()),
            Err(RerankError::Timeout { ms: 300 })
        );
        for (form, says) in [
            ("bad-json", "not the expected JSON"),
            ("missing", "no score for index 2 of 3"),
            ("duplicate", "two scores for index 0"),
            ("out-of-range", "index 3 of 3"),
            ("nan", "not the expected JSON"),
        ] {
            let f = fake(&["--answer", form]);
            let e = client(&f, 10_000).rerank(q, &docs()).unwrap_err();
            assert!(
                matches!(&e, RerankError::BadResponse(m) if m.contains(says)),
                "{form}: {e}"
            );
        }
    }
}
