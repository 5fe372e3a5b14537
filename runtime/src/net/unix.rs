//! Unix-domain stream sockets in blocking style.

use std::io;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use std::os::fd::{FromRawFd, IntoRawFd};
use std::time::Duration;

use super::accept::accept_loop;
use super::delegate::forward_io;
use super::tcp::adopt;
use super::timeouts::{lazy_timeout_io, timeouts, Timeouts};
use crate::engine::io::{CoIo, Registered};
use crate::shutdown::ShutdownToken;
use crate::time::Deadline;
use crate::{config, engine};

/// A listening Unix-domain socket.
pub struct UnixListener {
    inner: Registered<CoIo<std::os::unix::net::UnixListener>>,
}

impl std::fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixListener")
            .field("addr", &self.local_addr().ok())
            .finish()
    }
}

impl UnixListener {
    /// Binds a socket file at `path` (which must not exist).
    pub fn bind(path: impl AsRef<Path>) -> io::Result<Self> {
        config::ensure();
        let std_listener = std::os::unix::net::UnixListener::bind(path)?;
        let inner = CoIo::new(std_listener).map_err(io::Error::from)?;
        Ok(UnixListener {
            inner: Registered::new(inner),
        })
    }

    /// Waits for the next connection.
    pub fn accept(&mut self) -> io::Result<(UnixStream, SocketAddr)> {
        self.accept_inner(None, None)?
            .ok_or_else(|| io::Error::other("accept returned without a connection"))
    }

    /// Waits at most `timeout` for a connection; expiry is `TimedOut`.
    pub fn accept_timeout(&mut self, timeout: Duration) -> io::Result<(UnixStream, SocketAddr)> {
        self.accept_inner(Some(Deadline::after(timeout)), None)?
            .ok_or_else(|| io::Error::other("accept returned without a connection"))
    }

    /// Waits for a connection until `token` fires; `Ok(None)` means shut down.
    pub fn accept_until(
        &mut self,
        token: &ShutdownToken,
    ) -> io::Result<Option<(UnixStream, SocketAddr)>> {
        self.accept_inner(None, Some(token))
    }

    fn accept_inner(
        &mut self,
        deadline: Option<Deadline>,
        token: Option<&ShutdownToken>,
    ) -> io::Result<Option<(UnixStream, SocketAddr)>> {
        let listener = &*self.inner;
        let try_accept = || {
            let (s, addr) = listener.inner().accept()?;
            // SAFETY: the descriptor comes from a stream we own and hand over entirely.
            let inner = adopt(|| unsafe { engine::io::UnixStream::from_raw_fd(s.into_raw_fd()) })?;
            Ok((UnixStream::adopted(inner), addr))
        };
        accept_loop(listener, try_accept, deadline, token)
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.inner().local_addr()
    }
}

/// A connected Unix-domain stream; `Read + Write`.
#[derive(Debug)]
pub struct UnixStream {
    inner: Registered<engine::io::UnixStream>,
    timeouts: Timeouts,
}

impl UnixStream {
    fn adopted(inner: engine::io::UnixStream) -> Self {
        UnixStream {
            inner: Registered::new(inner),
            timeouts: Timeouts::default(),
        }
    }

    /// Connects to the socket at `path`.
    pub fn connect(path: impl AsRef<Path>) -> io::Result<Self> {
        config::ensure();
        if !engine::in_fiber() {
            // A thread blocks in the kernel: see `ready::on_thread` on the engine's blocking
            // calls outside fibers.
            let stream = std::os::unix::net::UnixStream::connect(path)?;
            // SAFETY: the descriptor comes from a stream we own and hand over entirely.
            return adopt(|| unsafe { engine::io::UnixStream::from_raw_fd(stream.into_raw_fd()) })
                .map(UnixStream::adopted);
        }
        engine::io::UnixStream::connect(path).map(UnixStream::adopted)
    }

    /// A connected pair.
    pub fn pair() -> io::Result<(Self, Self)> {
        config::ensure();
        let (a, b) = engine::io::UnixStream::pair()?;
        Ok((UnixStream::adopted(a), UnixStream::adopted(b)))
    }

    /// Shuts down one or both directions.
    pub fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
        self.inner.shutdown(how)
    }

    /// Splits into two handles with their own descriptors: one to read, one to write.
    pub fn split(self) -> io::Result<(UnixStream, UnixStream)> {
        let writer = UnixStream {
            inner: Registered::new(self.inner.try_clone()?),
            timeouts: self.timeouts.duplicate(),
        };
        Ok((self, writer))
    }
}

impl UnixStream {
    /// What a read tells for later waits: nothing here (no timer-free wait on Unix sockets).
    fn after_read(&mut self, _asked: usize, _result: &io::Result<usize>) {}
}

timeouts!(UnixStream);
lazy_timeout_io!(UnixStream);
forward_io!(fd: UnixStream);
