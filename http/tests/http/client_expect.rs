//! `Expect: 100-continue` from the client: large and unknown-length bodies wait for the
//! server's 100, are sent anyway when it stays silent, and are never sent when the server
//! answers first (and that connection is closed); small bodies go out at once; without the
//! expectation, an answer that comes before the body was taken is still the response.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::raw::{read_head, RawServer};
use crate::common::*;
use moria_http::client::Client;
use moria_http::{HandlerResult, Request, Response, Server};

fn echo(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let body = res.body_mut();
    req.body().read_to_end(body)?;
    Ok(())
}

/// A client that holds back bodies of 1 KiB and more, and waits up to `wait` for a 100.
fn client_waiting(wait: Duration) -> Client {
    Client::builder()
        .expect_continue(Some(1024))
        .continue_timeout(wait)
        .build()
        .unwrap()
}

/// A client that waits for a server's 100 (or its answer) long past any load's delay.
fn client() -> Client {
    client_waiting(Duration::from_secs(30))
}

/// The Content-Length of a request head.
fn length(head: &str) -> usize {
    head.lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Content-Length")
}

#[test]
fn large_bodies_reach_our_server_through_100_continue() {
    let server = start(Server::builder().max_body(8 * 1024 * 1024), echo);
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let c = client();
    let back = c.put(&url(&server, "/")).body(data.clone()).send().unwrap();
    assert_eq!(back.bytes().unwrap(), data);
    let back = c
        .post(&url(&server, "/"))
        .body_reader(std::io::Cursor::new(data.clone()), None)
        .send()
        .unwrap();
    assert_eq!(back.bytes().unwrap(), data);
    stop(&server);
}

/// A server that records each request head and, per `answer_100`, says 100 Continue before
/// reading the body; it answers with the body length it received.
fn recording(answer_100: bool) -> (RawServer, mpsc::Receiver<String>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let server = RawServer::start(move |mut s, _| {
        let Some(head) = read_head(&mut s) else {
            return;
        };
        if answer_100 && head.contains("Expect: 100-continue") {
            s.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").unwrap();
        }
        let mut body = vec![0u8; length(&head)];
        s.read_exact(&mut body).unwrap();
        let text = body.len().to_string();
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        );
        s.write_all(answer.as_bytes()).unwrap();
        tx.lock().unwrap().send(head).unwrap();
    });
    (server, rx)
}

/// Posts `body` to a [`recording`] server; returns the server's answer and the head it got.
fn post(answer_100: bool, body: Vec<u8>) -> (String, String) {
    let (server, heads) = recording(answer_100);
    // A silent server's test waits 100 ms for the 100 that never comes.
    let c = if answer_100 {
        client()
    } else {
        client_waiting(Duration::from_millis(100))
    };
    let r = c.post(&server.url("/")).body(body).send().unwrap();
    (r.text().unwrap(), heads.recv().unwrap())
}

#[test]
fn the_body_waits_for_100_continue() {
    let (answer, head) = post(true, vec![7u8; 5000]);
    assert_eq!(answer, "5000");
    assert!(head.contains("Expect: 100-continue"));
}

#[test]
fn a_silent_server_gets_the_body_after_the_continue_timeout() {
    let (answer, head) = post(false, vec![7u8; 5000]);
    assert_eq!(answer, "5000");
    assert!(head.contains("Expect: 100-continue"));
}

#[test]
fn small_bodies_go_out_at_once() {
    let (answer, head) = post(false, b"tiny".to_vec());
    assert_eq!(answer, "4");
    assert!(!head.contains("Expect"));
}

#[test]
fn a_final_answer_instead_of_100_means_the_body_is_never_sent() {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let server = RawServer::start(move |mut s, _| {
        read_head(&mut s);
        s.write_all(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        // Everything the client sends after the head, until it closes the connection.
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        tx.lock().unwrap().send(rest.len()).unwrap();
    });
    let r = client()
        .put(&server.url("/"))
        .body(vec![7u8; 5000])
        .send()
        .unwrap();
    assert_eq!(r.status(), 401);
    drop(r);
    assert_eq!(rx.recv().unwrap(), 0, "no body byte was sent");
}

#[test]
fn an_answer_before_the_body_is_taken_is_the_response() {
    let server = RawServer::start(|mut s, _| {
        read_head(&mut s);
        // Refuses at once and closes without reading the body.
        let _ = s.write_all(
            b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig!",
        );
    });
    let client = Client::builder().expect_continue(None).build().unwrap();
    let r = client
        .put(&server.url("/"))
        .body(vec![7u8; 32 * 1024 * 1024])
        .send()
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(r.text().unwrap(), "big!");
}
