//! The client against a raw-socket server that frames responses by hand, correctly and not:
//! until-close bodies, chunked with trailers, interim responses, and each framing violation
//! (conflicting lengths, length with chunked, bad chunk, truncated bodies, bad gzip or
//! deflate, a decompression bomb, a server that never answers) as its own error, promptly,
//! never a hang; `deflate` bodies decode zlib-wrapped and raw alike.

use std::io::{Read, Write};
use std::time::Duration;

use crate::common::raw::{read_head, RawServer};
use moria_http::client::{Client, Error, Phase, Violation};

/// A client whose idle read timeout bounds a broken test without firing on a loaded machine.
fn client() -> Client {
    client_waiting(Duration::from_secs(10))
}

/// A client that gives up on a silent server after `idle`.
fn client_waiting(idle: Duration) -> Client {
    Client::builder().read_timeout(idle).build().unwrap()
}

fn violation(server: &RawServer) -> Violation {
    let result = client()
        .get(&server.url("/"))
        .send()
        .and_then(|r| r.bytes());
    match result {
        Err(Error::Protocol { violation, url }) => {
            assert!(url.contains("127.0.0.1"), "the error names the URL: {url}");
            violation
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn body_until_close() {
    let server = RawServer::answer(b"HTTP/1.1 200 OK\r\n\r\nall of this until the close");
    let c = client();
    let text = c.get(&server.url("/")).send().unwrap().text().unwrap();
    assert_eq!(text, "all of this until the close");
}

#[test]
fn http10_response_without_length() {
    let server = RawServer::answer(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold");
    let r = client().get(&server.url("/")).send().unwrap();
    assert_eq!(r.version(), moria_http::Version::Http10);
    assert_eq!(r.text().unwrap(), "old");
}

#[test]
fn chunked_body_with_extensions_and_trailers() {
    let server = RawServer::answer(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
          5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Sum: 42\r\n\r\n",
    );
    let mut r = client().get(&server.url("/")).send().unwrap();
    let mut text = String::new();
    r.read_to_string(&mut text).unwrap();
    assert_eq!(text, "hello, world");
    assert_eq!(r.trailers(), &[("X-Sum".to_owned(), b"42".to_vec())]);
}

#[test]
fn interim_responses_are_skipped() {
    let server = RawServer::answer(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
          HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody",
    );
    let r = client().get(&server.url("/")).send().unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("link").is_none());
    assert_eq!(r.text().unwrap(), "body");
}

#[test]
fn head_response_ignores_its_length_and_keeps_the_connection() {
    let server = RawServer::start(|mut s, _| {
        while let Some(head) = read_head(&mut s) {
            let answer: &[u8] = if head.starts_with("HEAD") {
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            };
            s.write_all(answer).unwrap();
        }
    });
    let c = client();
    let r = c.head(&server.url("/")).send().unwrap();
    assert_eq!(r.headers().get("content-length"), Some("1000"));
    assert_eq!(r.bytes().unwrap(), b"");
    assert_eq!(
        c.get(&server.url("/")).send().unwrap().text().unwrap(),
        "ok"
    );
    assert_eq!(server.accepted(), 1);
}

#[test]
fn conflicting_lengths_are_refused() {
    let server = RawServer::answer(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
    );
    assert_eq!(violation(&server), Violation::ConflictingContentLength);
}

#[test]
fn length_with_chunked_is_refused() {
    let server = RawServer::answer(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    );
    assert_eq!(violation(&server), Violation::LengthWithChunked);
}

#[test]
fn unknown_transfer_coding_is_refused() {
    let server = RawServer::answer(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx");
    assert_eq!(violation(&server), Violation::UnsupportedTransferCoding);
}

#[test]
fn bad_chunk_size_is_refused() {
    let server = RawServer::answer(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    );
    assert!(matches!(violation(&server), Violation::BadChunk(_)));
}

#[test]
fn truncated_length_body() {
    let server = RawServer::answer(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
    assert_eq!(violation(&server), Violation::TruncatedBody);
}

#[test]
fn truncated_chunked_body() {
    let server =
        RawServer::answer(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort");
    assert_eq!(violation(&server), Violation::TruncatedBody);
}

#[test]
fn truncated_head_and_bad_status_line() {
    let server = RawServer::answer(b"HTTP/1.1 200 OK\r\nContent-Le");
    assert_eq!(violation(&server), Violation::TruncatedHead);
    let server = RawServer::answer(b"SSH-2.0-OpenSSH\r\n\r\n");
    assert_eq!(violation(&server), Violation::BadStatusLine);
}

#[test]
fn an_oversized_head_is_refused() {
    let server = RawServer::start(|mut s, _| {
        read_head(&mut s);
        let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
        while head.len() < 70 * 1024 {
            head.extend_from_slice(b"X-Filler: 0123456789012345678901234567890123456789\r\n");
        }
        let _ = s.write_all(&head);
        let _ = s.read(&mut [0u8; 1]);
    });
    assert_eq!(violation(&server), Violation::HeadTooLarge);
}

#[test]
fn truncated_body_read_through_read_says_so() {
    let server = RawServer::answer(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
    let mut r = client().get(&server.url("/")).send().unwrap();
    let err = r.read_to_end(&mut Vec::new()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    assert!(matches!(
        Error::from_io(&err),
        Some(Error::Protocol {
            violation: Violation::TruncatedBody,
            ..
        })
    ));
}

#[test]
fn a_server_that_never_answers_is_an_idle_read_timeout() {
    let server = RawServer::start(|mut s, _| {
        read_head(&mut s);
        // Holds the connection open and silent until the client gives up and closes it.
        let _ = s.read(&mut [0u8; 1]);
    });
    let err = client_waiting(Duration::from_millis(500))
        .get(&server.url("/"))
        .send()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                phase: Phase::Read,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_stalled_body_hits_the_request_deadline() {
    let server = RawServer::start(|mut s, _| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
            .unwrap();
        let _ = s.read(&mut [0u8; 1]);
    });
    let c = Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let err = c.get(&server.url("/")).send().unwrap().bytes().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                phase: Phase::Deadline,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_refused_connection_is_a_connect_error() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let err = client().get(&format!("http://{addr}/")).send().unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn serve_encoded(body: Vec<u8>) -> RawServer {
    serve_coded("gzip", body, None)
}

/// Answers every request with `body` under `Content-Encoding: {coding}`: with Content-Length,
/// or chunked in pieces of `chunk` bytes.
fn serve_coded(coding: &'static str, body: Vec<u8>, chunk: Option<usize>) -> RawServer {
    RawServer::start(move |mut s, _| {
        read_head(&mut s);
        let mut out = format!("HTTP/1.1 200 OK\r\nContent-Encoding: {coding}\r\n").into_bytes();
        match chunk {
            None => {
                out.extend(format!("Content-Length: {}\r\n\r\n", body.len()).bytes());
                out.extend(&body);
            }
            Some(size) => {
                out.extend(b"Transfer-Encoding: chunked\r\n\r\n");
                for piece in body.chunks(size) {
                    out.extend(format!("{:x}\r\n", piece.len()).bytes());
                    out.extend(piece);
                    out.extend(b"\r\n");
                }
                out.extend(b"0\r\n\r\n");
            }
        }
        let _ = s.write_all(&out);
    })
}

#[test]
fn a_decompression_bomb_is_refused() {
    let bomb = gzip(&vec![0u8; 32 * 1024 * 1024]);
    let server = serve_encoded(bomb);
    let err = client()
        .get(&server.url("/"))
        .send()
        .unwrap()
        .bytes()
        .unwrap_err();
    assert!(matches!(err, Error::DecompressionBomb { .. }), "{err}");
    // The same body below the guard's threshold decodes.
    let c = Client::builder()
        .decompression_guard(200, 64 * 1024 * 1024)
        .build()
        .unwrap();
    let body = c.get(&server.url("/")).send().unwrap().bytes().unwrap();
    assert_eq!(body.len(), 32 * 1024 * 1024);
}

#[test]
fn corrupt_gzip_is_a_content_coding_error() {
    let mut body = gzip(b"some text that compresses, some text that compresses");
    let mid = body.len() / 2;
    body[mid] ^= 0xff;
    body[mid + 1] ^= 0xff;
    let server = serve_encoded(body);
    assert!(matches!(violation(&server), Violation::BadContentCoding(_)));
}

#[test]
fn deflate_is_decoded_zlib_wrapped_or_raw() {
    let text = b"deflate, the zlib way or the raw way: both come out the same. ".repeat(200);
    // Level 0 is stored blocks; 1, 6 and 9 give the three zlib headers flate2 writes.
    for level in [0, 1, 6, 9] {
        for (kind, body) in [
            ("zlib", zlib(&text, level)),
            ("raw", raw_deflate(&text, level)),
        ] {
            // One-byte chunks make the client's first reads of the body one byte each.
            for chunk in [None, Some(1)] {
                let server = serve_coded("deflate", body.clone(), chunk);
                let r = client().get(&server.url("/")).send().unwrap();
                assert_eq!(r.headers().get("content-encoding"), None);
                let got = r
                    .bytes()
                    .unwrap_or_else(|e| panic!("{kind} {level} {chunk:?}: {e}"));
                assert!(
                    got == text,
                    "{kind} level {level} chunk {chunk:?}: wrong bytes"
                );
            }
        }
    }
}

#[test]
fn corrupt_deflate_is_a_content_coding_error() {
    let text = b"some text that compresses, some text that compresses";
    // zlib with bytes flipped in the middle (its Adler-32 catches what inflate does not).
    let mut flipped = zlib(text, 9);
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0xff;
    flipped[mid + 1] ^= 0xff;
    // Raw deflate cut short, and raw deflate whose first block has the reserved type 3.
    let full = raw_deflate(text, 9);
    let cut = full[..full.len() / 2].to_vec();
    let reserved = vec![0x07, 0x00, 0x00, 0x00];
    for (what, body) in [("zlib", flipped), ("cut raw", cut), ("reserved", reserved)] {
        let server = serve_coded("deflate", body, None);
        let v = violation(&server);
        assert!(matches!(v, Violation::BadContentCoding(_)), "{what}: {v:?}");
    }
}

#[test]
fn a_deflate_bomb_is_refused_zlib_wrapped_or_raw() {
    let zeros = vec![0u8; 4 * 1024 * 1024];
    let guarded = Client::builder()
        .decompression_guard(200, 1024 * 1024)
        .build()
        .unwrap();
    for (kind, body) in [("zlib", zlib(&zeros, 9)), ("raw", raw_deflate(&zeros, 9))] {
        let server = serve_coded("deflate", body, None);
        let r = guarded.get(&server.url("/")).send().unwrap();
        let err = r.bytes().unwrap_err();
        assert!(
            matches!(err, Error::DecompressionBomb { .. }),
            "{kind}: {err}"
        );
    }
}
