//! Waiting for a socket to become ready, with a deadline and a shutdown token.
//!
//! In a fiber this parks on the engine's readiness slot for the socket (the fiber that owns the
//! socket is its only waiter); the wake-timer and the token can wake it early. From a plain
//! thread it falls back to `poll(2)`, in short slices when a token must be watched.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use may::io::{AsIoData, WaitIo};

use crate::shutdown::ShutdownToken;
use crate::time::Deadline;
use crate::{engine, wake_timer};

/// What to wait for.
#[derive(Clone, Copy)]
pub(crate) enum Interest {
    Read,
    Write,
}

/// How often a plain thread re-checks its shutdown token while polling.
const THREAD_TOKEN_POLL: Duration = Duration::from_millis(50);

/// Waits once for readiness (or deadline, or token). Callers retry their syscall in a loop
/// and check the deadline and token themselves; spurious returns are allowed.
pub(crate) fn wait<S: AsIoData + AsRawFd>(
    socket: &S,
    interest: Interest,
    deadline: Option<Deadline>,
    token: Option<&ShutdownToken>,
) -> io::Result<()> {
    if engine::in_fiber() {
        let _armed = deadline.map(|d| wake_timer::arm(d.instant(), socket.waker()));
        let registration = token.map(|t| {
            let waker = socket.waker();
            (t, t.register(Box::new(move || waker.wakeup())))
        });
        socket.wait_io();
        if let Some((t, id)) = registration {
            t.unregister(id);
        }
        Ok(())
    } else {
        let mut slice = deadline.map(|d| d.remaining());
        if token.is_some() {
            slice = Some(slice.map_or(THREAD_TOKEN_POLL, |s| s.min(THREAD_TOKEN_POLL)));
        }
        poll(socket.as_raw_fd(), interest, slice)
    }
}

fn poll(fd: RawFd, interest: Interest, timeout: Option<Duration>) -> io::Result<()> {
    let events = match interest {
        Interest::Read => libc::POLLIN,
        Interest::Write => libc::POLLOUT,
    };
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
    // SAFETY: `pfd` is one valid pollfd and the count passed is 1.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Whether `fd` has data (or end of stream, or an error) to read right now; never waits.
pub(crate) fn readable_now(fd: RawFd) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `pfd` is one valid pollfd and the count passed is 1; timeout 0 never blocks.
    let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc > 0 && pfd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0)
}
