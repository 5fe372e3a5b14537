//! The request-head scanner and parser as one pure function over a byte slice, for bench's
//! `fuzz_h1` (feature `fuzzing`, hidden from the docs, no stability promise); `h2.rs`: one
//! HTTP/2 connection over a byte slice, for `fuzz_h2`.
//!
//! [`parse_request`] runs the code the connection loop runs on a request head, in the same
//! order: `take_head` (`h1/decode/request.rs`: the one-pass parse of a head that arrived whole,
//! else the incremental scan and the strict parse) over a buffer that grows as reads arrive,
//! then the path decoding. Nothing here is a second implementation.

use crate::h1::{take_head, Head, HeadScan};
use crate::limits::Limits;
use crate::method::{Method, Version};
use crate::percent::decode_path_into;

pub use crate::h1::{Failure, Framing};
pub use h2::{h2_connection, H2Run};

mod h2;

/// An accepted request head, copied out of the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedHead {
    /// The method, as recognised.
    pub method: Method,
    /// The method's text.
    pub method_text: Vec<u8>,
    /// The raw request target.
    pub target: Vec<u8>,
    /// The path part of the target, still percent-encoded.
    pub path: Vec<u8>,
    /// The path as a handler sees it: decoded when it holds an escape.
    pub decoded_path: Option<String>,
    /// The query after `?`, if any.
    pub query: Option<Vec<u8>>,
    /// The version.
    pub version: Version,
    /// Field lines: name and trimmed value, in order.
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    /// How the body is delimited.
    pub framing: Framing,
    /// Whether the client allows the connection to stay open.
    pub keep_alive: bool,
    /// Whether the client waits for `100 Continue`.
    pub expect_continue: bool,
    /// Bytes the head took, tolerated empty lines before it included: the body starts here.
    pub head_len: usize,
}

/// Scans and parses the request head at the start of `buf`, offering the scanner prefixes
/// that grow by `step` bytes (one per simulated read; `0` counts as `buf.len()`).
///
/// `Ok(None)` when `buf` ends before the head does; `Err` with the failure the connection
/// would answer.
pub fn parse_request(
    buf: &[u8],
    limits: &Limits,
    step: usize,
) -> Result<Option<ParsedHead>, Failure> {
    let step = if step == 0 { buf.len().max(1) } else { step };
    let mut scan = HeadScan::default();
    let mut head = Head::default();
    let mut filled = 0;
    let bounds = loop {
        filled = (filled + step).min(buf.len());
        if let Some(b) = take_head(&mut scan, &buf[..filled], limits, &mut head)? {
            break b;
        }
        if filled == buf.len() {
            return Ok(None);
        }
    };
    let raw = &buf[..bounds.end];
    let path = head.path.get(raw);
    let decoded_path = match head.path_escaped {
        false => None,
        true => {
            let mut out = String::new();
            if !decode_path_into(path, &mut out) {
                return Err(Failure::BadPath);
            }
            Some(out)
        }
    };
    Ok(Some(ParsedHead {
        method: head.method,
        method_text: head.method_span.get(raw).to_vec(),
        target: head.target.get(raw).to_vec(),
        path: path.to_vec(),
        decoded_path,
        query: head.query.map(|q| q.get(raw).to_vec()),
        version: head.version,
        fields: head
            .fields
            .iter()
            .map(|(n, v)| (n.get(raw).to_vec(), v.get(raw).to_vec()))
            .collect(),
        framing: head.framing,
        keep_alive: head.keep_alive,
        expect_continue: head.expect_continue,
        head_len: bounds.end,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_in_one_read_and_byte_by_byte_parse_alike() {
        let req = b"\r\nPOST /a%20b?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
        let whole = parse_request(req, &Limits::default(), 0).unwrap().unwrap();
        let split = parse_request(req, &Limits::default(), 1).unwrap().unwrap();
        assert_eq!(whole, split);
        assert_eq!(whole.decoded_path.as_deref(), Some("/a b"));
        assert_eq!(whole.query.as_deref(), Some(&b"x=1"[..]));
        assert_eq!(whole.framing, Framing::Length(3));
        assert_eq!(&req[whole.head_len..], b"abc");
    }

    #[test]
    fn incomplete_and_broken_heads() {
        let limits = Limits::default();
        assert_eq!(parse_request(b"GET / HTTP/1.1\r\n", &limits, 3), Ok(None));
        assert_eq!(
            parse_request(b"GET / HTTP/1.1\r\n\r\n", &limits, 0),
            Err(Failure::MissingHost)
        );
    }
}
