//! Waiting for room to write without the engine: the writing half of a split socket
//! ([`TcpWriter`](super::TcpWriter)) shares its descriptor with the reading half, and the engine
//! keeps one waiter per descriptor, which belongs to the reader. A writer that finds the socket
//! full arms it, in a process-wide [`ParkingLot`] watching writability (its own epoll set), and
//! sleeps on an event the lot's fiber sets when the socket has room, the write deadline passes
//! or the lot closes.
//!
//! The trade-off: a wait costs an `epoll_ctl`, the lot's fiber and an event, more than the
//! engine's own wait, and buys one descriptor per connection instead of two. Only writes that
//! find the socket full pay it.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::park::{Parkable, ParkingLot, Wake};
use super::ready::Interest;
use crate::sync::{Event, Reset};

/// A writer waiting for room.
struct Waiting {
    fd: RawFd,
    registered: bool,
    woken: Arc<Woken>,
}

/// Set by the lot's fiber when the wait ends, with why.
struct Woken {
    event: Event,
    why: AtomicU8,
}

const ROOM: u8 = 0;
const TIMED_OUT: u8 = 1;
const CLOSED: u8 = 2;

impl AsRawFd for Waiting {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl Parkable for Waiting {
    fn registered(&mut self) -> &mut bool {
        &mut self.registered
    }
}

static LOT: OnceLock<ParkingLot<Waiting>> = OnceLock::new();

fn lot() -> io::Result<&'static ParkingLot<Waiting>> {
    if let Some(lot) = LOT.get() {
        return Ok(lot);
    }
    let lot = ParkingLot::waiting_for(Interest::Write, |w: Waiting, wake| {
        let why = match wake {
            Wake::Readable => ROOM,
            Wake::TimedOut => TIMED_OUT,
            Wake::Closed => CLOSED,
        };
        w.woken.why.store(why, Ordering::Release);
        w.woken.event.set();
    })?;
    // Two first writers may race: the loser's lot closes when dropped, holding no one.
    Ok(LOT.get_or_init(|| lot))
}

/// Waits until the socket `fd` has room to write or `deadline` passes (the caller's next try
/// tells which; spurious returns are allowed). `registered` is the writer's flag for the lot
/// ([`Parkable::registered`]): `false` for a new socket, kept by the writer from then on.
pub(crate) fn wait(fd: RawFd, registered: &mut bool, deadline: Option<Instant>) -> io::Result<()> {
    let woken = Arc::new(Woken {
        event: Event::new(Reset::Auto),
        why: AtomicU8::new(ROOM),
    });
    let waiting = Waiting {
        fd,
        registered: *registered,
        woken: woken.clone(),
    };
    lot()?.park(waiting, deadline);
    *registered = true;
    woken.event.wait();
    match woken.why.load(Ordering::Acquire) {
        CLOSED => Err(io::Error::other("the write wait's parking lot closed")),
        _ => Ok(()),
    }
}
