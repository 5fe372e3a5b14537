//! `TlsStream::read_within`, the keep-alive wait of a TLS connection, in a fiber: nothing within
//! the time is `None` and the session goes on, bytes are `Some`, several records waiting are
//! read one call after another, and close_notify is end of stream. (A record that arrives in
//! pieces is `moria_session.rs`'s and `memio.rs`'s unit tests' business: over loopback the pieces
//! cannot be made to arrive apart without sleeping.)

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::fiber_runtime;
use crate::common::tls::fiber_tls_setup;
use moria_runtime::spawn;

const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// Long enough to never run out in the steps that expect bytes.
const LONG: Duration = Duration::from_secs(30);

#[test]
fn read_within_waits_reads_and_ends() {
    fiber_runtime().run(run).unwrap();
}

fn run() {
    let (acceptor, connector, mut listener, addr) = fiber_tls_setup();
    // The client sends nothing until the server's first wait is over, so that wait is empty.
    let (go_tx, go_rx) = mpsc::channel::<()>();

    let server = spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let mut tls = acceptor.accept(sock).unwrap();
        let mut buf = [0u8; 64];
        let mut got = Vec::new();
        let empty = tls
            .read_within(&mut buf, Duration::from_millis(30))
            .unwrap();
        go_tx.send(()).unwrap();
        loop {
            match tls.read_within(&mut buf, LONG).unwrap() {
                Some(0) => break,
                Some(n) => got.extend_from_slice(&buf[..n]),
                None => panic!("no bytes within {LONG:?}"),
            }
        }
        tls.shutdown().unwrap();
        (empty, got)
    });

    let client = std::thread::spawn(move || {
        let sock = std::net::TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let mut tls = connector.connect("localhost", sock).unwrap();
        go_rx.recv().unwrap();
        tls.write_all(b"hello").unwrap();
        tls.write_all(b", ").unwrap();
        tls.write_all(&[b'x'; 100]).unwrap();
        tls.shutdown().unwrap();
        let mut rest = Vec::new();
        tls.read_to_end(&mut rest).unwrap();
        rest
    });

    let (empty, got) = server.join().unwrap();
    assert_eq!(empty, None, "nothing was sent within the time");
    let mut want = b"hello, ".to_vec();
    want.extend_from_slice(&[b'x'; 100]);
    assert_eq!(got, want, "every record, in order, then end of stream");
    assert!(
        client.join().unwrap().is_empty(),
        "close_notify answered, nothing else"
    );
}
