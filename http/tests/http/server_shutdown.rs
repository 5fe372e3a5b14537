//! Graceful shutdown takes the prompt path: idle keep-alive connections (plain and TLS),
//! connections still in the TLS handshake and lingering connections are woken and closed at
//! once, an in-flight streamed response finishes first; when the grace period runs out the
//! abort path cuts every remaining connection and says so.
//!
//! Every server here has a grace period of [`TEST_GRACE`] (far above [`SHUTDOWN_BOUND`]), so
//! `stop` failing means a connection was not woken, never that the machine was slow.

use std::io::{Read, Write};
use std::time::Duration;

use crate::common::tls::{connect_tls, start_tls, Fixture};
use crate::common::*;
use moria_http::{Body, HandlerResult, Request, Response, Server};
use moria_runtime::sync::channel;

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body(format!("hi {}", req.path()));
    Ok(())
}

/// Sends one GET and checks the answer, leaving the connection idle in keep-alive.
fn get_ok(s: &mut dyn ClientConn, path: &str) {
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let r = read_response(s, false).expect("a response");
    assert_eq!(r.text(), format!("hi {path}"));
    assert_eq!(r.header("connection"), None, "keep-alive expected");
}

#[test]
fn idle_keep_alive_connections_close_at_once() {
    let server = start(Server::builder(), hello);
    let mut idle: Vec<_> = (0..8).map(|_| connect(server.local_addr())).collect();
    for (i, s) in idle.iter_mut().enumerate() {
        get_ok(s, &format!("/{i}"));
    }
    assert_eq!(server.connections(), 8);
    stop(&server);
    for s in &mut idle {
        assert_closed(s);
    }
    assert_eq!(server.connections(), 0);
}

#[test]
fn idle_tls_connections_close_at_once() {
    let t = start_tls(Server::builder(), hello);
    let addr = t.server.local_addr();
    let mut idle: Vec<_> = (0..4).map(|_| connect_tls(addr, &t.pem)).collect();
    for (i, s) in idle.iter_mut().enumerate() {
        get_ok(s, &format!("/{i}"));
    }
    stop(&t.server);
    for s in &mut idle {
        assert_closed(s);
    }
}

#[test]
fn connections_in_the_tls_handshake_close_at_once() {
    let t = start_tls(Server::builder(), hello);
    let addr = t.server.local_addr();
    // One says nothing; one sends the first bytes of a TLS record and stops.
    let mut silent = connect(addr);
    let mut partial = connect(addr);
    partial
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    // A full exchange on a third connection proves the first two were accepted.
    let mut s = connect_tls(addr, &t.pem);
    get_ok(&mut s, "/x");
    assert_eq!(t.server.connections(), 3);
    stop(&t.server);
    assert_closed(&mut silent);
    assert_closed(&mut partial);
    assert_closed(&mut s);
}

#[test]
fn a_lingering_connection_closes_at_once() {
    // After an error answer the server half-closes and reads what the client still sends for
    // up to two seconds; a shutdown must not wait for that.
    let server = start(Server::builder(), hello);
    let mut s = connect(server.local_addr());
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().status, 400);
    stop(&server);
    assert_closed(&mut s);
}

#[test]
fn in_flight_streamed_response_finishes_then_closes() {
    for tls in [false, true] {
        let (entered_tx, entered_rx) = channel::<()>();
        let (release_tx, release_rx) = channel::<()>();
        let handler = move |_: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            let (entered, release) = (entered_tx.clone(), release_rx.clone());
            res.body(Body::stream(move |w| {
                w.write_all(b"first half, ")?;
                w.flush()?;
                entered.send(()).map_err(std::io::Error::other)?;
                release.recv().map_err(std::io::Error::other)?;
                w.write_all(b"second half")
            }));
            Ok(())
        };
        let f = Fixture::start(tls, Server::builder(), handler);
        let server = &f.server;
        let mut s = f.connect();
        s.write_all(b"GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        entered_rx.recv().unwrap();
        server.shutdown_token().trigger();
        // The shutdown waits for the response in flight...
        assert_eq!(server.wait_timeout(Duration::from_millis(100)), None);
        release_tx.send(()).unwrap();
        let r = read_response(&mut *s, false).expect("the whole streamed response");
        assert_eq!(r.text(), "first half, second half", "tls: {tls}");
        // ...then ends it and is done without the grace period.
        stop(server);
        assert_closed(&mut *s);
    }
}

#[test]
fn grace_expiry_aborts_every_remaining_connection() {
    // The handler waits for a request body that never fully arrives (the body timeout is far
    // above the grace period); only the abort path can end it.
    let (entered_tx, entered_rx) = channel::<()>();
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .shutdown_grace(Duration::from_millis(300))
        .body_timeout(Duration::from_secs(600))
        .start(
            move |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
                entered_tx.send(()).unwrap();
                let mut body = Vec::new();
                let read = req.body().read_to_end(&mut body);
                res.body(format!("read {read:?}"));
                Ok(())
            },
        )
        .unwrap();
    let addr = server.local_addr();
    let mut busy: Vec<_> = (0..3).map(|_| connect(addr)).collect();
    for s in &mut busy {
        s.write_all(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nonly ten b")
            .unwrap();
        entered_rx.recv().unwrap();
    }
    server.shutdown_token().trigger();
    let report = server
        .wait_timeout(SHUTDOWN_BOUND)
        .expect("the abort path ends the shutdown");
    assert_eq!(report.aborted, 3);
    assert!(!report.is_graceful());
    assert_eq!(server.connections(), 0);
    for s in &mut busy {
        // Whatever the handler managed to say, the connection ends.
        let mut rest = Vec::new();
        match s.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
        }
    }
}
