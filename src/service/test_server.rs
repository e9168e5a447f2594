//! A one-connection HTTP server on 127.0.0.1 for the transports' tests.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

/// Serves one connection on a free port: reads the request (head and
/// Content-Length body), sends it on the channel, then writes `answer` in
/// the pieces given and closes (after `hold`). Returns the port.
pub(crate) fn serve(answer: Vec<Vec<u8>>, hold: Duration) -> (u16, mpsc::Receiver<Vec<u8>>) {
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
                if req.len() >= end + 4 + len {
                    break;
                }
            }
            if n == 0 {
                break;
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
    (port, rx)
}

/// A fixture service (`tests/fixtures/<script> --serve 0 ARGS`) on a free
/// port, killed on drop. The variables in `unset` are removed from its
/// environment (a fixture reads its failure mode from one).
pub(crate) struct Fixture {
    child: std::process::Child,
    /// The port it listens on.
    pub(crate) port: u16,
}

impl Fixture {
    /// Starts `script` and reads the port it prints first.
    pub(crate) fn start(script: &str, args: &[&str], unset: &[&str]) -> Fixture {
        use std::io::BufRead;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(script);
        let mut cmd = std::process::Command::new("python3");
        cmd.arg(path).args(["--serve", "0"]).args(args);
        for v in unset {
            cmd.env_remove(v);
        }
        let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        Fixture { child, port }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
