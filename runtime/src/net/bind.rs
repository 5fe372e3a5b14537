//! Listening sockets through socket2: reuse-port only when asked for.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use socket2::{Domain, Protocol, Socket, Type};

use crate::blocking::blocking_io_borrowed;

/// Default listen backlog (the kernel caps it at `net.core.somaxconn`). Large on purpose: when a
/// burst of connects overflows the accept queue, Linux drops the handshake's last ACK and the
/// client, which believes it is connected, waits for SYN-ACK retransmits (1 s, 2 s, 4 s, ...).
pub const DEFAULT_BACKLOG: i32 = 4096;

/// Options for binding a listener.
#[derive(Clone, Copy, Debug)]
pub struct ListenOptions {
    /// Share the port with other sockets that also set SO_REUSEPORT (default off, so a busy
    /// port fails with `AddrInUse`).
    pub reuse_port: bool,
    /// Listen backlog (default [`DEFAULT_BACKLOG`]).
    pub backlog: i32,
}

impl Default for ListenOptions {
    fn default() -> Self {
        ListenOptions {
            reuse_port: false,
            backlog: DEFAULT_BACKLOG,
        }
    }
}

/// Resolves `addr` on the offload pool: `getaddrinfo` reads files and may wait on DNS, which
/// must never stall a worker (from a plain thread it runs in place).
pub(crate) fn resolve(addr: impl ToSocketAddrs + Send) -> io::Result<Vec<SocketAddr>> {
    let addrs = blocking_io_borrowed(move || Ok(addr.to_socket_addrs()?.collect::<Vec<_>>()))?;
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "address resolved to nothing",
        ));
    }
    Ok(addrs)
}

/// Resolves `addr` (on the offload pool) to its first address.
pub(crate) fn first_addr(addr: impl ToSocketAddrs + Send) -> io::Result<SocketAddr> {
    Ok(resolve(addr)?[0])
}

/// A bound, listening, non-blocking std listener.
pub(crate) fn listen(addr: SocketAddr, opts: ListenOptions) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // SO_REUSEADDR only lets a restarted server bind past TIME_WAIT; it never shares a port
    // that is actively listening on Linux.
    socket.set_reuse_address(true)?;
    if opts.reuse_port {
        socket.set_reuse_port(true)?;
    }
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(opts.backlog)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}
