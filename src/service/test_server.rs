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
