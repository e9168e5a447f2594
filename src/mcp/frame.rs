//! MCP's stdio framing: one JSON-RPC message a line, each line capped.
//!
//! A client could send a line without end (`cat /dev/zero`); the reader
//! keeps at most [`MAX_MESSAGE`] bytes of a line and skips the rest, so the
//! server answers it with a parse error instead of filling the memory.

use std::io::{self, BufRead};

/// The longest message read (a remember's body is at most 64 KiB; JSON
/// escaping at most sextuples it).
pub const MAX_MESSAGE: usize = 4 << 20;

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line, its newline (and a `\r` before it) removed.
    Message(Vec<u8>),
    /// A line longer than the cap, skipped to its end.
    TooLong,
}

/// The next line of `input`, `None` at the end of input.
pub fn read_line(input: &mut impl BufRead, cap: usize) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        read_any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if line.len() + take > cap {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take + usize::from(done));
        if done {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Line::Message(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<Line> {
        let mut r = io::BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        while let Some(l) = read_line(&mut r, cap).unwrap() {
            out.push(l);
        }
        out
    }

    /// Lines split on `\n` (CRLF too), the last without one kept.
    #[test]
    fn splits_lines() {
        assert_eq!(
            lines(b"ab\r\ncd\nef", 10),
            vec![
                Line::Message(b"ab".to_vec()),
                Line::Message(b"cd".to_vec()),
                Line::Message(b"ef".to_vec())
            ]
        );
    }

    /// An over-long line is skipped whole; the next one is read.
    #[test]
    fn skips_an_over_long_line() {
        assert_eq!(
            lines(b"0123456789abc\nok\n", 5),
            vec![Line::TooLong, Line::Message(b"ok".to_vec())]
        );
    }
}
