//! Socket timeouts, which the TLS handshake uses to enforce its deadline, and the descriptor
//! a session may write to without waiting.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// A transport whose reads and writes can time out; expiry surfaces as an `io::Error`
/// (`TimedOut`, or `WouldBlock` for std sockets).
pub trait SocketTimeouts {
    /// The read timeout in force (`None`: wait forever).
    fn read_timeout(&self) -> io::Result<Option<Duration>>;
    /// The write timeout in force (`None`: wait forever).
    fn write_timeout(&self) -> io::Result<Option<Duration>>;
    /// Sets (or clears, with `None`) the timeout of each read.
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Sets (or clears, with `None`) the timeout of each write.
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// The descriptor of the socket this transport is, if it is one: the session then sends
    /// each record straight from OpenSSL's buffer with a `send(2)` that never waits
    /// (`MSG_DONTWAIT`), and copies only what the socket does not take at once (see
    /// `memio.rs`). `None` (the default): every record is copied out and written through the
    /// transport.
    fn socket_fd(&self) -> Option<RawFd> {
        None
    }
}

/// Implements [`SocketTimeouts`] for a socket type by forwarding to its inherent methods of the
/// same names.
macro_rules! forward_timeouts {
    ($($ty:ty),*) => {$(
        impl SocketTimeouts for $ty {
            fn read_timeout(&self) -> io::Result<Option<Duration>> {
                <$ty>::read_timeout(self)
            }

            fn write_timeout(&self) -> io::Result<Option<Duration>> {
                <$ty>::write_timeout(self)
            }

            fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
                <$ty>::set_read_timeout(self, timeout)
            }

            fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
                <$ty>::set_write_timeout(self, timeout)
            }

            fn socket_fd(&self) -> Option<RawFd> {
                Some(self.as_raw_fd())
            }
        }
    )*};
}

forward_timeouts!(
    moria_runtime::net::TcpStream,
    std::net::TcpStream,
    std::os::unix::net::UnixStream
);

impl<T: SocketTimeouts + ?Sized> SocketTimeouts for &mut T {
    fn read_timeout(&self) -> io::Result<Option<Duration>> {
        (**self).read_timeout()
    }

    fn write_timeout(&self) -> io::Result<Option<Duration>> {
        (**self).write_timeout()
    }

    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        (**self).set_read_timeout(timeout)
    }

    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        (**self).set_write_timeout(timeout)
    }

    fn socket_fd(&self) -> Option<RawFd> {
        (**self).socket_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_socket_timeouts_round_trip() {
        let (mut a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let t = Some(Duration::from_millis(1500));
        SocketTimeouts::set_read_timeout(&mut a, t).unwrap();
        SocketTimeouts::set_write_timeout(&mut &mut a, t).unwrap();
        assert_eq!(SocketTimeouts::read_timeout(&a).unwrap(), t);
        assert_eq!(SocketTimeouts::write_timeout(&a).unwrap(), t);
    }
}
