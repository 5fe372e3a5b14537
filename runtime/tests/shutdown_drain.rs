//! Shutdown: a token stops a blocked accept loop; drain waits for fibers up to a deadline.

use std::time::Duration;

use moria_runtime::net::TcpListener;
use moria_runtime::shutdown::drain;
use moria_runtime::sync::{Event, Reset};
use moria_runtime::{spawn, Deadline, Runtime, ShutdownToken};

#[test]
fn triggering_the_token_stops_a_blocked_accept_loop() {
    Runtime::builder().workers(2).build().expect("runtime");
    let token = ShutdownToken::new();
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = token.clone();
    let accept_loop = spawn(move || {
        let mut accepted = 0;
        while let Some((_conn, _)) = listener.accept_until(&t).unwrap() {
            accepted += 1;
        }
        accepted
    });
    let _c = std::net::TcpStream::connect(addr).unwrap();
    // The loop is parked in accept (or about to be); firing the token must end it.
    token.trigger();
    let accepted = accept_loop.join().unwrap();
    assert!(accepted <= 1);
    assert!(token.is_triggered());
    assert!(token.wait_timeout(Duration::from_millis(1)));
}

#[test]
fn accept_until_from_a_plain_thread_stops_too() {
    let token = ShutdownToken::new();
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let t = token.clone();
    let th = std::thread::spawn(move || listener.accept_until(&t).unwrap().is_none());
    token.trigger();
    assert!(th.join().unwrap());
}

#[test]
fn drain_waits_for_fibers_and_reports_stragglers() {
    Runtime::builder().workers(2).build().expect("runtime");
    let release = std::sync::Arc::new(Event::new(Reset::Manual));
    let r = release.clone();
    let straggler = spawn(move || r.wait());
    let err = drain(Deadline::after(Duration::from_millis(20))).unwrap_err();
    assert!(err.remaining >= 1, "{err}");
    release.set();
    straggler.join().unwrap();
    drain(Deadline::after(Duration::from_secs(10))).expect("all fibers finished");
}
