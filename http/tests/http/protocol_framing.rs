//! RFC 9112 §6.3 framing rules and field syntax over raw TCP: each broken request gets its
//! status and a closed connection, and nothing after it is ever served.

use std::io::Write;

use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};

fn echo_len(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut body = Vec::new();
    std::io::Read::read_to_end(req.body(), &mut body)?;
    let text = format!("{} {} {}", req.method(), req.path(), body.len());
    res.body(text);
    Ok(())
}

/// Sends `raw`, expects `status`, a `Connection: close`, and EOF after it.
fn refused(raw: &str, status: u16) {
    let server = start(Server::builder(), echo_len);
    let mut s = connect(server.local_addr());
    s.write_all(raw.as_bytes()).unwrap();
    let r = read_response(&mut s, false).unwrap_or_else(|| panic!("no response to {raw:?}"));
    assert_eq!(r.status, status, "{raw:?}: {}", r.head);
    assert_eq!(r.header("connection"), Some("close"), "{raw:?}");
    if let Err(why) = check_closed(&mut s) {
        panic!("{raw:?}: {why}");
    }
    stop(&server);
}

const NEXT: &str = "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn content_length_with_transfer_encoding_is_400() {
    refused(
        &format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{NEXT}"),
        400,
    );
}

#[test]
fn differing_content_lengths_are_400() {
    refused(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        400,
    );
    refused(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\nabcd",
        400,
    );
}

#[test]
fn malformed_content_length_is_400() {
    for v in ["-1", "1x", "0x10", "99999999999999999999999", ""] {
        refused(
            &format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {v}\r\n\r\n"),
            400,
        );
    }
}

#[test]
fn unknown_transfer_coding_is_501() {
    refused(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
    );
    refused(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        501,
    );
}

#[test]
fn chunked_not_final_is_400() {
    refused(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        400,
    );
    refused(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
        400,
    );
}

#[test]
fn transfer_encoding_on_http10_is_400() {
    refused(
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400,
    );
}

#[test]
fn obs_fold_is_400() {
    refused("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", 400);
}

#[test]
fn whitespace_before_colon_is_400() {
    refused("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400);
}

#[test]
fn control_characters_and_bare_cr_are_400() {
    refused("GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fb\r\n\r\n", 400);
}

#[test]
fn missing_or_duplicate_host_is_400() {
    refused("GET / HTTP/1.1\r\n\r\n", 400);
    refused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);
}

#[test]
fn malformed_request_lines_are_400() {
    refused("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    refused("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    refused("GET /é HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    refused("G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400);
}

#[test]
fn bad_percent_encoding_in_path_is_400() {
    refused("GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400);
    refused("GET /a%00b HTTP/1.1\r\nHost: a\r\n\r\n", 400);
}

#[test]
fn malformed_chunked_body_is_400() {
    refused(&format!("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n{NEXT}"), 400);
    refused(&format!("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n{NEXT}"), 400);
}

#[test]
fn chunked_request_body_is_decoded() {
    let server = start(Server::builder(), echo_len);
    let r = exchange(
        server.local_addr(),
        b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nX-Trailer: 1\r\n\r\n",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), "POST /up 7");
    stop(&server);
}

#[test]
fn leading_empty_line_is_tolerated() {
    let server = start(Server::builder(), echo_len);
    let r = exchange(
        server.local_addr(),
        b"\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(r.text(), "GET /x 0");
    stop(&server);
}

#[test]
fn absolute_form_and_later_minor_versions_are_served() {
    let server = start(Server::builder(), echo_len);
    let r = exchange(
        server.local_addr(),
        b"GET http://a/p?q=1 HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(r.text(), "GET /p 0");
    let r = exchange(server.local_addr(), b"GET /v HTTP/1.9\r\nHost: a\r\n\r\n");
    assert_eq!(r.text(), "GET /v 0");
    stop(&server);
}
