//! What the connection loop needs from a byte stream: `Read + Write`, a read timeout, a half-close,
//! and a file-to-stream copy that takes moria-streams' zero-copy path (`sendfile`) where the
//! stream is a plain socket.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::Shutdown;
use std::time::Duration;

use moria_runtime::net::TcpStream;
use moria_streams::{File, TransferExt};

/// A connection's byte stream as the HTTP loop drives it.
pub(crate) trait Transport: Read + Write + Send {
    /// Sets the read timeout (`None`: wait forever); expiry is `TimedOut`.
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Stops sending (the peer sees EOF) while reads keep working.
    fn shutdown_write(&mut self) -> io::Result<()>;
    /// Whether bytes already received wait in the stream's own buffers (TLS), so a read would
    /// not wait for the socket.
    fn has_buffered_input(&self) -> bool {
        false
    }
    /// Reads what arrives within about `within` with no timer of its own (`Ok(None)`: the time
    /// passed).
    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>>;
    /// Sends `len` bytes of `file` from `offset`; the default is a buffered copy (file reads
    /// on the offload pool).
    fn send_file(&mut self, file: &mut File, offset: u64, len: u64) -> io::Result<()> {
        file.seek(SeekFrom::Start(offset))?;
        let moved = moria_streams::transfer(file, self, Some(len))?;
        check_len(moved, len)
    }
}

/// A file that ended before its declared length breaks the response framing.
pub(crate) fn check_len(moved: u64, len: u64) -> io::Result<()> {
    if moved == len {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "file shorter than the declared length",
        ))
    }
}

impl Transport for TcpStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }

    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        TcpStream::read_within(self, buf, within)
    }

    fn send_file(&mut self, file: &mut File, offset: u64, len: u64) -> io::Result<()> {
        file.seek(SeekFrom::Start(offset))?;
        let moved = file.transfer_to(self, Some(len))?;
        check_len(moved, len)
    }
}
