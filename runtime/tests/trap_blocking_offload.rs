//! Trap: a blocking call on a worker stalls every socket that worker owns.
//! Guard: `blocking(f)` runs `f` on the offload pool and parks only the calling fiber. While
//! blocking calls sleep 300 ms each (several, so every worker would be hit), eight echo
//! connections keep answering within 100 ms (a behaviour check with a wide margin).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_runtime::{blocking, spawn, Runtime, ShutdownToken};

#[test]
fn echo_connections_keep_answering_while_blocking_calls_sleep() {
    Runtime::builder().workers(2).build().expect("runtime");
    let token = ShutdownToken::new();
    let addr = common::echo_server(token.clone());

    let mut conns: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(addr).unwrap()).collect();
    // Warm every connection up so its serving fiber exists before the blocking calls start.
    for c in &mut conns {
        c.write_all(b"x").unwrap();
        assert_eq!(common::read_n(c, 1), b"x");
    }

    let done = Arc::new(AtomicBool::new(false));
    let sleepers: Vec<_> = (0..4)
        .map(|_| spawn(|| blocking(|| std::thread::sleep(Duration::from_millis(300)))))
        .collect();
    let watcher = {
        let done = done.clone();
        std::thread::spawn(move || {
            for s in sleepers {
                s.join().unwrap().unwrap();
            }
            done.store(true, Ordering::SeqCst);
        })
    };

    let mut worst = Duration::ZERO;
    let mut rounds = 0;
    while !done.load(Ordering::SeqCst) {
        for c in &mut conns {
            let t = Instant::now();
            c.write_all(b"ping").unwrap();
            let mut buf = [0u8; 4];
            c.read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"ping");
            worst = worst.max(t.elapsed());
        }
        rounds += 1;
    }
    watcher.join().unwrap();
    token.trigger();
    assert!(
        rounds > 1,
        "the blocking calls finished before any round trip"
    );
    assert!(
        worst < Duration::from_millis(100),
        "a round trip took {worst:?} while blocking calls ran"
    );
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
