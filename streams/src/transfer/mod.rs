//! Moving bytes from a reader to a writer: [`transfer`] (a buffered copy for any pair) and
//! [`TransferExt::transfer_to`], which takes a zero-copy path where the pair allows one.
//!
//! | source | sink | path |
//! |---|---|---|
//! | [`crate::File`] | a socket ([`RawSink`]) | `sendfile(2)`, each call on the offload pool |
//! | a socket ([`RawSource`]) | a socket | `splice(2)` through a kernel pipe, on the fiber |
//! | anything else | anything else | [`transfer`], one reused 64 KiB buffer |
//!
//! A writer with no socket behind it (TLS, compression, memory) says so through
//! [`ZeroCopySink::raw_sink`]'s default and gets the buffered copy: user code never switches
//! on types.

mod copy;
mod sys;

use std::io::{self, Read, Write};
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::Arc;

use moria_runtime::{blocking_io, net};

use crate::{BufStream, File};

pub use copy::{transfer, TRANSFER_BUFFER};
pub use sys::SPLICE_PIPE_SIZE;

/// Most bytes one `sendfile` call is asked to move.
pub const SENDFILE_CHUNK: usize = 8 * 1024 * 1024;

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

/// `transfer_to`: the zero-copy fast path where one exists, a buffered copy otherwise.
pub trait TransferExt: ZeroCopySource {
    /// Moves bytes to `sink` until EOF or `limit`; returns the bytes moved (fewer than `limit`
    /// means the source ended first).
    fn transfer_to<W>(&mut self, sink: &mut W, limit: Option<u64>) -> io::Result<u64>
    where
        W: ZeroCopySink + ?Sized,
    {
        if let Some(raw) = sink.raw_sink()? {
            match self.origin() {
                Some(Origin::File(file)) => return send_file(file, raw, limit),
                Some(Origin::Socket(source)) => return splice_sockets(source, raw, limit),
                None => {}
            }
        }
        transfer(self, sink, limit)
    }
}

impl<R: ZeroCopySource + ?Sized> TransferExt for R {}

/// `sendfile(2)` from the file's position, each call on the offload pool (it may read the disk).
fn send_file(file: &mut File, sink: &mut dyn RawSink, limit: Option<u64>) -> io::Result<u64> {
    file.give_back_read_ahead()?;
    let shared = Arc::clone(file.shared());
    let mut moved = 0u64;
    loop {
        let want = copy::chunk(limit, moved, SENDFILE_CHUNK);
        if want == 0 {
            return Ok(moved);
        }
        let n = sink.write_with_fd(&mut |socket| {
            let source = Arc::clone(&shared);
            blocking_io(move || sys::sendfile(socket, source.as_raw_fd(), want))
        })?;
        if n == 0 {
            return Ok(moved);
        }
        moved += n as u64;
    }
}

/// `splice(2)` socket → kernel pipe → socket; no disk, so it runs on the fiber.
fn splice_sockets(
    source: &mut dyn RawSource,
    sink: &mut dyn RawSink,
    limit: Option<u64>,
) -> io::Result<u64> {
    let (pipe_read, pipe_write) = sys::pipe()?;
    let (pipe_read, pipe_write) = (pipe_read.as_raw_fd(), pipe_write.as_raw_fd());
    let mut moved = 0u64;
    loop {
        let want = copy::chunk(limit, moved, SPLICE_PIPE_SIZE as usize);
        if want == 0 {
            return Ok(moved);
        }
        let n = source.read_with_fd(&mut |socket| sys::splice(socket, pipe_write, want))?;
        if n == 0 {
            return Ok(moved);
        }
        let mut left = n;
        while left > 0 {
            let out = sink.write_with_fd(&mut |socket| sys::splice(pipe_read, socket, left))?;
            if out == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            left -= out;
        }
        moved += n as u64;
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
