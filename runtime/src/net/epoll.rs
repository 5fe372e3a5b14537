//! A thin owner of one epoll instance (the parking lots' shards each have one).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use super::ready::Interest;

/// One epoll instance, closed on drop.
#[derive(Debug)]
pub(crate) struct Epoll {
    fd: OwnedFd,
}

/// One reported event: the registration's data word and what happened.
pub(crate) type Event = libc::epoll_event;

/// An empty event, to size a buffer for [`Epoll::poll`].
pub(crate) const NO_EVENT: Event = libc::epoll_event { events: 0, u64: 0 };

/// Whether [`Epoll::arm_oneshot`]'s first call was the right one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Guess {
    /// One `epoll_ctl`.
    Right,
    /// The first call failed (`ENOENT` or `EEXIST`) and the other one was needed.
    Wrong,
}

impl Epoll {
    /// A new epoll instance (close-on-exec).
    pub(crate) fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall; the descriptor is owned from here on.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Arms `fd` for one report of `interest` carrying `data` (`EPOLLONESHOT`): modifies its
    /// registration when `known`, adds it otherwise, and falls back to the other call when the
    /// guess was wrong (the socket was registered with another epoll, or a failed call left the
    /// flag wrong). Readiness that is already there is reported at once.
    pub(crate) fn arm_oneshot(
        &self,
        fd: RawFd,
        data: u64,
        known: bool,
        interest: Interest,
    ) -> io::Result<Guess> {
        let (first, second) = match known {
            true => (libc::EPOLL_CTL_MOD, libc::EPOLL_CTL_ADD),
            false => (libc::EPOLL_CTL_ADD, libc::EPOLL_CTL_MOD),
        };
        let events = match interest {
            Interest::Read => libc::EPOLLIN | libc::EPOLLRDHUP,
            Interest::Write => libc::EPOLLOUT,
        };
        let events = (events | libc::EPOLLONESHOT) as u32;
        match self.ctl(first, fd, data, events) {
            Ok(()) => Ok(Guess::Right),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::EEXIST)) => {
                self.ctl(second, fd, data, events).map(|()| Guess::Wrong)
            }
            Err(e) => Err(e),
        }
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, data: u64, events: u32) -> io::Result<()> {
        let mut event = libc::epoll_event { events, u64: data };
        // SAFETY: `event` is a valid epoll_event for the duration of the call.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut event) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Collects the events that are ready now into `events`, never waiting; returns how many.
    pub(crate) fn poll(&self, events: &mut [Event]) -> io::Result<usize> {
        let max = libc::c_int::try_from(events.len()).unwrap_or(libc::c_int::MAX);
        loop {
            // SAFETY: `events` has room for `max` entries; timeout 0 never blocks.
            let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), max, 0) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl AsRawFd for Epoll {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl IntoRawFd for Epoll {
    fn into_raw_fd(self) -> RawFd {
        self.fd.into_raw_fd()
    }
}
