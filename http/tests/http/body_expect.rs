//! Request bodies: a 10 MiB chunked upload echoed and checked by hash, `Expect: 100-continue`
//! both ways, and unread bodies drained so they are never parsed as requests (no smuggling).

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use crate::common::*;
use moria_http::{Handler, HandlerResult, Request, Response, Server};

fn echo(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let body = res.body_mut();
    req.body().read_to_end(body)?;
    Ok(())
}

fn sha256(b: &[u8]) -> Vec<u8> {
    moria_crypto::hash("sha256", b).unwrap().as_ref().to_vec()
}

#[test]
fn ten_mib_chunked_upload_is_echoed_intact() {
    let server = start(Server::builder().max_body(16 * 1024 * 1024), echo);
    let data: Vec<u8> = (0..10 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut s = connect(server.local_addr());
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        .unwrap();
    // Chunks of varying sizes, including odd ones.
    let mut off = 0;
    let mut size = 1;
    while off < data.len() {
        let n = size.min(data.len() - off);
        write!(s, "{n:x}\r\n").unwrap();
        s.write_all(&data[off..off + n]).unwrap();
        s.write_all(b"\r\n").unwrap();
        off += n;
        size = size * 3 % 100_003 + 1;
    }
    s.write_all(b"0\r\n\r\n").unwrap();
    let r = read_response(&mut s, false).expect("response");
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), data.len());
    assert_eq!(sha256(&r.body), sha256(&data));
    stop(&server);
}

#[test]
fn expect_continue_gets_100_when_the_handler_reads() {
    let server = start(Server::builder(), echo);
    let mut s = connect(server.local_addr());
    s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        .unwrap();
    // The client holds the body back until the interim response arrives.
    let interim = read_response(&mut s, true).expect("100 Continue");
    assert_eq!(interim.status, 100);
    s.write_all(b"hello").unwrap();
    let r = read_response(&mut s, false).expect("final response");
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), "hello");
    // The connection stays usable.
    s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nok")
        .unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "ok");
    stop(&server);
}

#[test]
fn expect_continue_without_reading_gets_a_final_answer_and_close() {
    let server = start(
        Server::builder(),
        |_req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            res.status(401).body("no");
            Ok(())
        },
    );
    let mut s = connect(server.local_addr());
    s.write_all(
        b"PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n",
    )
    .unwrap();
    let r = read_response(&mut s, false).expect("final response");
    assert_eq!(r.status, 401, "no 100 Continue first: {}", r.head);
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut s);
    stop(&server);
}

/// Paths served, in order.
type Seen = Arc<Mutex<Vec<String>>>;

/// A handler that never reads bodies and records every path it serves.
fn recorder() -> (Seen, impl Handler) {
    let seen = Seen::default();
    let s2 = Arc::clone(&seen);
    let handler = move |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        s2.lock().unwrap().push(req.path().to_string());
        res.body("ok");
        Ok(())
    };
    (seen, handler)
}

#[test]
fn unread_body_is_drained_not_parsed_as_a_request() {
    let (seen, handler) = recorder();
    let server = start(Server::builder(), handler);
    let mut s = connect(server.local_addr());
    let smuggled = "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";
    write!(
        s,
        "POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\n\r\n{smuggled}GET /second HTTP/1.1\r\nHost: a\r\n\r\n",
        smuggled.len()
    )
    .unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    s.write_all(b"GET /third HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nGET /\r\n0\r\n\r\nGET /fourth HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    assert_eq!(read_response(&mut s, false).unwrap().status, 200);
    assert_eq!(
        *seen.lock().unwrap(),
        ["/first", "/second", "/third", "/fourth"]
    );
    stop(&server);
}

#[test]
fn unread_body_over_the_drain_limit_closes_the_connection() {
    let (seen, handler) = recorder();
    let server = start(Server::builder().max_drain(1000), handler);
    let mut s = connect(server.local_addr());
    let mut raw = b"POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n".to_vec();
    raw.extend(std::iter::repeat_n(b'x', 5000));
    raw.extend_from_slice(b"GET /after HTTP/1.1\r\nHost: a\r\n\r\n");
    s.write_all(&raw).unwrap();
    let r = read_response(&mut s, false).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut s);
    assert_eq!(*seen.lock().unwrap(), ["/big"]);
    stop(&server);
}

#[test]
fn body_is_readable_in_small_pieces_across_reads() {
    let server = start(
        Server::builder(),
        |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            let mut total = 0;
            let mut buf = [0u8; 7];
            loop {
                let n = req.body().read(&mut buf)?;
                if n == 0 {
                    break;
                }
                total += n;
            }
            res.body(format!("{total} of {:?}", req.body().content_length()));
            Ok(())
        },
    );
    let mut s = connect(server.local_addr());
    s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n")
        .unwrap();
    for _ in 0..10 {
        s.write_all(&[b'a'; 10]).unwrap();
    }
    assert_eq!(
        read_response(&mut s, false).unwrap().text(),
        "100 of Some(100)"
    );
    stop(&server);
}
