//! What the connection loop needs from a byte stream: `Read + Write`, timeouts, a half-close,
//! and a file-to-stream copy that takes the zero-copy path (`sendfile`) where the stream allows.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::blocking_io;
use moria_runtime::net::TcpStream;

/// Size of one offloaded file read on the copy path (TLS and other non-socket streams).
pub(crate) const FILE_COPY_CHUNK: usize = 64 * 1024;
/// Largest single `sendfile` call (the kernel caps one call near 2 GiB anyway).
const SENDFILE_CHUNK: u64 = 1 << 30;

/// A connection's byte stream as the HTTP loop drives it.
pub(crate) trait Transport: Read + Write + Send {
    /// Sets the read timeout (`None`: wait forever); expiry is `TimedOut`.
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Sets the write timeout (`None`: wait forever); expiry is `TimedOut`.
    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
    /// Stops sending (the peer sees EOF) while reads keep working.
    fn shutdown_write(&mut self) -> io::Result<()>;
    /// Sends `len` bytes of `file` from `offset`; the default reads through the offload pool.
    fn send_file(&mut self, file: &File, offset: u64, len: u64) -> io::Result<()> {
        copy_file(self, file, offset, len)
    }
}

/// Copies a file range to `out` with reads on the offload pool (never on a worker).
pub(crate) fn copy_file<W: Write + ?Sized>(
    out: &mut W,
    file: &File,
    mut offset: u64,
    mut len: u64,
) -> io::Result<()> {
    let file = Arc::new(file.try_clone()?);
    let mut buf = vec![0u8; FILE_COPY_CHUNK.min(len as usize)];
    while len > 0 {
        let want = FILE_COPY_CHUNK.min(len as usize);
        let f = Arc::clone(&file);
        let mut chunk = std::mem::take(&mut buf);
        let (chunk, n) = blocking_io(move || {
            let n = f.read_at(&mut chunk[..want], offset)?;
            Ok((chunk, n))
        })?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shorter than the declared length",
            ));
        }
        out.write_all(&chunk[..n])?;
        buf = chunk;
        offset += n as u64;
        len -= n as u64;
    }
    Ok(())
}

impl Transport for TcpStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }

    fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_write_timeout(self, timeout)
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }

    fn send_file(&mut self, file: &File, mut offset: u64, mut len: u64) -> io::Result<()> {
        let in_fd = file.as_raw_fd();
        while len > 0 {
            let count = len.min(SENDFILE_CHUNK) as usize;
            let n = self.write_with(|out_fd| {
                let mut off = offset as libc::off_t;
                // SAFETY: both descriptors are open for the duration of the call and `off` is a
                // valid, exclusively borrowed local.
                let r = unsafe { libc::sendfile(out_fd, in_fd, &mut off, count) };
                if r < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(r as usize)
                }
            })?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file shorter than the declared length",
                ));
            }
            offset += n as u64;
            len -= n as u64;
        }
        Ok(())
    }
}
