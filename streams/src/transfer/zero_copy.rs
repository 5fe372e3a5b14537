//! The capabilities a zero-copy transfer needs, and which types have them.

use std::io::{self, Read, Write};
use std::os::unix::io::RawFd;

use moria_runtime::net;

use crate::timeout::SetWriteTimeout;
use crate::{BufStream, File, Timeout};

/// A socket that runs a non-blocking syscall on its descriptor, waiting for writability when
/// the syscall returns `WouldBlock` (and honouring its write timeout).
pub trait RawSink {
    /// Runs `f` with the descriptor until it does not return `WouldBlock`.
    fn write_with_fd(&mut self, f: &mut dyn FnMut(RawFd) -> io::Result<usize>)
        -> io::Result<usize>;
}

/// A socket that runs a non-blocking syscall on its descriptor, waiting for readability when
/// the syscall returns `WouldBlock` (and honouring its read timeout).
pub trait RawSource {
    /// Runs `f` with the descriptor until it does not return `WouldBlock`.
    fn read_with_fd(&mut self, f: &mut dyn FnMut(RawFd) -> io::Result<usize>) -> io::Result<usize>;
}

/// Where a [`ZeroCopySource`]'s bytes come from.
pub enum Origin<'a> {
    /// A regular file, read from its current position.
    File(&'a mut File),
    /// A socket.
    Socket(&'a mut dyn RawSource),
}

/// A reader that may hand its bytes to the kernel directly.
pub trait ZeroCopySource: Read {
    /// The descriptor behind this reader, if it has one that `sendfile`/`splice` can use.
    fn origin(&mut self) -> Option<Origin<'_>>;
}

/// A writer that may take bytes from the kernel directly.
pub trait ZeroCopySink: Write {
    /// The socket behind this writer, with any buffered output flushed first; `None` (the
    /// default) for writers that must see the bytes (TLS, compression, memory).
    fn raw_sink(&mut self) -> io::Result<Option<&mut dyn RawSink>> {
        Ok(None)
    }
}

/// Implements [`RawSink`] and [`ZeroCopySink`] for runtime socket types with `write_with`.
macro_rules! socket_sink {
    ($($t:ty),*) => {$(
        impl RawSink for $t {
            fn write_with_fd(
                &mut self,
                f: &mut dyn FnMut(RawFd) -> io::Result<usize>,
            ) -> io::Result<usize> {
                self.write_with(f)
            }
        }

        impl ZeroCopySink for $t {
            fn raw_sink(&mut self) -> io::Result<Option<&mut dyn RawSink>> {
                Ok(Some(self))
            }
        }
    )*};
}

/// Implements [`RawSource`] and [`ZeroCopySource`] for runtime socket types with `read_with`.
macro_rules! socket_source {
    ($($t:ty),*) => {$(
        impl RawSource for $t {
            fn read_with_fd(
                &mut self,
                f: &mut dyn FnMut(RawFd) -> io::Result<usize>,
            ) -> io::Result<usize> {
                self.read_with(f)
            }
        }

        impl ZeroCopySource for $t {
            fn origin(&mut self) -> Option<Origin<'_>> {
                Some(Origin::Socket(self))
            }
        }
    )*};
}

socket_sink!(net::TcpStream, net::TcpWriter);
socket_source!(net::TcpStream, net::TcpReader);

impl ZeroCopySource for File {
    fn origin(&mut self) -> Option<Origin<'_>> {
        Some(Origin::File(self))
    }
}

impl<S: Read + ZeroCopySink> ZeroCopySink for BufStream<S> {
    fn raw_sink(&mut self) -> io::Result<Option<&mut dyn RawSink>> {
        self.flush()?;
        self.get_mut().raw_sink()
    }
}

impl ZeroCopySink for Vec<u8> {}
impl ZeroCopySink for io::Sink {}

impl<S: SetWriteTimeout + ZeroCopySink> ZeroCopySink for Timeout<S> {
    /// The socket, with the write timeout (shortened by the idle deadline) applied to it, so the
    /// zero-copy waits honour it too.
    fn raw_sink(&mut self) -> io::Result<Option<&mut dyn RawSink>> {
        self.arm_write()?;
        self.get_mut().raw_sink()
    }
}
