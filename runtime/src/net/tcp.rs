//! TCP in blocking style: `TcpListener`, `TcpStream`, and its `TcpReader`/`TcpWriter` halves.
//!
//! Every method that waits takes `&mut self`, so no two fibers can wait on one socket (the
//! engine keeps one waiter per socket and silently drops a second). Full duplex from two fibers
//! goes through [`TcpStream::split`]: both halves share the one descriptor, the reader waits in
//! the engine, the writer outside it (`write_wait.rs`).

use std::io;
use std::mem::ManuallyDrop;
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, RawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use super::accept::accept_loop;
use super::bind::{first_addr, listen, resolve, ListenOptions};
use super::delegate::forward_io;
use super::ready::{self, Interest};
use super::timeouts::{
    lazy_timeout_io, peek_now, recv_now, send_now, timeouts, write_vectored_now, Timeout, Timeouts,
};
use super::write_wait;
use crate::coarse_timer::{self, Waiter};
use crate::engine::io::WaitIo;
use crate::error::panic_message;
use crate::shutdown::ShutdownToken;
use crate::time::Deadline;
use crate::{config, engine};

/// A listening TCP socket.
#[derive(Debug)]
pub struct TcpListener {
    inner: engine::io::TcpListener,
}

impl TcpListener {
    /// Binds `addr` (a busy port fails with `AddrInUse`); a host name is resolved on the
    /// offload pool, never on a worker.
    pub fn bind(addr: impl ToSocketAddrs + Send) -> io::Result<Self> {
        Self::bind_with(addr, ListenOptions::default())
    }

    /// Binds `addr` with explicit options (e.g. reuse-port for per-worker listeners).
    pub fn bind_with(addr: impl ToSocketAddrs + Send, opts: ListenOptions) -> io::Result<Self> {
        config::ensure();
        let std_listener = listen(first_addr(addr)?, opts)?;
        // SAFETY: the descriptor comes from a listener we own and hand over entirely.
        let inner =
            adopt(|| unsafe { engine::io::TcpListener::from_raw_fd(std_listener.into_raw_fd()) })?;
        Ok(TcpListener { inner })
    }

    /// The bound address (with the real port after binding port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Waits for the next connection.
    pub fn accept(&mut self) -> io::Result<(TcpStream, SocketAddr)> {
        self.accept_inner(None, None)?
            .ok_or_else(|| io::Error::other("accept returned without a connection"))
    }

    /// Waits at most `timeout` for a connection; expiry is `TimedOut`.
    pub fn accept_timeout(&mut self, timeout: Duration) -> io::Result<(TcpStream, SocketAddr)> {
        self.accept_inner(Some(Deadline::after(timeout)), None)?
            .ok_or_else(|| io::Error::other("accept returned without a connection"))
    }

    /// Waits for a connection until `token` fires; `Ok(None)` means shut down.
    pub fn accept_until(
        &mut self,
        token: &ShutdownToken,
    ) -> io::Result<Option<(TcpStream, SocketAddr)>> {
        self.accept_inner(None, Some(token))
    }

    fn accept_inner(
        &mut self,
        deadline: Option<Deadline>,
        token: Option<&ShutdownToken>,
    ) -> io::Result<Option<(TcpStream, SocketAddr)>> {
        let listener = &self.inner;
        let try_accept = || {
            let (s, peer) = listener.inner().accept()?;
            // SAFETY: the descriptor comes from a stream we own and hand over entirely.
            let inner = adopt(|| unsafe { engine::io::TcpStream::from_raw_fd(s.into_raw_fd()) })?;
            Ok((TcpStream::adopted(inner), peer))
        };
        accept_loop(listener, try_accept, deadline, token)
    }
}

/// Registers a descriptor with the engine; the engine panics on failure, we return an error.
pub(crate) fn adopt<T>(f: impl FnOnce() -> T) -> io::Result<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| io::Error::other(panic_message(&*p)))
}

impl AsRawFd for TcpListener {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

/// A connected TCP socket; `Read + Write` in blocking style.
#[derive(Debug)]
pub struct TcpStream {
    inner: engine::io::TcpStream,
    timeouts: Timeouts,
    /// The last read took everything the socket had (it returned less than asked), so
    /// [`TcpStream::read_within`] can wait without looking first.
    drained: bool,
    /// The coarse deadline of [`TcpStream::read_within`], made on its first use.
    coarse: Option<Arc<Waiter>>,
}

impl TcpStream {
    fn adopted(inner: engine::io::TcpStream) -> Self {
        TcpStream {
            inner,
            timeouts: Timeouts::default(),
            drained: false,
            coarse: None,
        }
    }

    /// Connects to `addr`; host names are resolved on the offload pool, never on a worker.
    pub fn connect(addr: impl ToSocketAddrs + Send) -> io::Result<Self> {
        config::ensure();
        let mut last = io::Error::new(io::ErrorKind::InvalidInput, "address resolved to nothing");
        for a in resolve(addr)? {
            let connected = match engine::in_fiber() {
                true => engine::io::TcpStream::connect(a).map(TcpStream::adopted),
                // A thread blocks in the kernel: see `ready::on_thread` on the engine's
                // blocking calls outside fibers.
                false => std::net::TcpStream::connect(a).and_then(TcpStream::from_std),
            };
            match connected {
                Ok(stream) => return Ok(stream),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Connects to `addr`, giving up after `timeout` (`TimedOut`).
    pub fn connect_timeout(addr: &SocketAddr, timeout: Duration) -> io::Result<Self> {
        config::ensure();
        if !engine::in_fiber() {
            return std::net::TcpStream::connect_timeout(addr, engine::timeout(timeout))
                .and_then(TcpStream::from_std);
        }
        engine::io::TcpStream::connect_timeout(addr, engine::timeout(timeout))
            .map(TcpStream::adopted)
    }

    /// A stream a plain thread connected, handed to the engine.
    fn from_std(stream: std::net::TcpStream) -> io::Result<Self> {
        // SAFETY: the descriptor comes from a stream we own and hand over entirely.
        adopt(|| unsafe { engine::io::TcpStream::from_raw_fd(stream.into_raw_fd()) })
            .map(TcpStream::adopted)
    }

    /// The remote address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Sets TCP_NODELAY (off by default).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_nodelay(nodelay)
    }

    /// Shuts down one or both directions.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.shutdown(how)
    }

    /// Reads without consuming.
    pub fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !engine::in_fiber() {
            let fd = self.inner.as_raw_fd();
            return self
                .timeouts
                .on_thread(fd, Interest::Read, || peek_now(fd, buf));
        }
        self.timeouts
            .read
            .hand_over(|t| self.inner.set_read_timeout(t))?;
        self.inner.peek(buf)
    }

    /// Reads what the socket has, waiting up to about `within` for it to have something:
    /// `Ok(None)` when that time passed first (`Some(0)`: end of stream). For waits that
    /// nearly always end early, like a keep-alive connection waiting for its next request: in
    /// a fiber it arms no timer of its own, and the deadline is coarse, honoured up to
    /// [`COARSE_TICK`](crate::net::COARSE_TICK) late (never early). The read timeout plays no
    /// part. From a plain thread it polls.
    pub fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        let fd = self.inner.as_raw_fd();
        if !engine::in_fiber() {
            // A plain thread polls, which reports bytes already there: no speculative read
            // to save.
            self.drained = false;
            let deadline = Deadline::after(within);
            loop {
                match recv_now(fd, buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    done => return done.map(Some),
                }
                if deadline.expired() {
                    return Ok(None);
                }
                ready::wait(&self.inner, Interest::Read, Some(deadline), None)?;
            }
        }
        let inner = &self.inner;
        let asked = buf.len();
        // When the last read emptied the socket, looking again would find nothing: wait for
        // the engine's readiness report instead. It cannot be lost, since nothing clears it
        // between that read and this wait.
        let mut look = !std::mem::take(&mut self.drained);
        // The clock is read only once the socket turns out empty: under load the bytes are
        // often there already.
        let mut at = None;
        let result = loop {
            if look {
                // A readiness report left over from earlier reads would end the wait below
                // at once: forget it before looking (the engine's own reads do the same).
                #[allow(deprecated)]
                inner.reset_io();
                match recv_now(fd, buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    done => break done.map(Some),
                }
            }
            look = true;
            let deadline = match at {
                None => *at.insert(coarse_timer::deadline_after(within)),
                Some(d) if coarse_timer::now_ms() >= d => break Ok(None),
                Some(d) => d,
            };
            self.coarse
                .get_or_insert_with(|| Waiter::new(inner.waker()))
                .arm(deadline);
            inner.wait_io();
        };
        if let Some(waiter) = &self.coarse {
            waiter.disarm();
        }
        self.drained = matches!(result, Ok(Some(n)) if n > 0 && n < asked);
        result
    }

    /// Splits into a reader and a writer half on the same descriptor, so one fiber can read
    /// while another writes; the socket closes when both halves are gone. The timeouts set so
    /// far carry over.
    pub fn split(self) -> io::Result<(TcpReader, TcpWriter)> {
        let socket = Arc::new(Remains::default());
        let writer = TcpWriter {
            _open: socket.clone(),
            fd: self.inner.as_raw_fd(),
            timeout: self.timeouts.write.duplicate(),
            registered: false,
        };
        let reader = TcpReader {
            inner: ManuallyDrop::new(self),
            socket,
        };
        Ok((reader, writer))
    }

    /// Runs a non-blocking syscall on the socket (e.g. `sendfile`), waiting for writability on
    /// `WouldBlock` and honouring the write timeout. Returns what the syscall returned.
    pub fn write_with(&mut self, f: impl FnMut(RawFd) -> io::Result<usize>) -> io::Result<usize> {
        let deadline = self.write_timeout()?.map(Deadline::after);
        with_readiness(&self.inner, Interest::Write, deadline, f)
    }

    /// Runs a non-blocking syscall on the socket, waiting for readability on `WouldBlock` and
    /// honouring the read timeout (e.g. `splice` out of the socket).
    pub fn read_with(&mut self, f: impl FnMut(RawFd) -> io::Result<usize>) -> io::Result<usize> {
        // What `f` took from the socket is unknown: the next wait looks first.
        self.drained = false;
        let deadline = self.read_timeout()?.map(Deadline::after);
        with_readiness(&self.inner, Interest::Read, deadline, f)
    }
}

fn with_readiness(
    socket: &engine::io::TcpStream,
    interest: Interest,
    deadline: Option<Deadline>,
    mut f: impl FnMut(RawFd) -> io::Result<usize>,
) -> io::Result<usize> {
    loop {
        match f(socket.as_raw_fd()) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
        if deadline.is_some_and(|d| d.expired()) {
            return Err(Deadline::timed_out("socket wait"));
        }
        ready::wait(socket, interest, deadline, None)?;
    }
}

impl TcpStream {
    /// Records whether a read emptied the socket: a stream socket's read takes all it has up
    /// to the size asked, so less means nothing is left, and any later byte raises a new
    /// readiness report.
    fn after_read(&mut self, asked: usize, result: &io::Result<usize>) {
        self.drained = matches!(result, Ok(n) if *n > 0 && *n < asked);
    }
}

timeouts!(TcpStream);
lazy_timeout_io!(TcpStream);
forward_io!(fd: TcpStream);

/// Where the reading half of a split socket leaves the stream when it goes first, so the
/// descriptor stays open (and its number ours) until the writer is gone too.
#[derive(Debug, Default)]
struct Remains(parking_lot::Mutex<Option<TcpStream>>);

/// The reading half of a split [`TcpStream`]: the stream itself, waiting in the engine.
#[derive(Debug)]
pub struct TcpReader {
    /// Taken only by `drop`.
    inner: ManuallyDrop<TcpStream>,
    socket: Arc<Remains>,
}

impl Drop for TcpReader {
    fn drop(&mut self) {
        // SAFETY: taken once, here, and never touched again.
        let stream = unsafe { ManuallyDrop::take(&mut self.inner) };
        *self.socket.0.lock() = Some(stream);
    }
}

/// The writing half of a split [`TcpStream`]: the same descriptor, written with `send(2)` and
/// waiting for room outside the engine.
#[derive(Debug)]
pub struct TcpWriter {
    /// Keeps the descriptor open (held, never read).
    _open: Arc<Remains>,
    fd: RawFd,
    timeout: Timeout,
    /// The write-wait lot's flag for this socket.
    registered: bool,
}

impl TcpReader {
    /// Read timeout; expiry is `TimedOut`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }

    /// The remote address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// Reads what arrives within about `within`, as [`TcpStream::read_within`].
    pub fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        self.inner.read_within(buf, within)
    }

    /// Like [`TcpStream::read_with`].
    pub fn read_with(&mut self, f: impl FnMut(RawFd) -> io::Result<usize>) -> io::Result<usize> {
        self.inner.read_with(f)
    }
}

impl TcpWriter {
    /// Write timeout; expiry is `TimedOut`.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.timeout.set(engine::socket_timeout(timeout)?);
        Ok(())
    }

    /// Shuts down the writing direction (the peer reads EOF).
    pub fn shutdown_write(&self) -> io::Result<()> {
        // SAFETY: plain syscall on a descriptor `_open` keeps open.
        if unsafe { libc::shutdown(self.fd, libc::SHUT_WR) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Like [`TcpStream::write_with`].
    pub fn write_with(&mut self, f: impl FnMut(RawFd) -> io::Result<usize>) -> io::Result<usize> {
        self.with_room(f)
    }

    /// Runs `f` (a syscall that never waits) until it does not find the socket full, waiting
    /// for room in between, up to the write timeout.
    fn with_room(&mut self, mut f: impl FnMut(RawFd) -> io::Result<usize>) -> io::Result<usize> {
        let (fd, timeout) = (self.fd, self.timeout.get());
        if !engine::in_fiber() {
            return ready::on_thread(fd, Interest::Write, timeout, "socket write", || f(fd));
        }
        // The clock is read only once the socket turns out full.
        let mut deadline = None;
        loop {
            match f(fd) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                done => return done,
            }
            let at = *deadline.get_or_insert_with(|| timeout.map(Deadline::after));
            if at.is_some_and(|d| d.expired()) {
                return Err(Deadline::timed_out("socket write"));
            }
            write_wait::wait(fd, &mut self.registered, at.map(|d| d.instant()))?;
        }
    }
}

impl io::Write for TcpWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with_room(|fd| send_now(fd, buf))
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.with_room(|fd| write_vectored_now(fd, bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsRawFd for TcpWriter {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

forward_io!(read: TcpReader);
forward_io!(fd: TcpReader);
