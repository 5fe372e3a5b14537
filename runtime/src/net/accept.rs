//! The accept loop shared by TCP and Unix listeners: non-blocking accept, then a readiness wait
//! that a deadline or a shutdown token can cut short.

use std::io;
use std::os::fd::AsRawFd;

use super::ready::{self, Interest};
use crate::engine::io::AsIoData;
use crate::shutdown::ShutdownToken;
use crate::time::Deadline;

/// Calls `try_accept` until it yields a connection; `Ok(None)` once `token` fires.
pub(crate) fn accept_loop<L, S>(
    listener: &L,
    mut try_accept: impl FnMut() -> io::Result<S>,
    deadline: Option<Deadline>,
    token: Option<&ShutdownToken>,
) -> io::Result<Option<S>>
where
    L: AsIoData + AsRawFd,
{
    loop {
        if token.is_some_and(ShutdownToken::is_triggered) {
            return Ok(None);
        }
        match try_accept() {
            Ok(conn) => return Ok(Some(conn)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_transient(&e) => {
                log::debug!("accept: transient error {e}");
                continue;
            }
            Err(e) => return Err(e),
        }
        if deadline.is_some_and(|d| d.expired()) {
            return Err(Deadline::timed_out("accept"));
        }
        ready::wait(listener, Interest::Read, deadline, token)?;
    }
}

/// Errors after which the listener is still fine (the peer gave up before we accepted).
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED) | Some(libc::EPROTO) | Some(libc::EPERM)
    )
}
