//! Unix-domain stream sockets in blocking style.

use std::io;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use super::delegate::{engine_timeouts, forward_io};
use crate::engine;

/// A listening Unix-domain socket.
#[derive(Debug)]
pub struct UnixListener {
    inner: may::os::unix::net::UnixListener,
}

impl UnixListener {
    /// Binds a socket file at `path` (which must not exist).
    pub fn bind(path: impl AsRef<Path>) -> io::Result<Self> {
        engine::ensure();
        may::os::unix::net::UnixListener::bind(path).map(|inner| UnixListener { inner })
    }

    /// Waits for the next connection.
    pub fn accept(&mut self) -> io::Result<(UnixStream, SocketAddr)> {
        self.inner
            .accept()
            .map(|(inner, addr)| (UnixStream { inner }, addr))
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A connected Unix-domain stream; `Read + Write`.
#[derive(Debug)]
pub struct UnixStream {
    inner: may::os::unix::net::UnixStream,
}

impl UnixStream {
    /// Connects to the socket at `path`.
    pub fn connect(path: impl AsRef<Path>) -> io::Result<Self> {
        engine::ensure();
        may::os::unix::net::UnixStream::connect(path).map(|inner| UnixStream { inner })
    }

    /// A connected pair.
    pub fn pair() -> io::Result<(Self, Self)> {
        engine::ensure();
        let (a, b) = may::os::unix::net::UnixStream::pair()?;
        Ok((UnixStream { inner: a }, UnixStream { inner: b }))
    }

    /// Shuts down one or both directions.
    pub fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
        self.inner.shutdown(how)
    }

    /// Splits into two handles with their own descriptors: one to read, one to write.
    pub fn split(self) -> io::Result<(UnixStream, UnixStream)> {
        let writer = UnixStream {
            inner: self.inner.try_clone()?,
        };
        Ok((self, writer))
    }
}

engine_timeouts!(UnixStream);
forward_io!(read: UnixStream);
forward_io!(write: UnixStream);
forward_io!(fd: UnixStream);
