//! Shutdown: a token stops an accept loop waiting with nothing to accept (in a fiber and on a
//! plain thread).

use std::time::Duration;

use moria_runtime::net::TcpListener;
use moria_runtime::sync::channel;
use moria_runtime::{spawn, ShutdownToken};

use crate::common;

#[test]
fn triggering_the_token_stops_a_blocked_accept_loop() {
    common::runtime();
    let token = ShutdownToken::new();
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = token.clone();
    let (accepted_tx, accepted_rx) = channel::<()>();
    let accept_loop = spawn(move || {
        let mut accepted = 0;
        while let Some((_conn, _)) = listener.accept_until(&t).unwrap() {
            accepted += 1;
            accepted_tx.send(()).unwrap();
        }
        accepted
    });
    let _c = std::net::TcpStream::connect(addr).unwrap();
    // The loop has accepted once and gone back to a wait that nothing else will end: only the
    // token can stop it now.
    accepted_rx.recv().unwrap();
    token.trigger();
    assert_eq!(accept_loop.join().unwrap(), 1);
    assert!(token.is_triggered());
    assert!(token.wait_timeout(Duration::from_millis(1)));
}

#[test]
fn accept_until_from_a_plain_thread_stops_too() {
    let token = ShutdownToken::new();
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = token.clone();
    let (accepted_tx, accepted_rx) = std::sync::mpsc::channel::<()>();
    let th = std::thread::spawn(move || {
        let mut accepted = 0;
        while let Some((_conn, _)) = listener.accept_until(&t).unwrap() {
            accepted += 1;
            accepted_tx.send(()).unwrap();
        }
        accepted
    });
    let _c = std::net::TcpStream::connect(addr).unwrap();
    accepted_rx.recv().unwrap();
    token.trigger();
    assert_eq!(th.join().unwrap(), 1);
}
