//! Idle keep-alive connections park (no fiber, no buffers) and wake when bytes arrive: a
//! request racing the park, a head split across it, a half-close while parked, the keep-alive
//! timeout and a shutdown with as many parked as the descriptor limit allows, and a TLS session going on across many parks.
//! `Server::stats().parked` tells when a connection has parked, so no step guesses with a sleep.
//! Connections park after `park_after` (20 ms by default) of silence, or at once with zero;
//! one that came back from the lot after such a pause waits 64 times longer from then on.
//! The shutdown at the descriptor limit runs in a process of its own (`common::process`): the
//! limit and the count of live fibers are the process's.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::time::Duration;

use crate::common::process::own_process;
use crate::common::tls::Fixture;
use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};

fn echo(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let body = res.body_mut();
    req.body().read_to_end(body)?;
    if body.is_empty() {
        body.extend_from_slice(req.path().as_bytes());
    }
    Ok(())
}

fn sha256(b: &[u8]) -> Vec<u8> {
    moria_crypto::hash("sha256", b).unwrap().as_ref().to_vec()
}

fn wait_parked(server: &Server, n: u64) {
    wait_until(&format!("{n} parked connections"), || {
        server.stats().parked == n
    });
}

fn get(s: &mut dyn ClientConn, path: &str) -> String {
    write!(s, "GET {path} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = read_response(s, false).expect("a response");
    assert_eq!(r.status, 200);
    r.text()
}

#[test]
fn requests_sent_the_moment_the_connection_parks_are_all_answered() {
    // Parking at once (every answer races a park) and after a pause (1 ms, then 64 ms once
    // the connection came back from the lot: the 50 parks below stay quick).
    for (tls, park_after) in [
        (false, Duration::ZERO),
        (true, Duration::ZERO),
        (false, Duration::from_millis(1)),
    ] {
        let f = Fixture::start(tls, Server::builder().park_after(park_after), echo);
        let mut s = f.connect();
        // Each request goes out as soon as the previous answer is read: it races the park.
        for i in 0..300 {
            assert_eq!(get(&mut *s, &format!("/r{i}")), format!("/r{i}"));
        }
        // Two at once after a confirmed park: both answered, in order.
        wait_parked(&f.server, 1);
        s.write_all(b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
            .unwrap();
        assert_eq!(read_response(&mut *s, false).unwrap().text(), "/a");
        assert_eq!(read_response(&mut *s, false).unwrap().text(), "/b");
        // Over TLS two writes are two records, usually read by the server at once: the second
        // waits decrypted-or-not in the TLS buffers, where parking would strand it.
        for i in 0..50 {
            wait_parked(&f.server, 1);
            write!(s, "GET /c{i} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
            write!(s, "GET /d{i} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
            assert_eq!(
                read_response(&mut *s, false).unwrap().text(),
                format!("/c{i}")
            );
            assert_eq!(
                read_response(&mut *s, false).unwrap().text(),
                format!("/d{i}")
            );
        }
        stop(&f.server);
    }
}

#[test]
fn a_head_split_across_a_park_is_put_together() {
    for tls in [false, true] {
        let f = Fixture::start(tls, Server::builder(), echo);
        let mut s = f.connect();
        assert_eq!(get(&mut *s, "/first"), "/first");
        wait_parked(&f.server, 1);
        s.write_all(b"POST /sec").unwrap();
        s.flush().unwrap();
        wait_parked(&f.server, 0);
        s.write_all(b"ond HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel")
            .unwrap();
        s.flush().unwrap();
        s.write_all(b"lo").unwrap();
        let r = read_response(&mut *s, false).expect("a response");
        assert_eq!(r.text(), "hello");
        assert_eq!(get(&mut *s, "/third"), "/third");
        stop(&f.server);
    }
}

#[test]
fn a_client_half_closing_while_parked_gets_its_last_answer_then_a_close() {
    let server = start(Server::builder(), echo);
    let mut idle = connect(server.local_addr());
    assert_eq!(get(&mut idle, "/x"), "/x");
    let mut last = connect(server.local_addr());
    assert_eq!(get(&mut last, "/y"), "/y");
    wait_parked(&server, 2);

    idle.shutdown(Shutdown::Write).unwrap();
    assert_closed(&mut idle);

    last.write_all(b"GET /last HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    last.shutdown(Shutdown::Write).unwrap();
    assert_eq!(read_response(&mut last, false).unwrap().text(), "/last");
    assert_closed(&mut last);
    wait_until("both connections gone", || server.connections() == 0);
    stop(&server);
}

#[test]
fn the_keep_alive_timeout_closes_parked_connections() {
    for tls in [false, true] {
        // Long enough for each connection to park before its clock runs out on a loaded
        // machine (300 ms was not), short enough for a quick test.
        let f = Fixture::start(
            tls,
            Server::builder().keep_alive_timeout(Duration::from_secs(2)),
            echo,
        );
        // Each connection asks at once: a fresh connection's keep-alive clock runs too.
        let mut conns: Vec<_> = (0..5)
            .map(|_| {
                let mut s = f.connect();
                assert_eq!(get(&mut *s, "/t"), "/t");
                s
            })
            .collect();
        // Each of the five parks once (no bytes come to wake it): counted as parks, not as
        // parked at one moment, since on a starved machine the first may time out before the
        // last has connected.
        wait_until("five parks", || f.server.stats().parks == 5);
        for s in &mut conns {
            assert_closed(&mut **s);
        }
        wait_until("the timed-out connections gone", || {
            f.server.connections() == 0
        });
        assert_eq!(f.server.stats().parked, 0);
        stop(&f.server);
    }
}

/// Most connections the test can hold: client and server ends live in this process, so two
/// descriptors each, with room for the rest; capped to keep the test short on big limits.
fn max_test_connections() -> usize {
    let (_, limit) = moria_runtime::startup::raise_nofile_limit().expect("raise RLIMIT_NOFILE");
    let n = (limit.saturating_sub(512) / 2).min(25_000) as usize;
    assert!(
        n >= 1000,
        "RLIMIT_NOFILE allows {limit} descriptors: too few for this test (raise the hard limit)"
    );
    n
}

#[test]
fn shutdown_closes_as_many_parked_connections_as_the_fd_limit_allows_holding_no_fiber() {
    // The descriptor limit and the live fibers are the process's: no other test may share them.
    if !own_process(
        module_path!(),
        "shutdown_closes_as_many_parked_connections_as_the_fd_limit_allows_holding_no_fiber",
    ) {
        return;
    }
    let n = max_test_connections();
    let server = start(Server::builder().max_connections(n + 10), echo);
    let fibers_before = moria_runtime::stats().fibers_live;
    let mut conns: Vec<_> = (0..n)
        .map(|i| {
            let mut s = connect(server.local_addr());
            assert_eq!(get(&mut s, &format!("/{i}")), format!("/{i}"));
            s
        })
        .collect();
    wait_parked(&server, n as u64);
    let runtime = moria_runtime::stats();
    println!(
        "{n} idle keep-alive connections\n{runtime}{}",
        server.stats()
    );
    // The test runs alone in its process: only its own server's fibers are live.
    assert!(
        runtime.fibers_live < fibers_before + n as u64 / 10,
        "{} fibers live with {n} parked connections ({fibers_before} before)",
        runtime.fibers_live
    );
    assert!(runtime.sockets_parked >= n as u64);
    assert_eq!(server.stats().busy_states, 0);
    assert_eq!(server.connections(), n);
    stop(&server);
    for s in &mut conns {
        assert_closed(s);
    }
}

#[test]
fn a_tls_session_goes_on_intact_across_many_parks() {
    // Parking after every answer: a connection that came back from the lot after a pause
    // waits 64 times longer from then on.
    let f = Fixture::start(true, Server::builder().park_after(Duration::ZERO), echo);
    let mut s = f.connect();
    let mut sent = Vec::new();
    let mut received = Vec::new();
    for round in 0..120u32 {
        let len = (round as usize * 7919) % 40_000 + 1;
        let body: Vec<u8> = (0..len)
            .map(|i| (i as u32).wrapping_mul(round + 1) as u8)
            .collect();
        write!(
            s,
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: {len}\r\n\r\n"
        )
        .unwrap();
        s.write_all(&body).unwrap();
        let r = read_response(&mut *s, false).expect("a response");
        received.extend_from_slice(&r.body);
        sent.extend_from_slice(&body);
        wait_parked(&f.server, 1);
    }
    assert_eq!(received.len(), sent.len());
    assert_eq!(sha256(&received), sha256(&sent));
    assert_eq!(
        f.server.stats().tls_handoffs,
        1,
        "the session left OpenSSL once and stayed with moria-crypto across the parks"
    );
    stop(&f.server);
}

/// Answered twice, a connection waits `park_after` in its fiber for the next request; it gives
/// its working state back to the pool meanwhile, and the request that ends the wait is read
/// whole however large (its first bytes land in a small buffer of the wait).
#[test]
fn a_connection_waiting_in_its_fiber_holds_no_working_state_and_takes_any_request() {
    let filler: String = (0..60)
        .map(|i| format!("X-Filler-{i}: {}\r\n", "v".repeat(60)))
        .collect();
    let body: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    for tls in [false, true] {
        let f = Fixture::start(
            tls,
            Server::builder()
                .park_after(Duration::from_secs(60))
                .keep_alive_timeout(Duration::from_secs(120)),
            echo,
        );
        let waiting = || {
            wait_until("the waiting connection's state back in the pool", || {
                let stats = f.server.stats();
                stats.busy_states == 0 && stats.pooled_states >= 1
            });
        };
        let mut s = f.connect();
        assert_eq!(get(&mut *s, "/one"), "/one");
        assert_eq!(get(&mut *s, "/two"), "/two");
        waiting();

        let mut big = format!(
            "POST /big HTTP/1.1\r\nHost: a\r\n{filler}Content-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        big.extend_from_slice(&body);
        s.write_all(&big).unwrap();
        assert!(read_response(&mut *s, false).unwrap().body == body);
        waiting();

        let pair = format!(
            "GET /p1 HTTP/1.1\r\nHost: a\r\n{filler}\r\nGET /p2 HTTP/1.1\r\nHost: a\r\n\r\n"
        );
        s.write_all(pair.as_bytes()).unwrap();
        assert_eq!(read_response(&mut *s, false).unwrap().text(), "/p1");
        assert_eq!(read_response(&mut *s, false).unwrap().text(), "/p2");
        waiting();
        assert_eq!(f.server.stats().parked, 0, "it waited in its fiber");

        // A shutdown ends the wait.
        stop(&f.server);
        assert_closed(&mut *s);
    }
}
