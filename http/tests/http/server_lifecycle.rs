//! Server lifecycle over raw TCP: several listeners at once, per-worker SO_REUSEPORT listeners,
//! the connection cap pausing accept, graceful shutdown (in-flight requests finish, idle
//! keep-alive connections close, nothing new is accepted).

use std::io::Write;
use std::time::Duration;

use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};
use moria_runtime::sync::channel;

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body(format!("hi {}", req.path()));
    Ok(())
}

#[test]
fn listens_on_several_addresses() {
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .listen("127.0.0.1:0")
        .start(hello)
        .unwrap();
    let addrs = server.local_addrs().to_vec();
    assert_eq!(addrs.len(), 2);
    assert_ne!(addrs[0], addrs[1]);
    for a in addrs {
        assert_eq!(get(a, "/x").text().unwrap(), "hi /x");
    }
    stop(&server);
}

#[test]
fn per_worker_reuse_port_listeners_share_one_port() {
    let server = start(Server::builder().listeners_per_address(4), hello);
    assert_eq!(server.local_addrs().len(), 1);
    for i in 0..50 {
        let r = get(server.local_addr(), &format!("/{i}"));
        assert_eq!(r.text().unwrap(), format!("hi /{i}"));
    }
    stop(&server);
}

#[test]
fn busy_port_is_an_error() {
    let server = start(Server::builder(), hello);
    let err = Server::builder()
        .listen(server.local_addr().to_string())
        .start(hello)
        .unwrap_err();
    assert!(err.to_string().contains("cannot listen"), "{err}");
    stop(&server);
}

#[test]
fn bad_configuration_is_an_error() {
    assert!(Server::builder().start(hello).is_err(), "no listener");
    assert!(Server::builder()
        .listen("127.0.0.1:0")
        .max_headers(0)
        .start(hello)
        .is_err());
    assert!(Server::builder()
        .listen("127.0.0.1:0")
        .header_timeout(Duration::ZERO)
        .start(hello)
        .is_err());
    assert!(Server::builder()
        .listen("127.0.0.1:0")
        .server_header(Some("a\r\nb"))
        .start(hello)
        .is_err());
}

#[test]
fn over_the_connection_cap_clients_get_503_and_retry_after() {
    let server = start(Server::builder().max_connections(2), hello);
    let addr = server.local_addr();
    let mut a = connect(addr);
    let mut b = connect(addr);
    for s in [&mut a, &mut b] {
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_response(s, false).unwrap().status, 200);
    }
    assert_eq!(server.connections(), 2);
    // A third client is answered at once, not left waiting in the backlog.
    let mut c = connect(addr);
    c.write_all(b"GET /third HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let r = read_response(&mut c, false).expect("an answer at the cap");
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.header("connection"), Some("close"));
    assert_closed(&mut c);
    assert_eq!(server.stats().refused, 1);
    assert_eq!(server.connections(), 2);
    // Once a slot frees up, the next client is served.
    drop(a);
    wait_until("the closed connection to free its slot", || {
        server.connections() == 1
    });
    assert_eq!(get(addr, "/fourth").text().unwrap(), "hi /fourth");
    stop(&server);
}

#[test]
fn graceful_shutdown_finishes_in_flight_and_closes_idle() {
    // Fiber-aware channels: the handler parks its fiber, never the worker thread.
    let (entered_tx, entered_rx) = channel::<()>();
    let (release_tx, release_rx) = channel::<()>();
    let server = start(
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            if req.path() == "/slow" {
                entered_tx.send(()).unwrap();
                release_rx.recv().unwrap();
            }
            res.body("done");
            Ok(())
        },
    );
    let addr = server.local_addr();
    let mut idle = connect(addr);
    idle.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut idle, false).unwrap().status, 200);

    let busy = std::thread::spawn(move || {
        let mut s = connect(addr);
        s.write_all(b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n")
            .unwrap();
        read_response(&mut s, false)
    });
    entered_rx.recv().unwrap();
    let token = server.shutdown_token().clone();
    let stopper = std::thread::spawn(move || token.trigger());
    stopper.join().unwrap();
    // The idle keep-alive connection is closed by the shutdown.
    assert_closed(&mut idle);
    // The in-flight request still completes, with Connection: close.
    release_tx.send(()).unwrap();
    let r = busy.join().unwrap().expect("in-flight response");
    assert_eq!(r.text(), "done");
    assert_eq!(r.header("connection"), Some("close"));
    server.wait();
    assert_eq!(server.connections(), 0);
    // Nothing is accepted any more.
    let refused = std::net::TcpStream::connect(addr);
    if let Ok(mut late) = refused {
        assert_closed(&mut late);
    }
}
