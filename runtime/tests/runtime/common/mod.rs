//! Shared test helpers: the runtime configuration every test here shares, and an echo server on
//! 127.0.0.1:0 served by fibers.

use std::io::{Read, Write};
use std::net::SocketAddr;

use moria_runtime::net::TcpListener;
use moria_runtime::{spawn, Runtime, ShutdownToken};

/// Applies the configuration every test in this binary shares (the engine takes one per
/// process): two workers, defaults otherwise.
pub fn runtime() -> Runtime {
    Runtime::builder().workers(2).build().expect("runtime")
}

/// Starts an echo server (one fiber per connection) and returns its address.
pub fn echo_server(token: ShutdownToken) -> SocketAddr {
    let mut listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("local_addr");
    spawn(move || {
        while let Ok(Some((mut conn, _))) = listener.accept_until(&token) {
            spawn(move || {
                let mut buf = [0u8; 4096];
                loop {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if conn.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Reads exactly `n` bytes.
pub fn read_n(r: &mut impl Read, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.read_exact(&mut v).expect("read_exact");
    v
}
