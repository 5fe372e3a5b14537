//! Limits and their statuses over raw TCP: 414, 431, 413, 505, 417, 408 (slowloris), each with
//! a closed connection, and named limits overridden through the builder.

use std::io::{Read, Write};
use std::time::Duration;

use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};

fn ok(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut body = Vec::new();
    req.body().read_to_end(&mut body)?;
    res.body(format!("got {}", body.len()));
    Ok(())
}

fn expect_close(builder: moria_http::ServerBuilder, raw: &[u8], status: u16) {
    let server = start(builder, ok);
    let mut s = connect(server.local_addr());
    s.write_all(raw).unwrap();
    let r = read_response(&mut s, false).expect("response");
    assert_eq!(r.status, status, "{}", r.head);
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut s);
    stop(&server);
}

#[test]
fn long_request_line_is_414() {
    let raw = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000));
    expect_close(Server::builder(), raw.as_bytes(), 414);
}

#[test]
fn long_request_line_is_414_before_it_ends() {
    // No line end at all: the server answers once the limit is passed.
    let raw = format!("GET /{}", "a".repeat(9000));
    expect_close(Server::builder(), raw.as_bytes(), 414);
}

#[test]
fn request_line_limit_is_configurable() {
    let raw = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(100));
    expect_close(Server::builder().max_request_line(64), raw.as_bytes(), 414);
}

#[test]
fn too_many_headers_is_431() {
    let mut raw = String::from("GET / HTTP/1.1\r\nHost: a\r\n");
    for i in 0..100 {
        raw.push_str(&format!("X-{i}: v\r\n"));
    }
    raw.push_str("\r\n");
    expect_close(Server::builder(), raw.as_bytes(), 431);
}

#[test]
fn header_count_limit_is_configurable() {
    let raw = "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n";
    expect_close(Server::builder().max_headers(2), raw.as_bytes(), 431);
}

#[test]
fn huge_head_is_431() {
    let raw = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
        "b".repeat(70_000)
    );
    expect_close(Server::builder(), raw.as_bytes(), 431);
}

#[test]
fn declared_body_over_limit_is_413() {
    let raw = format!(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n",
        1024 * 1024 + 1
    );
    expect_close(Server::builder(), raw.as_bytes(), 413);
}

#[test]
fn chunked_body_over_limit_is_413() {
    let mut raw = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        raw.extend_from_slice(b"40\r\n");
        raw.extend_from_slice(&[b'x'; 64]);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    expect_close(Server::builder().max_body(100), &raw, 413);
}

#[test]
fn body_under_a_raised_limit_is_served() {
    let server = start(Server::builder().max_body(4 * 1024 * 1024), ok);
    let mut raw = format!(
        "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n",
        2 * 1024 * 1024
    )
    .into_bytes();
    raw.extend(std::iter::repeat_n(b'z', 2 * 1024 * 1024));
    let r = exchange(server.local_addr(), &raw);
    assert_eq!(r.text(), format!("got {}", 2 * 1024 * 1024));
    stop(&server);
}

#[test]
fn http2_version_is_505() {
    expect_close(Server::builder(), b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505);
}

#[test]
fn unknown_expectation_is_417() {
    expect_close(
        Server::builder(),
        b"POST / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\nx",
        417,
    );
}

#[test]
fn slowloris_gets_408_and_is_closed_while_others_are_served() {
    let server = start(Server::builder().header_timeout(Duration::from_secs(1)), ok);
    let addr = server.local_addr();
    let slow = std::thread::spawn(move || {
        let mut s = connect(addr);
        let head = b"GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ";
        let mut answer = Vec::new();
        // One byte every 200 ms (the attack pattern, not synchronisation) until the server
        // gives up on the head and answers.
        for &b in head.iter().chain(std::iter::repeat(&b'z')) {
            if s.write_all(&[b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
            s.set_nonblocking(true).unwrap();
            let mut buf = [0u8; 512];
            let got = s.read(&mut buf);
            s.set_nonblocking(false).unwrap();
            match got {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
            if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        answer.extend(read_until_closed(&mut s));
        String::from_utf8_lossy(&answer).into_owned()
    });
    // Meanwhile other clients are served normally.
    for i in 0..20 {
        let r = exchange(
            addr,
            format!(
                "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {i}\r\n\r\n{}",
                "q".repeat(i)
            )
            .as_bytes(),
        );
        assert_eq!(r.text(), format!("got {i}"));
    }
    let answer = slow.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.contains("Connection: close"), "{answer}");
    stop(&server);
}

#[test]
fn stalled_body_is_408() {
    let server = start(
        Server::builder().body_timeout(Duration::from_millis(300)),
        ok,
    );
    let mut s = connect(server.local_addr());
    // Declares 10 bytes, sends 3, then stalls.
    s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
        .unwrap();
    let r = read_response(&mut s, false).expect("response");
    assert_eq!(r.status, 408);
    assert_closed(&mut s);
    stop(&server);
}

#[test]
fn idle_keep_alive_connection_is_closed_after_its_timeout() {
    let server = start(
        Server::builder().keep_alive_timeout(Duration::from_millis(200)),
        ok,
    );
    let mut s = connect(server.local_addr());
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    // Blocks until the server closes the idle connection (the client timeout is 20 s).
    assert_closed(&mut s);
    stop(&server);
}
