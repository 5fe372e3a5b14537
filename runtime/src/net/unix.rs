//! Unix-domain stream sockets in blocking style.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

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

    /// Read timeout; expiry is `TimedOut`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner
            .set_read_timeout(engine::socket_timeout(timeout)?)
    }

    /// Write timeout; expiry is `TimedOut`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner
            .set_write_timeout(engine::socket_timeout(timeout)?)
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

impl Read for UnixStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Write for UnixStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}
