//! The connection pool: retry on a connection the server closed while idle (idempotent methods
//! only), the per-host cap with waits and their timeout, idle limits, idle expiry.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::raw::{read_head, RawServer};
use crate::common::*;
use moria_http::client::{Client, Error, Phase, Url};
use moria_http::{HandlerResult, Request, Response, Server};

/// A server whose first connection answers one request, then reads the next request and
/// closes without a byte of answer (the race of a server closing an idle connection just as
/// the client reuses it); later connections answer every request with the connection's index.
fn closes_after_first_answer() -> RawServer {
    RawServer::start(|mut s, index| {
        while read_head(&mut s).is_some() {
            if index == 0
                && s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n0")
                    .is_ok()
            {
                read_head(&mut s);
                return;
            }
            let body = index.to_string();
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
            if s.write_all(format!("{head}{body}").as_bytes()).is_err() {
                return;
            }
        }
    })
}

#[test]
fn idempotent_request_on_a_dead_reused_connection_is_retried_once_on_a_new_one() {
    let server = closes_after_first_answer();
    let client = Client::new().unwrap();
    assert_eq!(
        client.get(&server.url("/")).send().unwrap().text().unwrap(),
        "0"
    );
    let r = client.get(&server.url("/")).send().unwrap();
    assert_eq!(r.text().unwrap(), "1", "answered on the second connection");
    assert_eq!(server.accepted(), 2);
}

#[test]
fn the_retry_works_over_tls_too() {
    let (acceptor, pem) = crate::common::tls::acceptor();
    let server = RawServer::start(move |s, index| {
        let Ok(mut s) = acceptor.accept(s) else {
            return;
        };
        while read_head(&mut s).is_some() {
            let body = index.to_string();
            let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n{body}");
            if s.write_all(answer.as_bytes()).is_err() || index == 0 {
                // The first connection reads the next request, then drops without a word.
                read_head(&mut s);
                return;
            }
        }
    });
    let client = Client::builder()
        .add_root_certificate_pem(&pem)
        .build()
        .unwrap();
    let target = format!("https://localhost:{}/", server.addr.port());
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "0");
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "1");
    assert_eq!(server.accepted(), 2);
}

#[test]
fn non_idempotent_request_on_a_dead_reused_connection_is_not_retried() {
    let server = closes_after_first_answer();
    let client = Client::new().unwrap();
    assert_eq!(
        client.get(&server.url("/")).send().unwrap().text().unwrap(),
        "0"
    );
    let err = client
        .post(&server.url("/"))
        .body("once")
        .send()
        .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert_eq!(server.accepted(), 1, "the POST was not sent again");
}

fn hello(_: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body("hello");
    Ok(())
}

#[test]
fn the_open_cap_makes_requests_wait_and_the_wait_can_time_out() {
    let server = start(Server::builder(), hello);
    let target = url(&server, "/");
    let client = Client::builder()
        .pool_max_open_per_host(1)
        .pool_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let held = client.get(&target).send().unwrap();
    let err = client.get(&target).send().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                phase: Phase::Pool,
                ..
            }
        ),
        "{err}"
    );
    // Reading the held body to its end frees the slot for the next request.
    assert_eq!(held.text().unwrap(), "hello");
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    // A response dropped unread closes its connection and frees the slot too.
    drop(client.get(&target).send().unwrap());
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    assert_eq!(server.stats().accepted, 2);
    stop(&server);
}

#[test]
fn many_fibers_under_a_small_cap_all_get_through() {
    let server = start(Server::builder(), hello);
    let target = url(&server, "/");
    let client = Client::builder().pool_max_open_per_host(2).build().unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..50)
        .map(|_| {
            let (client, target, done) = (client.clone(), target.clone(), Arc::clone(&done));
            moria_runtime::spawn(move || {
                for _ in 0..10 {
                    let text = client.get(&target).send()?.text()?;
                    assert_eq!(text, "hello");
                    done.fetch_add(1, Ordering::SeqCst);
                }
                Ok::<(), Error>(())
            })
        })
        .collect();
    for h in handles {
        h.join().expect("fiber").expect("requests");
    }
    assert_eq!(done.load(Ordering::SeqCst), 500);
    assert!(server.stats().accepted <= 2, "{:?}", server.stats());
    let origin = Url::parse(&target).unwrap();
    assert_eq!(client.open_connections(&origin), 2);
    stop(&server);
}

#[test]
fn no_idle_room_means_a_connection_per_request() {
    let server = start(Server::builder(), hello);
    let target = url(&server, "/");
    let client = Client::builder().pool_max_idle_per_host(0).build().unwrap();
    for _ in 0..5 {
        assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    }
    assert_eq!(server.stats().accepted, 5);
    stop(&server);
}

#[test]
fn idle_connections_expire() {
    let server = start(Server::builder(), hello);
    let target = url(&server, "/");
    let client = Client::builder()
        .pool_idle_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    // The idle gap is the behaviour under test.
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    assert_eq!(server.stats().accepted, 2);
    stop(&server);
}

#[test]
fn a_connection_the_server_closed_while_idle_is_not_used() {
    let server = start(
        Server::builder().keep_alive_timeout(Duration::from_millis(50)),
        hello,
    );
    let target = url(&server, "/");
    let client = Client::new().unwrap();
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    wait_until("the server closed the idle connection", || {
        server.connections() == 0
    });
    assert_eq!(client.get(&target).send().unwrap().text().unwrap(), "hello");
    assert_eq!(server.stats().accepted, 2);
    stop(&server);
}
