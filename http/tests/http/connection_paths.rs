//! The connection loop's less travelled paths, each over plain TCP and TLS: keep-alive until the
//! idle timeout (and not after), heads split across reads, heads larger than the initial read
//! buffer, pipelined heads straddling the end of the buffer, a client that leaves mid-response,
//! a client that stops reading (write timeout), and a body that fails after its head was sent.

use std::io::{self, Read, Write};
use std::time::Duration;

use crate::common::tls::Fixture;
use crate::common::*;
use moria_http::{Body, HandlerResult, Request, Response, Server};

/// Size of the bodies that cannot fit in any socket buffer.
const HUGE: u64 = 1 << 30;
/// Initial read buffer of a connection (`h1::conn::INIT_READ_BUF`).
const INIT_READ_BUF: usize = 16 * 1024;

/// `/len`: the request's header count, their total value length and body length;
/// `/huge`: 1 GiB of a known length; `/endless`: a streamed 1 GiB; `/fail-stream`,
/// `/fail-reader`: bodies that fail after some bytes; otherwise `path body-length`.
fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut body = Vec::new();
    req.body().read_to_end(&mut body)?;
    match req.path() {
        "/len" => {
            let values: usize = req.headers().map(|(_, v)| v.len()).sum();
            res.body(format!("{} {values}", req.headers().count()));
        }
        "/huge" => {
            res.body(Body::reader(io::repeat(b'h').take(HUGE), Some(HUGE)));
        }
        "/endless" => {
            res.body(Body::stream(|w| {
                let block = [b'e'; 64 * 1024];
                for _ in 0..HUGE / block.len() as u64 {
                    w.write_all(&block)?;
                }
                Ok(())
            }));
        }
        "/fail-stream" => {
            res.body(Body::stream(|w| {
                w.write_all(b"partial")?;
                w.flush()?;
                Err(io::Error::other("the source broke"))
            }));
        }
        "/fail-reader" => {
            res.body(Body::reader(
                io::Cursor::new(b"partial".to_vec()).chain(Broken),
                Some(100),
            ));
        }
        path => {
            res.body(format!("{path} {}", body.len()));
        }
    }
    Ok(())
}

/// A reader that fails.
struct Broken;

impl Read for Broken {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::other("the source broke"))
    }
}

fn each_transport(builder: impl Fn() -> moria_http::ServerBuilder, test: impl Fn(&Fixture)) {
    for tls in [false, true] {
        let f = Fixture::start(tls, builder(), handler);
        test(&f);
        stop(&f.server);
    }
}

fn get(s: &mut dyn ClientConn, path: &str) -> Resp {
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    read_response(s, false).expect("a response")
}

#[test]
fn keep_alive_connection_is_usable_until_its_idle_timeout() {
    // Idle gaps shorter than the timeout, adding up to more than it: the timer restarts with
    // each request. The sleeps are the idle time under test, not synchronisation.
    let timeout = Duration::from_secs(2);
    each_transport(
        || Server::builder().keep_alive_timeout(timeout),
        |f| {
            let mut s = f.connect();
            for i in 0..4 {
                std::thread::sleep(Duration::from_millis(700));
                assert_eq!(get(&mut *s, &format!("/{i}")).text(), format!("/{i} 0"));
            }
            // Then a silence longer than the timeout ends the connection.
            assert_closed(&mut *s);
        },
    );
}

#[test]
fn head_split_across_many_reads() {
    each_transport(Server::builder, |f| {
        let mut s = f.connect();
        let raw = b"POST /split HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc";
        // Every byte its own write (TLS: its own record); the server sees the head grow a
        // little at a time, including between the CR and LF of the final empty line.
        for b in raw {
            s.write_all(&[*b]).unwrap();
            s.flush().unwrap();
            std::thread::sleep(Duration::from_millis(1));
        }
        let r = read_response(&mut *s, false).unwrap();
        assert_eq!(r.text(), "/split 3");
        assert_eq!(get(&mut *s, "/after").text(), "/after 0");
    });
}

#[test]
fn head_larger_than_the_initial_buffer() {
    each_transport(Server::builder, |f| {
        let mut s = f.connect();
        // 40 headers of 1000 bytes: 2.5 times the initial buffer, below the 64 KiB head limit.
        let mut raw = b"GET /len HTTP/1.1\r\nHost: localhost\r\n".to_vec();
        for i in 0..40 {
            write!(raw, "X-Pad-{i:02}: {}\r\n", "p".repeat(1000)).unwrap();
        }
        raw.extend_from_slice(b"\r\n");
        assert!(raw.len() > 2 * INIT_READ_BUF);
        // Sent in pieces, so the buffer grows while the head is incomplete; a small request
        // pipelined right behind it must survive the growth.
        raw.extend_from_slice(b"GET /next HTTP/1.1\r\nHost: localhost\r\n\r\n");
        for piece in raw.chunks(3000) {
            s.write_all(piece).unwrap();
            s.flush().unwrap();
        }
        assert_eq!(read_response(&mut *s, false).unwrap().text(), "41 40009");
        assert_eq!(read_response(&mut *s, false).unwrap().text(), "/next 0");
        // The connection keeps working afterwards.
        assert_eq!(get(&mut *s, "/again").text(), "/again 0");
    });
}

#[test]
fn pipelined_heads_straddle_the_end_of_the_buffer() {
    each_transport(Server::builder, |f| {
        let mut s = f.connect();
        // Requests of every size from 60 to about 700 bytes, some with bodies, in one write of
        // several buffers' worth: heads and bodies end up split at every buffer boundary and
        // partial heads get moved to the front of the buffer.
        let mut batch = Vec::new();
        let mut expected = Vec::new();
        for i in 0..300usize {
            let pad = "x".repeat(i * 7 % 613);
            if i % 3 == 0 {
                let body = "b".repeat(i % 97);
                write!(
                    batch,
                    "POST /{i} HTTP/1.1\r\nHost: localhost\r\nX-Pad: {pad}\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                expected.push(format!("/{i} {}", body.len()));
            } else {
                write!(
                    batch,
                    "GET /{i} HTTP/1.1\r\nHost: localhost\r\nX-Pad: {pad}\r\n\r\n"
                )
                .unwrap();
                expected.push(format!("/{i} 0"));
            }
        }
        assert!(batch.len() > 5 * INIT_READ_BUF);
        // The answers (about 45 KB) fit in the client's socket buffer while it writes.
        s.write_all(&batch).unwrap();
        for want in expected {
            assert_eq!(
                read_response(&mut *s, false).expect("a response").text(),
                want
            );
        }
    });
}

#[test]
fn client_leaving_mid_response_frees_the_connection() {
    each_transport(Server::builder, |f| {
        for path in ["/huge", "/endless"] {
            let mut s = f.connect();
            write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
            let mut some = [0u8; 4096];
            s.read_exact(&mut some).unwrap();
            assert!(some.starts_with(b"HTTP/1.1 200 OK\r\n"));
            // Gone with a gigabyte still to send: the server's next writes fail.
            drop(s);
            wait_until(
                &format!("{path}: the server to drop the connection"),
                || f.server.connections() == 0,
            );
        }
        let mut s = f.connect();
        assert_eq!(get(&mut *s, "/still-serving").text(), "/still-serving 0");
    });
}

#[test]
fn write_timeout_ends_a_connection_whose_client_stopped_reading() {
    each_transport(
        || Server::builder().write_timeout(Duration::from_millis(500)),
        |f| {
            for path in ["/huge", "/endless"] {
                let mut s = f.connect();
                write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
                let mut head = [0u8; 12];
                s.read_exact(&mut head).unwrap();
                assert_eq!(&head, b"HTTP/1.1 200");
                // Then the client reads nothing until the server gave up writing.
                wait_until(
                    &format!("{path}: the write timeout to end the connection"),
                    || f.server.connections() == 0,
                );
                let mut got = 0u64;
                let mut buf = vec![0u8; 64 * 1024];
                let end = loop {
                    match s.read(&mut buf) {
                        Ok(0) => break Ok(()),
                        Ok(n) => got += n as u64,
                        Err(e) => break Err(e),
                    }
                };
                if let Err(e) = end {
                    let ended = [io::ErrorKind::ConnectionReset, io::ErrorKind::UnexpectedEof];
                    assert!(ended.contains(&e.kind()), "{path} tls {}: {e}", f.is_tls());
                }
                assert!(got < HUGE, "{path}: the whole body arrived ({got} bytes)");
            }
        },
    );
}

#[test]
fn body_failing_after_its_head_truncates_and_closes() {
    each_transport(Server::builder, |f| {
        // Chunked: the last chunk never comes, so the client cannot take the body as complete.
        let mut s = f.connect();
        write!(s, "GET /fail-stream HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let raw = read_until_closed(&mut *s);
        let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 200 ok\r\n"), "{text}");
        assert!(text.contains("transfer-encoding: chunked\r\n"), "{text}");
        assert!(text.contains("partial"), "{text}");
        assert!(
            !text.ends_with("0\r\n\r\n"),
            "a failed body was terminated: {text}"
        );

        // Known length: fewer bytes than announced, then the close.
        let mut s = f.connect();
        write!(s, "GET /fail-reader HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let raw = read_until_closed(&mut *s);
        let text = String::from_utf8_lossy(&raw).to_ascii_lowercase();
        assert!(text.contains("content-length: 100\r\n"), "{text}");
        let body = &raw[raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
        assert!(body.len() < 100, "{text}");
    });
}
