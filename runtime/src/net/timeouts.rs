//! Socket timeouts kept here and handed to the engine only when a call has to wait.
//!
//! The engine keeps a socket's read and write timeouts twice: in its own timer list (which is
//! what makes a waiting call end with `TimedOut`) and as socket options, one `setsockopt`
//! (`SO_RCVTIMEO`, `SO_SNDTIMEO`) each time one is set, although options mean nothing on a
//! non-blocking socket. A server sets both on every connection, and changes the read timeout
//! between phases (keep-alive wait, head, body); most of those calls never wait: the request is
//! already there, the response fits the send buffer.
//!
//! So a stream remembers the timeout asked for beside the one the engine has. While they agree
//! a call goes straight to the engine. When they differ, the call first tries its syscall
//! without waiting; only when that finds nothing to do (`WouldBlock`) is the timeout handed to
//! the engine, whose call then waits with it. The cost of the saving: a call that must wait
//! right after a change makes one extra attempt (the engine's own first try repeats ours).
//! Datagram sockets, whose timeouts rarely change, hand a changed one over before their next
//! call.
//!
//! A stream write always tries first, with `send(2)`: the engine's first try is `write(2)`,
//! which on a socket also crosses the VFS layer (`vfs_write`, `rw_verify_area`, the file
//! security hook; about 1% of a keep-alive hello request's CPU in `perf`), and a response
//! nearly always fits the send buffer. Only a write that finds the socket full goes on to the
//! engine, whose own try then repeats ours once before it waits.

use std::io::{self, IoSlice};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// One direction's timeout, as whole milliseconds (0: none; the engine never gets a zero).
#[derive(Debug, Default)]
pub(crate) struct Timeout {
    wanted: AtomicU64,
    applied: AtomicU64,
}

fn to_ms(d: Option<Duration>) -> u64 {
    d.map_or(0, |d| {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
    })
}

fn from_ms(ms: u64) -> Option<Duration> {
    (ms != 0).then(|| Duration::from_millis(ms))
}

impl Timeout {
    /// Asks for `d` (already in the engine's whole milliseconds) from the next call on.
    pub(crate) fn set(&self, d: Option<Duration>) {
        self.wanted.store(to_ms(d), Ordering::Relaxed);
    }

    /// The timeout asked for.
    pub(crate) fn get(&self) -> Option<Duration> {
        from_ms(self.wanted.load(Ordering::Relaxed))
    }

    /// The timeout to hand to the engine before a call that may wait, or `None` when the engine
    /// already has it.
    pub(crate) fn pending(&self) -> Option<Option<Duration>> {
        let wanted = self.wanted.load(Ordering::Relaxed);
        (wanted != self.applied.load(Ordering::Relaxed)).then(|| from_ms(wanted))
    }

    /// Records that the engine now has `d`.
    pub(crate) fn applied(&self, d: Option<Duration>) {
        self.applied.store(to_ms(d), Ordering::Relaxed);
    }

    /// Hands a changed timeout to the engine with `apply`, before a call that may wait.
    pub(crate) fn hand_over(
        &self,
        apply: impl FnOnce(Option<Duration>) -> io::Result<()>,
    ) -> io::Result<()> {
        if let Some(t) = self.pending() {
            apply(t)?;
            self.applied(t);
        }
        Ok(())
    }

    /// While the engine has another timeout: runs `now` (the call's syscall, never waiting)
    /// and gives back its outcome unless it would block; then, or when the engine already has
    /// the timeout, hands it over and returns `None`: the engine's call is to run and may wait.
    pub(crate) fn first_try<R>(
        &self,
        now: impl FnOnce() -> io::Result<R>,
        apply: impl FnOnce(Option<Duration>) -> io::Result<()>,
    ) -> Option<io::Result<R>> {
        self.pending()?;
        match now() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            done => return Some(done),
        }
        self.hand_over(apply).err().map(Err)
    }

    /// The same state, for a handle on a duplicated descriptor (the engine copies its timeouts
    /// along).
    pub(crate) fn duplicate(&self) -> Timeout {
        Timeout {
            wanted: AtomicU64::new(self.wanted.load(Ordering::Relaxed)),
            applied: AtomicU64::new(self.applied.load(Ordering::Relaxed)),
        }
    }
}

/// A stream's two timeouts.
#[derive(Debug, Default)]
pub(crate) struct Timeouts {
    /// For reads.
    pub(crate) read: Timeout,
    /// For writes.
    pub(crate) write: Timeout,
}

impl Timeouts {
    /// From a plain thread: runs `op` on `fd` without the engine, waiting in `poll(2)` with the
    /// timeout asked for in that direction (see [`ready::on_thread`](crate::net::ready)).
    pub(crate) fn on_thread<R>(
        &self,
        fd: RawFd,
        interest: crate::net::ready::Interest,
        op: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        use crate::net::ready::Interest;
        let (timeout, what) = match interest {
            Interest::Read => (self.read.get(), "socket read"),
            Interest::Write => (self.write.get(), "socket write"),
        };
        crate::net::ready::on_thread(fd, interest, timeout, what, op)
    }

    /// See [`Timeout::duplicate`].
    pub(crate) fn duplicate(&self) -> Timeouts {
        Timeouts {
            read: self.read.duplicate(),
            write: self.write.duplicate(),
        }
    }
}

/// `Ok(n)` or the error of a raw syscall's return value.
fn result(rc: isize) -> io::Result<usize> {
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

/// One `read(2)` on the non-blocking `fd`, never waiting.
pub(crate) fn read_now(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
    result(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })
}

/// One `recv(2)` on the socket `fd`, never waiting (`MSG_DONTWAIT`): what was there, or
/// `WouldBlock`. Unlike `read(2)` it skips the VFS layer.
pub(crate) fn recv_now(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
    result(unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) })
}

/// One `recv(2)` with `MSG_PEEK` on the socket `fd`, never waiting: the bytes stay queued.
pub(crate) fn peek_now(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let flags = libc::MSG_PEEK | libc::MSG_DONTWAIT;
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
    result(unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) })
}

/// One `send(2)` on the socket `fd`, never waiting (`MSG_DONTWAIT`, whatever the descriptor's
/// mode) and never raising `SIGPIPE`: what the socket took, or `WouldBlock` when it is full.
pub fn send_now(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes.
    result(unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), flags) })
}

/// One `writev(2)` on the non-blocking `fd` (at most `IOV_MAX` slices), never waiting.
pub(crate) fn write_vectored_now(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    let count = bufs.len().min(1024);
    // SAFETY: `IoSlice` is ABI-compatible with `iovec` on Unix, and `count` slices are valid.
    result(unsafe { libc::writev(fd, bufs.as_ptr().cast(), count as libc::c_int) })
}

/// Implements the timeout setters and getters for an engine socket wrapper with a `timeouts`
/// ([`Timeouts`]) field; its calls hand them to the engine with [`Timeout::hand_over`] or
/// [`Timeout::first_try`].
macro_rules! timeouts {
    ($t:ty) => {
        impl $t {
            /// Read timeout; expiry is `TimedOut`. `None` waits forever; zero is refused.
            pub fn set_read_timeout(
                &self,
                timeout: Option<std::time::Duration>,
            ) -> std::io::Result<()> {
                self.timeouts
                    .read
                    .set(crate::engine::socket_timeout(timeout)?);
                Ok(())
            }

            /// Write timeout; expiry is `TimedOut`. `None` waits forever; zero is refused.
            pub fn set_write_timeout(
                &self,
                timeout: Option<std::time::Duration>,
            ) -> std::io::Result<()> {
                self.timeouts
                    .write
                    .set(crate::engine::socket_timeout(timeout)?);
                Ok(())
            }

            /// The read timeout in force.
            pub fn read_timeout(&self) -> std::io::Result<Option<std::time::Duration>> {
                Ok(self.timeouts.read.get())
            }

            /// The write timeout in force.
            pub fn write_timeout(&self) -> std::io::Result<Option<std::time::Duration>> {
                Ok(self.timeouts.write.get())
            }
        }
    };
}

/// Implements `Read` and `Write` for a wrapper with `inner` (the engine's stream) and
/// `timeouts` fields, through [`Timeout::first_try`]: while the engine has
/// another timeout, a call first tries its syscall without waiting; `write` always does, with
/// `send(2)` (see the module docs).
macro_rules! lazy_timeout_io {
    ($t:ty) => {
        impl std::io::Read for $t {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let asked = buf.len();
                let (fd, inner) = (std::os::fd::AsRawFd::as_raw_fd(&self.inner), &self.inner);
                if !crate::engine::in_fiber() {
                    let result =
                        self.timeouts
                            .on_thread(fd, crate::net::ready::Interest::Read, || {
                                crate::net::timeouts::read_now(fd, buf)
                            });
                    self.after_read(asked, &result);
                    return result;
                }
                let now = || crate::net::timeouts::read_now(fd, buf);
                let result = match self
                    .timeouts
                    .read
                    .first_try(now, |t| inner.set_read_timeout(t))
                {
                    Some(done) => done,
                    None => self.inner.read(buf),
                };
                self.after_read(asked, &result);
                result
            }
        }

        impl std::io::Write for $t {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let (fd, inner) = (std::os::fd::AsRawFd::as_raw_fd(&self.inner), &self.inner);
                if !crate::engine::in_fiber() {
                    let write = crate::net::ready::Interest::Write;
                    let send = || crate::net::timeouts::send_now(fd, buf);
                    return self.timeouts.on_thread(fd, write, send);
                }
                match crate::net::timeouts::send_now(fd, buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    done => return done,
                }
                self.timeouts
                    .write
                    .hand_over(|t| inner.set_write_timeout(t))?;
                self.inner.write(buf)
            }

            fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
                let (fd, inner) = (std::os::fd::AsRawFd::as_raw_fd(&self.inner), &self.inner);
                if !crate::engine::in_fiber() {
                    let write = crate::net::ready::Interest::Write;
                    let send = || crate::net::timeouts::write_vectored_now(fd, bufs);
                    return self.timeouts.on_thread(fd, write, send);
                }
                let now = || crate::net::timeouts::write_vectored_now(fd, bufs);
                if let Some(done) = self
                    .timeouts
                    .write
                    .first_try(now, |t| inner.set_write_timeout(t))
                {
                    return done;
                }
                self.inner.write_vectored(bufs)
            }

            fn flush(&mut self) -> std::io::Result<()> {
                self.inner.flush()
            }
        }
    };
}

pub(crate) use {lazy_timeout_io, timeouts};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_only_while_the_engine_has_another_timeout() {
        let t = Timeout::default();
        assert_eq!(t.pending(), None, "none asked, none applied");
        t.set(Some(Duration::from_millis(20)));
        assert_eq!(t.pending(), Some(Some(Duration::from_millis(20))));
        t.applied(Some(Duration::from_millis(20)));
        assert_eq!(t.pending(), None);
        t.set(None);
        assert_eq!(t.pending(), Some(None), "clearing is handed over too");
        assert_eq!(t.get(), None);
        let d = t.duplicate();
        assert_eq!(d.pending(), Some(None));
    }

    #[test]
    fn first_try_hands_the_timeout_over_only_when_the_call_would_block() {
        let t = Timeout::default();
        let never = || -> io::Result<usize> { unreachable!("in sync: the engine's call runs") };
        assert!(t.first_try(never, |_| Ok(())).is_none());
        t.set(Some(Duration::from_millis(20)));
        let done = t.first_try(|| Ok(5), |_| panic!("not handed over"));
        assert_eq!(done.unwrap().unwrap(), 5);
        assert!(
            t.pending().is_some(),
            "still pending after a call that did not wait"
        );
        let mut handed = None;
        let blocked = || -> io::Result<usize> { Err(io::ErrorKind::WouldBlock.into()) };
        let apply = |d| {
            handed = Some(d);
            Ok(())
        };
        assert!(t.first_try(blocked, apply).is_none());
        assert_eq!(handed, Some(Some(Duration::from_millis(20))));
        assert_eq!(t.pending(), None);
    }
}
