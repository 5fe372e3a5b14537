//! Basic round trips: GET, keep-alive reuse across 1,000 requests, HTTP/1.0 with and without
//! keep-alive, HEAD, 16 pipelined requests answered in order.

use std::io::{Read, Write};

use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.content_type("text/plain");
    let body = res.body_mut();
    body.extend_from_slice(b"hello ");
    body.extend_from_slice(req.path().as_bytes());
    Ok(())
}

#[test]
fn get_answers_with_date_server_and_length() {
    let server = start(Server::builder(), hello);
    let r = get(server.local_addr(), "/x");
    assert_eq!(r.status(), 200);
    let headers = r.headers().clone();
    assert_eq!(headers.get("content-length"), Some("8"));
    assert_eq!(headers.get("server"), Some("moria"));
    assert_eq!(headers.get("date").map(str::len), Some(29));
    assert_eq!(r.text().unwrap(), "hello /x");
    stop(&server);
}

#[test]
fn keep_alive_reuses_one_connection_for_1000_requests() {
    let server = start(Server::builder(), hello);
    let mut s = connect(server.local_addr());
    for i in 0..1000 {
        write!(s, "GET /{i} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        let r = read_response(&mut s, false).expect("response");
        assert_eq!(r.text(), format!("hello /{i}"));
        assert!(r.header("connection").is_none());
    }
    stop(&server);
}

#[test]
fn sixteen_pipelined_requests_come_back_in_order_in_one_read() {
    let server = start(Server::builder(), hello);
    let mut s = connect(server.local_addr());
    let mut batch = Vec::new();
    for i in 0..16 {
        write!(batch, "GET /{i} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    }
    // One write carries all 16 requests; the server answers them with one write, so the first
    // read returns all 16 answers.
    s.write_all(&batch).unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let n = s.read(&mut buf).unwrap();
    let mut got = &buf[..n];
    for i in 0..16 {
        let r = read_response(&mut got, false)
            .unwrap_or_else(|| panic!("answer {i} missing from the first read"));
        assert_eq!(r.text(), format!("hello /{i}"));
    }
    assert!(got.is_empty());
    stop(&server);
}

#[test]
fn http10_closes_unless_keep_alive() {
    let server = start(Server::builder(), hello);
    let mut s = connect(server.local_addr());
    s.write_all(b"GET /a HTTP/1.0\r\n\r\n").unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut s);

    let mut s = connect(server.local_addr());
    for _ in 0..3 {
        s.write_all(b"GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            .unwrap();
        let r = read_response(&mut s, false).unwrap();
        assert_eq!(r.header("connection"), Some("keep-alive"));
        assert_eq!(r.text(), "hello /b");
    }
    stop(&server);
}

#[test]
fn connection_close_is_honoured() {
    let server = start(Server::builder(), hello);
    let mut s = connect(server.local_addr());
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut s);
    stop(&server);
}

#[test]
fn head_sends_headers_without_body() {
    let server = start(Server::builder(), hello);
    let mut s = connect(server.local_addr());
    s.write_all(b"HEAD /abc HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, true).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("10"));
    // The next response starts right after the HEAD head: no body bytes in between.
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.text(), "hello /next");
    stop(&server);
}
