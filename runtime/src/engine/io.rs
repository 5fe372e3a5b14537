//! The engine's sockets and readiness traits, re-exported unwrapped for `net`: the socket read
//! and write paths call them directly. One wrapper, [`Registered`], fixes the order in which
//! the engine's generic descriptor wrapper (`CoIo`) lets go of a descriptor.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

pub(crate) use may::io::{AsIoData, CoIo, WaitIo, WaitIoWaker};
pub(crate) use may::net::{TcpListener, TcpStream, UdpSocket};
pub(crate) use may::os::unix::net::UnixStream;

/// A descriptor in the engine's `CoIo` (its Unix sockets; the parking lot's epoll shards) that
/// leaves the engine's epoll set before it closes.
///
/// The engine registers a descriptor with a worker's epoll by number and, on drop, removes it by
/// number (`epoll_ctl(DEL, fd)`). Its TCP and UDP sockets do that first and close after; `CoIo`
/// declares its descriptor before its registration, so it closes first. In between, another
/// thread can open a socket that gets the same number and register it, and the late removal
/// deletes *that* registration: the new socket never reports readiness again, and the fiber
/// waiting on it waits forever. (While a duplicate keeps the old socket open, the same order
/// leaves the old registration behind instead.) Dropping a `Registered` hands the descriptor
/// back out of the engine first (`into_raw_fd`, which drops the registration while the number
/// is still ours), then closes it.
pub(crate) struct Registered<T: IntoRawFd>(ManuallyDrop<T>);

impl<T: IntoRawFd> Registered<T> {
    pub(crate) fn new(io: T) -> Self {
        Registered(ManuallyDrop::new(io))
    }
}

impl<T: IntoRawFd> Drop for Registered<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here, and never touched again.
        let io = unsafe { ManuallyDrop::take(&mut self.0) };
        let fd = io.into_raw_fd();
        // SAFETY: the engine gave the descriptor back; nothing else owns it.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
    }
}

impl<T: IntoRawFd> Deref for Registered<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: IntoRawFd> DerefMut for Registered<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: IntoRawFd + AsRawFd> AsRawFd for Registered<T> {
    #[inline]
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

impl<T: IntoRawFd + AsIoData> AsIoData for Registered<T> {
    #[inline]
    fn as_io_data(&self) -> &may::io::IoData {
        self.0.as_io_data()
    }
}

impl<T: IntoRawFd + std::fmt::Debug> std::fmt::Debug for Registered<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
