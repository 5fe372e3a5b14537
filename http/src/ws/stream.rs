//! The byte stream under a WebSocket, plain or TLS, whole or split into a reading and a
//! writing half (one fiber each).

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::time::Duration;

use moria_crypto::{TlsReader, TlsStream, TlsWriter};
use moria_runtime::net::{TcpReader, TcpStream, TcpWriter};

/// A WebSocket's connection, whole.
pub(crate) enum Stream {
    /// `ws://` or a plain-HTTP upgrade.
    Tcp(TcpStream),
    /// `wss://` or an HTTPS upgrade.
    Tls(Box<TlsStream<TcpStream>>),
}

/// The reading half of a split [`Stream`].
pub(crate) enum ReadHalf {
    Tcp(TcpReader),
    Tls(TlsReader),
}

/// The writing half of a split [`Stream`].
pub(crate) enum WriteHalf {
    Tcp(TcpWriter),
    Tls(TlsWriter),
}

/// A read side whose waits can be bounded.
pub(crate) trait Timed: Read {
    /// Sets the read timeout (`None`: wait forever).
    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()>;
    /// Reads what arrives within about `within`, arming no timer (`Ok(None)`: nothing did).
    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>>;
    /// Frees the stream's own buffers while they hold nothing (TLS), before a long wait.
    fn release(&mut self) {}
}

impl Stream {
    /// Splits into halves two fibers use at once (the socket's timeouts carry over).
    pub(crate) fn split(self) -> io::Result<(ReadHalf, WriteHalf)> {
        Ok(match self {
            Stream::Tcp(s) => {
                let (r, w) = s.split()?;
                (ReadHalf::Tcp(r), WriteHalf::Tcp(w))
            }
            Stream::Tls(s) => {
                let (r, w) = s.split()?;
                (ReadHalf::Tls(r), WriteHalf::Tls(w))
            }
        })
    }

    /// Ends our sending direction (the peer reads EOF).
    pub(crate) fn shutdown_write(&mut self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Write),
            Stream::Tls(s) => s
                .shutdown()
                .and_then(|()| s.get_ref().shutdown(Shutdown::Write)),
        };
    }

    /// Sets the read and write timeouts (`None`: wait forever).
    pub(crate) fn set_timeouts(
        &self,
        read: Option<Duration>,
        write: Option<Duration>,
    ) -> io::Result<()> {
        let tcp = match self {
            Stream::Tcp(s) => s,
            Stream::Tls(s) => s.get_ref(),
        };
        tcp.set_read_timeout(read)?;
        tcp.set_write_timeout(write)
    }
}

impl Timed for Stream {
    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Tls(s) => s.get_ref().set_read_timeout(t),
        }
    }

    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        match self {
            Stream::Tcp(s) => s.read_within(buf, within),
            Stream::Tls(s) => s.read_within(buf, within),
        }
    }

    fn release(&mut self) {
        if let Stream::Tls(s) = self {
            if !s.has_buffered_input() {
                s.release_buffers();
            }
        }
    }
}

impl Timed for ReadHalf {
    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        match self {
            ReadHalf::Tcp(s) => s.set_read_timeout(t),
            ReadHalf::Tls(s) => s.set_read_timeout(t),
        }
    }

    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        match self {
            ReadHalf::Tcp(s) => s.read_within(buf, within),
            ReadHalf::Tls(s) => s.read_within(buf, within),
        }
    }

    fn release(&mut self) {
        if let ReadHalf::Tls(s) = self {
            s.release_buffers();
        }
    }
}

impl WriteHalf {
    /// Ends our sending direction.
    pub(crate) fn shutdown_write(&mut self) {
        let _ = match self {
            WriteHalf::Tcp(s) => s.shutdown_write(),
            WriteHalf::Tls(s) => s.shutdown(),
        };
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Tls(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

impl Read for ReadHalf {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ReadHalf::Tcp(s) => s.read(buf),
            ReadHalf::Tls(s) => s.read(buf),
        }
    }
}

impl Write for WriteHalf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            WriteHalf::Tcp(s) => s.write(buf),
            WriteHalf::Tls(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            WriteHalf::Tcp(s) => s.write_vectored(bufs),
            WriteHalf::Tls(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            WriteHalf::Tcp(s) => s.flush(),
            WriteHalf::Tls(s) => s.flush(),
        }
    }
}
