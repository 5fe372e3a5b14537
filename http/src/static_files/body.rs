//! Small bodies read into the response buffer, so head and body leave in one write (and the
//! same path serves HTTP and HTTPS). On a local file system the read is first tried on the
//! fiber with `preadv2(RWF_NOWAIT)`, which returns what the page cache holds and `EAGAIN`
//! instead of waiting for the disk; whatever is missing is read on the offload pool.

use std::io::{self, IoSliceMut};
use std::os::unix::fs::FileExt;

use moria_runtime::blocking_io;
use rustix::io::{Errno, ReadWriteFlags};

use super::open::{Handle, Opened};

/// Files up to this size are read into the response; larger ones go out with `sendfile` on
/// plain TCP, or in offloaded reads under TLS.
pub const SMALL_FILE_MAX: u64 = 64 * 1024;

/// Reads the first `size` bytes of `opened` into `buf` (fewer if the file shrank meanwhile).
pub(crate) fn read_small(opened: &Opened, size: usize, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    buf.resize(size, 0);
    let got = match &opened.handle {
        Handle::Inline(f) => read_inline(f, size, buf)?,
        Handle::Shared(f) => read_inline(f, size, buf)?,
        Handle::Offloaded(f) => {
            let mut got = 0;
            while got < size {
                match f.read_at(&mut buf[got..], got as u64)? {
                    0 => break,
                    n => got += n,
                }
            }
            got
        }
    };
    buf.truncate(got);
    Ok(())
}

/// The fast path: what the page cache holds without waiting, the rest on the pool.
fn read_inline(f: &std::fs::File, size: usize, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut got =
        match rustix::io::preadv2(f, &mut [IoSliceMut::new(buf)], 0, ReadWriteFlags::NOWAIT) {
            Ok(n) => n,
            // Not in the page cache, or RWF_NOWAIT unsupported here: read on the pool.
            Err(Errno::AGAIN | Errno::OPNOTSUPP | Errno::INVAL) => 0,
            Err(e) => return Err(e.into()),
        };
    if got < size {
        let file = f.try_clone()?;
        let mut rest = buf.split_off(got);
        let (back, n) = blocking_io(move || {
            let n = read_full_at(&file, &mut rest, got as u64)?;
            Ok((rest, n))
        })?;
        buf.extend_from_slice(&back[..n]);
        got += n;
    }
    Ok(got)
}

/// `pread` until `buf` is full or the file ends; returns the bytes read.
fn read_full_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
