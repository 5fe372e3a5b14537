//! Trap: a blocking call on a worker stalls every socket that worker owns.
//! Guard: `blocking(f)` runs `f` on the offload pool and parks only the calling fiber. Four
//! blocking calls (twice the workers) hold their threads until the test releases them; all four
//! must be running at once, and eight echo connections spread over both workers must answer
//! while they are. No timing bound: a stalled worker shows as a wait that never ends, cut by
//! [`HANG_GUARD`] with a message saying so.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use moria_runtime::{blocking, spawn, ShutdownToken};

use crate::common;

/// How long a wait may last before the test calls it a stall (a failure, not a measurement).
const HANG_GUARD: Duration = Duration::from_secs(10);

#[test]
fn echo_connections_keep_answering_while_blocking_calls_hold_their_threads() {
    common::runtime();
    let token = ShutdownToken::new();
    let addr = common::echo_server(token.clone());

    let mut conns: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(addr).unwrap()).collect();
    // Warm every connection up so its serving fiber exists before the blocking calls start.
    for c in &mut conns {
        c.set_read_timeout(Some(HANG_GUARD)).unwrap();
        c.write_all(b"x").unwrap();
        assert_eq!(common::read_n(c, 1), b"x");
    }

    // Each call reports that it runs, then holds its thread until released. Run on a worker,
    // two of them would stall both workers and the other two would never start.
    let (started_tx, started) = mpsc::channel::<()>();
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let (release, held) = mpsc::channel::<()>();
            let started_tx = started_tx.clone();
            let call = spawn(move || {
                blocking(move || {
                    started_tx.send(()).unwrap();
                    held.recv()
                })
            });
            (release, call)
        })
        .collect();
    for n in 0..calls.len() {
        started.recv_timeout(HANG_GUARD).unwrap_or_else(|_| {
            panic!("only {n} of 4 blocking calls started: they are stalling the workers")
        });
    }

    // All four hold their threads now; every connection must still echo.
    for (i, c) in conns.iter_mut().enumerate() {
        c.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        c.read_exact(&mut buf).unwrap_or_else(|e| {
            panic!(
                "connection {i} got no echo while the blocking calls ran ({e}): a worker stalled"
            )
        });
        assert_eq!(&buf, b"ping");
    }

    for (release, call) in calls {
        release.send(()).unwrap();
        assert_eq!(call.join().unwrap().unwrap(), Ok(()));
    }
    token.trigger();
}

#[test]
fn blocking_returns_values_and_panics_as_errors() {
    let value = spawn(|| blocking(|| 6 * 7)).join().unwrap().unwrap();
    assert_eq!(value, 42);
    let err = spawn(|| blocking(|| -> u8 { panic!("disk on fire") }))
        .join()
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("disk on fire"), "{err}");
    // From a plain thread, the function runs inline.
    let here = std::thread::current().id();
    assert!(blocking(move || std::thread::current().id() == here).unwrap());
    let io = moria_runtime::blocking_io(|| -> std::io::Result<u8> { panic!("io boom") });
    assert!(io.unwrap_err().to_string().contains("io boom"));
}
