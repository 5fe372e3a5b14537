//! [`Timeout`]: read, write and idle timeouts on a socket-like stream, giving `TimedOut`.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use moria_runtime::net;

use crate::Error;

/// A stream whose blocking reads can be bounded in time (a socket or a [`crate::PipeReader`]).
///
/// Expiry may surface as `TimedOut` or `WouldBlock` (std sockets on Linux); [`Timeout`] reports
/// both as `TimedOut`.
pub trait SetReadTimeout {
    /// Bounds each following read; `None` waits forever.
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
}

/// A stream whose blocking writes can be bounded in time (a socket or a [`crate::PipeWriter`]).
pub trait SetWriteTimeout {
    /// Bounds each following write; `None` waits forever.
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
}

/// Implements the timeout traits by forwarding to the type's inherent methods.
macro_rules! forward_timeouts {
    (read: $($r:ty),*; write: $($w:ty),*) => {
        $(impl SetReadTimeout for $r {
            fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
                <$r>::set_read_timeout(self, timeout)
            }
        })*
        $(impl SetWriteTimeout for $w {
            fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
                <$w>::set_write_timeout(self, timeout)
            }
        })*
    };
}

forward_timeouts!(
    read: net::TcpStream, net::TcpReader, net::UnixStream,
        std::net::TcpStream, std::os::unix::net::UnixStream;
    write: net::TcpStream, net::TcpWriter, net::UnixStream,
        std::net::TcpStream, std::os::unix::net::UnixStream
);

/// Which timeout a wait ran under, for the error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Op,
    Idle,
}

/// A stream wrapper with per-read, per-write and idle timeouts (Mordor's TimeoutStream).
///
/// The read (write) timeout bounds each single read (write) call; the idle timeout bounds the
/// time without any byte moving in either direction. Expiry is `TimedOut` carrying
/// [`Error::TimedOut`]. All timeouts are off by default.
#[derive(Debug)]
pub struct Timeout<S> {
    inner: S,
    read: Option<Duration>,
    write: Option<Duration>,
    idle: Option<Duration>,
    idle_deadline: Option<Instant>,
    applied_read: Option<Option<Duration>>,
    applied_write: Option<Option<Duration>>,
}

impl<S> Timeout<S> {
    /// Wraps `inner` with no timeouts.
    pub fn new(inner: S) -> Self {
        Timeout {
            inner,
            read: None,
            write: None,
            idle: None,
            idle_deadline: None,
            applied_read: None,
            applied_write: None,
        }
    }

    /// Bounds each read (default: none).
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) {
        self.read = timeout;
    }

    /// Bounds each write (default: none).
    pub fn set_write_timeout(&mut self, timeout: Option<Duration>) {
        self.write = timeout;
    }

    /// Bounds the time with no traffic either way, counted from now (default: none).
    pub fn set_idle_timeout(&mut self, timeout: Option<Duration>) {
        self.idle = timeout;
        self.idle_deadline = timeout.map(|d| Instant::now() + d);
    }

    /// The inner stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner stream, mutably (traffic through it directly does not reset the idle timer).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Gives back the inner stream (its socket timeouts stay as last set).
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The timeout for the next call: the per-call one, shortened by the idle deadline.
    fn effective(&self, per_call: Option<Duration>) -> io::Result<(Option<Duration>, Cause)> {
        let Some(deadline) = self.idle_deadline else {
            return Ok((per_call, Cause::Op));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::TimedOut("idle connection").into());
        }
        Ok(match per_call {
            Some(d) if d <= left => (Some(d), Cause::Op),
            _ => (Some(left), Cause::Idle),
        })
    }

    fn progressed(&mut self) {
        if let Some(idle) = self.idle {
            self.idle_deadline = Some(Instant::now() + idle);
        }
    }
}

fn is_expiry(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

fn expired(cause: Cause, op: &'static str) -> io::Error {
    match cause {
        Cause::Op => Error::TimedOut(op).into(),
        Cause::Idle => Error::TimedOut("idle connection").into(),
    }
}

impl<S: SetReadTimeout + Read> Read for Timeout<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (timeout, cause) = self.effective(self.read)?;
        if self.applied_read != Some(timeout) {
            self.inner.set_read_timeout(timeout)?;
            self.applied_read = Some(timeout);
        }
        match self.inner.read(buf) {
            Ok(n) => {
                if n > 0 {
                    self.progressed();
                }
                Ok(n)
            }
            Err(e) if is_expiry(&e) => Err(expired(cause, "read")),
            Err(e) => Err(e),
        }
    }
}

impl<S: SetWriteTimeout> Timeout<S> {
    /// Applies the write timeout for the next write; returns what limits it.
    fn arm_write_for(&mut self) -> io::Result<Cause> {
        let (timeout, cause) = self.effective(self.write)?;
        if self.applied_write != Some(timeout) {
            self.inner.set_write_timeout(timeout)?;
            self.applied_write = Some(timeout);
        }
        Ok(cause)
    }

    /// Applies the write timeout to the inner stream, for writes that bypass this wrapper
    /// (zero-copy transfer); fails at once if the idle deadline has passed.
    pub(crate) fn arm_write(&mut self) -> io::Result<()> {
        self.arm_write_for().map(|_| ())
    }
}

impl<S: SetWriteTimeout + Write> Write for Timeout<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let cause = self.arm_write_for()?;
        match self.inner.write(buf) {
            Ok(n) => {
                if n > 0 {
                    self.progressed();
                }
                Ok(n)
            }
            Err(e) if is_expiry(&e) => Err(expired(cause, "write")),
            Err(e) => Err(e),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::os::unix::net::UnixStream;

    /// Records the timeouts applied to it; reads and writes succeed with one byte.
    #[derive(Default)]
    struct Recorder {
        reads: RefCell<Vec<Option<Duration>>>,
        writes: RefCell<Vec<Option<Duration>>>,
    }

    impl SetReadTimeout for Recorder {
        fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
            self.reads.borrow_mut().push(t);
            Ok(())
        }
    }

    impl SetWriteTimeout for Recorder {
        fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
            self.writes.borrow_mut().push(t);
            Ok(())
        }
    }

    impl Read for Recorder {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Ok(1)
        }
    }

    impl Write for Recorder {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Ok(1)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn per_call_timeouts_are_applied_once_while_unchanged() {
        let mut t = Timeout::new(Recorder::default());
        t.set_read_timeout(Some(Duration::from_secs(5)));
        t.set_write_timeout(Some(Duration::from_secs(7)));
        for _ in 0..3 {
            assert_eq!(t.read(&mut [0; 1]).unwrap(), 1);
            assert_eq!(t.write(b"x").unwrap(), 1);
        }
        assert_eq!(
            *t.get_ref().reads.borrow(),
            vec![Some(Duration::from_secs(5))]
        );
        assert_eq!(
            *t.get_ref().writes.borrow(),
            vec![Some(Duration::from_secs(7))]
        );
    }

    #[test]
    fn idle_deadline_shortens_a_longer_per_call_timeout() {
        let mut t = Timeout::new(Recorder::default());
        t.set_read_timeout(Some(Duration::from_secs(3600)));
        t.set_idle_timeout(Some(Duration::from_secs(60)));
        assert_eq!(t.read(&mut [0; 1]).unwrap(), 1);
        let applied = t.get_ref().reads.borrow()[0].unwrap();
        assert!(applied <= Duration::from_secs(60), "{applied:?}");
    }

    #[test]
    fn read_timeout_expiry_is_timed_out() {
        let (a, _b) = UnixStream::pair().unwrap();
        let mut t = Timeout::new(a);
        t.set_read_timeout(Some(Duration::from_millis(30)));
        let err = t.read(&mut [0; 8]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(err.to_string(), "read timed out");
    }

    #[test]
    fn idle_timeout_expiry_is_timed_out_and_sticks() {
        let (a, _b) = UnixStream::pair().unwrap();
        let mut t = Timeout::new(a);
        t.set_idle_timeout(Some(Duration::from_millis(30)));
        let err = t.read(&mut [0; 8]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(err.to_string(), "idle connection timed out");
        let err = t.write(b"late").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn traffic_resets_the_idle_deadline() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let mut t = Timeout::new(a);
        t.set_idle_timeout(Some(Duration::from_secs(3600)));
        b.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        t.read_exact(&mut buf).unwrap();
        t.write_all(b"pong").unwrap();
        b.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"pong");
    }
}
