//! The zero-copy loops: `sendfile(2)` from a file, `splice(2)` between sockets.

use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::Arc;

use moria_runtime::blocking_io;
use moria_runtime::net::writable_now;

use super::stats::{SENDFILE, SPLICE};
use super::{copy, sys, RawSink, RawSource};
use crate::File;

/// Most bytes one `sendfile` call is asked to move.
pub const SENDFILE_CHUNK: usize = 8 * 1024 * 1024;

/// `sendfile(2)` from the file's position, each call on the offload pool (it may read the disk).
pub(super) fn send_file(
    file: &mut File,
    sink: &mut dyn RawSink,
    limit: Option<u64>,
) -> io::Result<u64> {
    SENDFILE.begin();
    file.give_back_read_ahead()?;
    let shared = Arc::clone(file.shared());
    let mut moved = 0u64;
    loop {
        let want = copy::chunk(limit, moved, SENDFILE_CHUNK);
        if want == 0 {
            return Ok(moved);
        }
        let n = sink.write_with_fd(&mut |socket| {
            // A full socket would waste a pool round trip: wait for room on the fiber first.
            if !writable_now(socket)? {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let source = Arc::clone(&shared);
            blocking_io(move || sys::sendfile(socket, source.as_raw_fd(), want))
        })?;
        if n == 0 {
            return Ok(moved);
        }
        SENDFILE.moved(n);
        moved += n as u64;
    }
}

/// `splice(2)` socket → kernel pipe → socket; no disk, so it runs on the fiber.
pub(super) fn splice_sockets(
    source: &mut dyn RawSource,
    sink: &mut dyn RawSink,
    limit: Option<u64>,
) -> io::Result<u64> {
    SPLICE.begin();
    let (pipe_read, pipe_write) = sys::pipe()?;
    let (pipe_read, pipe_write) = (pipe_read.as_raw_fd(), pipe_write.as_raw_fd());
    let mut moved = 0u64;
    loop {
        let want = copy::chunk(limit, moved, sys::SPLICE_PIPE_SIZE as usize);
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
            SPLICE.moved(out);
            left -= out;
        }
        moved += n as u64;
    }
}
