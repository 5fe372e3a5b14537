//! 5,000 client fibers each hold a TCP connection to one of 5,000 server fibers (10,000 sockets
//! in one process, all open at once) and complete an echo round trip.
//!
//! A test binary of its own: it holds 10,000 descriptors and keeps both workers busy, so in the
//! shared `runtime` binary other tests' waits would depend on it. Run beside the UDP and Unix
//! socket tests in one process (`runtime --test-threads=8 net_ten_thousand net_udp_unix` with
//! this file as a module), it hung in about half the runs until dropped Unix sockets left the
//! engine's epoll before closing their descriptors: see runtime/README.md, "Tests".

use std::io::Write;
use std::sync::Arc;

use moria_runtime::net::TcpStream;
use moria_runtime::sync::WaitGroup;
use moria_runtime::{spawn, stats, Runtime, ShutdownToken};

// `runtime()` there is the shared binary's configuration; this one plans 10,000 fibers.
#[allow(dead_code)]
#[path = "runtime/common/mod.rs"]
mod common;

const CLIENTS: usize = 5_000;

#[test]
fn five_thousand_connections_echo_at_once() {
    Runtime::builder()
        .workers(2)
        .planned_fibers(2 * CLIENTS)
        .build()
        .expect("runtime");
    let token = ShutdownToken::new();
    let addr = common::echo_server(token.clone());
    let all_connected = Arc::new(WaitGroup::new());
    all_connected.add(CLIENTS);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let all_connected = all_connected.clone();
            spawn(move || {
                let mut s = TcpStream::connect(addr).expect("connect");
                all_connected.done();
                all_connected.wait(); // every socket is open before anyone talks
                let msg = format!("client {i:05}");
                s.write_all(msg.as_bytes()).expect("write");
                let got = common::read_n(&mut s, msg.len());
                got == msg.as_bytes()
            })
        })
        .collect();
    let ok = clients
        .into_iter()
        .filter_map(|c| c.join().ok())
        .filter(|ok| *ok)
        .count();
    assert_eq!(ok, CLIENTS);
    assert!(stats().fibers_spawned as usize >= 2 * CLIENTS);
    token.trigger();
}
