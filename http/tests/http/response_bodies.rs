//! Response bodies over raw TCP: streamed (chunked on 1.1, close-delimited on 1.0), readers of
//! known and unknown length, files, compression by Accept-Encoding, HEAD, bodyless statuses,
//! handler errors and panics (a bare 500, no internal text), invalid headers refused.

use std::io::{Read, Write};

use crate::common::*;
use moria_http::compress::Compression;
use moria_http::{Body, HandlerResult, Request, Response, Server};

fn bodies(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    match req.path() {
        "/stream" => {
            res.body(Body::stream(|w| {
                for i in 0..100 {
                    writeln!(w, "line {i}")?;
                }
                Ok(())
            }));
        }
        "/reader" => {
            res.body(Body::reader(
                std::io::Cursor::new(vec![b'r'; 50_000]),
                Some(50_000),
            ));
        }
        "/reader-unknown" => {
            res.body(Body::reader(std::io::Cursor::new(vec![b'u'; 30_000]), None));
        }
        "/big" => {
            res.body(vec![b'b'; 200_000]);
        }
        "/text" => {
            res.content_type("text/plain; charset=utf-8")
                .body("compress me please ".repeat(500));
        }
        "/text-reader" => {
            res.content_type("text/plain");
            res.body(Body::reader(
                std::io::Cursor::new("stream me ".repeat(3000)),
                Some(30_000),
            ));
        }
        "/png" => {
            res.content_type("image/png").body(vec![7u8; 5000]);
        }
        "/204" => {
            res.status(204).body("ignored");
        }
        "/304" => {
            res.status(304);
        }
        "/error" => return Err("database password is hunter2".into()),
        "/panic" => panic!("secret panic text"),
        "/split" => {
            res.header("X-Evil", "a\r\nSet-Cookie: x=1");
        }
        "/close" => {
            res.close().body("bye");
        }
        _ => {
            res.body("default");
        }
    }
    Ok(())
}

fn server() -> Server {
    start(
        Server::builder().compression(Some(Compression::default())),
        bodies,
    )
}

fn get(server: &Server, path: &str, extra: &str) -> Resp {
    exchange(
        server.local_addr(),
        format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n").as_bytes(),
    )
}

#[test]
fn streamed_body_is_chunked_on_http11() {
    let server = server();
    let r = get(&server, "/stream", "");
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    let expected: String = (0..100).map(|i| format!("line {i}\n")).collect();
    assert_eq!(r.text(), expected);
    stop(&server);
}

#[test]
fn streamed_body_is_close_delimited_on_http10() {
    let server = server();
    let mut s = connect(server.local_addr());
    s.write_all(b"GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert!(r.header("transfer-encoding").is_none());
    assert!(r.header("content-length").is_none());
    assert_eq!(r.header("connection"), Some("close"));
    assert!(r.text().ends_with("line 99\n"));
    stop(&server);
}

#[test]
fn readers_of_known_and_unknown_length() {
    let server = server();
    let r = get(&server, "/reader", "");
    assert_eq!(r.header("content-length"), Some("50000"));
    assert!(r.body.iter().all(|&b| b == b'r') && r.body.len() == 50_000);
    let r = get(&server, "/reader-unknown", "");
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.body.len(), 30_000);
    stop(&server);
}

#[test]
fn large_memory_body_then_pipelined_request() {
    let server = server();
    let mut s = connect(server.local_addr());
    s.write_all(b"GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().body.len(), 200_000);
    assert_eq!(read_response(&mut s, false).unwrap().text(), "default");
    stop(&server);
}

#[test]
fn gzip_and_deflate_by_accept_encoding() {
    let server = server();
    let plain = "compress me please ".repeat(500);
    let r = get(&server, "/text", "Accept-Encoding: gzip;q=0.5, deflate\r\n");
    assert_eq!(r.header("content-encoding"), Some("deflate"));
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    let mut out = String::new();
    flate2::read::ZlibDecoder::new(&r.body[..])
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, plain);
    let r = get(&server, "/text", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let mut out = String::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, plain);
    let r = get(&server, "/text", "");
    assert!(r.header("content-encoding").is_none());
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    assert_eq!(r.text(), plain);
    let r = get(&server, "/text-reader", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    let mut out = String::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "stream me ".repeat(3000));
    let r = get(&server, "/png", "Accept-Encoding: gzip\r\n");
    assert!(r.header("content-encoding").is_none());
    stop(&server);
}

#[test]
fn bodyless_statuses_send_no_body() {
    let server = server();
    let mut s = connect(server.local_addr());
    s.write_all(b"GET /204 HTTP/1.1\r\nHost: a\r\n\r\nGET /304 HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.status, 204);
    assert!(r.header("content-length").is_none());
    assert_eq!(read_response(&mut s, false).unwrap().status, 304);
    assert_eq!(read_response(&mut s, false).unwrap().text(), "default");
    stop(&server);
}

#[test]
fn head_of_a_streamed_body_has_no_body() {
    let server = server();
    let mut s = connect(server.local_addr());
    s.write_all(b"HEAD /stream HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, true).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(read_response(&mut s, false).unwrap().text(), "default");
    stop(&server);
}

#[test]
fn handler_errors_and_panics_are_bare_500s() {
    let server = server();
    for path in ["/error", "/panic"] {
        let r = get(&server, path, "");
        assert_eq!(r.status, 500, "{path}");
        assert_eq!(r.text(), "500 Internal Server Error\n");
        assert!(!r.head.contains("hunter2") && !r.head.contains("secret"));
    }
    // The server survives the panic.
    assert_eq!(get(&server, "/x", "").text(), "default");
    stop(&server);
}

#[test]
fn header_injection_becomes_500() {
    let server = server();
    let r = get(&server, "/split", "");
    assert_eq!(r.status, 500);
    assert!(r.header("set-cookie").is_none());
    stop(&server);
}

#[test]
fn handler_can_close_the_connection() {
    let server = server();
    let mut s = connect(server.local_addr());
    s.write_all(b"GET /close HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut s);
    stop(&server);
}
