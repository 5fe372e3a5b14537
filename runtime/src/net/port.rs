//! [`spare_port`]: a loopback port for a child process that cannot listen on port 0 and report
//! the port back (nginx, tinyproxy, PostgreSQL in tests and benches).
//!
//! Binding `127.0.0.1:0`, reading the port and closing the listener races: until the child
//! binds, the kernel may hand the same port to anyone else's `bind(:0)` or to an outgoing
//! connection, and the child then fails with "address already in use" or, worse, a readiness
//! probe reaches the wrong server. Ports below the kernel's ephemeral range are never handed
//! out that way, so this picks from there: a process-wide rotation seeded by the process id
//! (two callers in one process never get the same port; two processes rarely start at the same
//! place), each candidate checked free by binding it.

use std::io;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// The lowest port handed out: well above the registered services most hosts run.
const FLOOR: u16 = 10_000;
/// Fewer spare ports than this below the ephemeral range: fall back to `bind(:0)`.
const MIN_SPAN: u16 = 1_000;

/// A port on 127.0.0.1 that is free now and that the kernel will not give to another socket
/// bound to port 0 or to an outgoing connection; see the module docs.
pub fn spare_port() -> io::Result<u16> {
    let low = ephemeral_low().unwrap_or(32_768);
    if low < FLOOR + MIN_SPAN {
        return TcpListener::bind("127.0.0.1:0")?
            .local_addr()
            .map(|a| a.port());
    }
    let span = u32::from(low - FLOOR);
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(2_654_435_761) % span,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    for _ in 0..span {
        let offset = NEXT.fetch_add(1, Ordering::Relaxed) % span;
        let port = FLOOR + offset as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        format!("no free loopback port in {FLOOR}..{low}"),
    ))
}

/// The first port of the kernel's ephemeral range (`net.ipv4.ip_local_port_range`).
fn ephemeral_low() -> Option<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_free_and_below_the_ephemeral_range() {
        let ports: Vec<u16> = (0..50).map(|_| spare_port().unwrap()).collect();
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ports.len(), "{ports:?}");
        let low = ephemeral_low().unwrap_or(32_768);
        for p in ports {
            if low >= FLOOR + MIN_SPAN {
                assert!((FLOOR..low).contains(&p), "{p} outside {FLOOR}..{low}");
            }
            TcpListener::bind(("127.0.0.1", p)).expect("still free");
        }
    }
}
