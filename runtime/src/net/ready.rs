//! Waiting for a socket to become ready, with a deadline and a shutdown token.
//!
//! In a fiber this parks on the engine's readiness slot for the socket (the fiber that owns the
//! socket is its only waiter); the wake-timer and the token can wake it early. From a plain
//! thread it falls back to `poll(2)`, in short slices when a token must be watched.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use crate::engine::io::{AsIoData, WaitIo};
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
        let events = match interest {
            Interest::Read => libc::POLLIN,
            Interest::Write => libc::POLLOUT,
        };
        poll(socket.as_raw_fd(), events, slice).map(drop)
    }
}

/// From a plain thread: runs `op`, a syscall that never waits, until it does not find the
/// socket busy, polling `fd` for `interest` in between; after `timeout` (`None`: none) gives
/// `TimedOut` naming `what`.
///
/// A thread never goes through the engine's own blocking calls. Those hand the engine a
/// pointer to an operation on the calling thread's stack and `park` the thread until a proxy
/// fiber unparks it; a `park` can return early (a stray `unpark`, which std allows), and the
/// thread then leaves the call while the proxy still holds the pointer: a use after return,
/// seen as a crash of a worker in the engine's `subscribe` under load.
pub(crate) fn on_thread<R>(
    fd: RawFd,
    interest: Interest,
    timeout: Option<Duration>,
    what: &str,
    mut op: impl FnMut() -> io::Result<R>,
) -> io::Result<R> {
    let deadline = timeout.map(Deadline::after);
    let events = match interest {
        Interest::Read => libc::POLLIN,
        Interest::Write => libc::POLLOUT,
    };
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            done => return done,
        }
        let left = deadline.map(|d| d.remaining());
        if left.is_some_and(|l| l.is_zero()) {
            return Err(Deadline::timed_out(what));
        }
        poll(fd, events, left)?;
    }
}

/// The workspace's one `poll(2)` call: waits up to `timeout` (`None`: no limit) for `events` on
/// `fd` and returns the events that came; none on a timeout or an interrupted call.
fn poll(fd: RawFd, events: libc::c_short, timeout: Option<Duration>) -> io::Result<libc::c_short> {
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
        return match e.kind() {
            io::ErrorKind::Interrupted => Ok(0),
            _ => Err(e),
        };
    }
    Ok(if rc > 0 { pfd.revents } else { 0 })
}

/// Whether `fd` has data (or end of stream, or an error) to read right now; never waits.
pub(crate) fn readable_now(fd: RawFd) -> io::Result<bool> {
    let revents = poll(fd, libc::POLLIN, Some(Duration::ZERO))?;
    Ok(revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0)
}

/// Whether the socket `fd` has room for a write (or a pending error) right now; never waits.
pub fn writable_now(fd: RawFd) -> io::Result<bool> {
    Ok(poll(fd, libc::POLLOUT, Some(Duration::ZERO))? != 0)
}
