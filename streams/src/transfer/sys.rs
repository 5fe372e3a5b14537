//! The raw syscalls behind zero-copy transfer: `sendfile(2)`, `splice(2)`, `pipe2(2)`.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::io::RawFd;
use std::ptr;

/// Size asked for the kernel pipe between two spliced sockets (the default is 64 KiB).
pub const SPLICE_PIPE_SIZE: i32 = 1024 * 1024;

fn check(ret: isize) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// Sends up to `count` bytes from `file` at its position (moving it) to `socket`.
pub fn sendfile(socket: RawFd, file: RawFd, count: usize) -> io::Result<usize> {
    // SAFETY: both descriptors are open for the duration of the call (the caller holds the
    // socket and an `Arc` of the file); a null offset makes the kernel use the file position.
    check(unsafe { libc::sendfile(socket, file, ptr::null_mut(), count) })
}

/// Moves up to `count` bytes from `from` to `to`, one of which is a pipe, without blocking.
pub fn splice(from: RawFd, to: RawFd, count: usize) -> io::Result<usize> {
    let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK;
    // SAFETY: both descriptors are open for the duration of the call; null offsets mean "the
    // current position", as required for pipes and sockets.
    check(unsafe { libc::splice(from, ptr::null_mut(), to, ptr::null_mut(), count, flags) })
}

/// A non-blocking kernel pipe `(read end, write end)`, enlarged to [`SPLICE_PIPE_SIZE`] when the
/// system allows.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by no one else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: F_SETPIPE_SZ on a pipe we own; failure (a lower per-user limit) is harmless.
    unsafe { libc::fcntl(fds[1], libc::F_SETPIPE_SZ, SPLICE_PIPE_SIZE) };
    Ok((read, write))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::unix::io::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn sendfile_moves_file_bytes_and_the_file_position() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"hello sendfile").unwrap();
        file.rewind().unwrap();
        let (a, mut b) = UnixStream::pair().unwrap();
        assert_eq!(sendfile(a.as_raw_fd(), file.as_raw_fd(), 5).unwrap(), 5);
        assert_eq!(file.stream_position().unwrap(), 5);
        let mut got = [0u8; 5];
        b.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello");
    }

    #[test]
    fn splice_through_a_pipe() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let (c, mut d) = UnixStream::pair().unwrap();
        let (pr, pw) = pipe().unwrap();
        a.write_all(b"spliced").unwrap();
        assert_eq!(splice(b.as_raw_fd(), pw.as_raw_fd(), 64).unwrap(), 7);
        assert_eq!(splice(pr.as_raw_fd(), c.as_raw_fd(), 64).unwrap(), 7);
        let mut got = [0u8; 7];
        d.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"spliced");
        let err = splice(pr.as_raw_fd(), c.as_raw_fd(), 64).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn bad_descriptors_are_errors_not_crashes() {
        assert!(sendfile(-1, -1, 10).is_err());
        assert!(splice(-1, -1, 10).is_err());
    }
}
