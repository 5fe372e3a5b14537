//! Parking: sockets that wait for their next bytes without a fiber ("serve when readable").
//!
//! A server connection spends most of its life waiting for the client's next request. Waiting
//! in a fiber keeps the fiber's stack (every page it ever touched) and the connection's buffers
//! for as long as the client stays quiet. A [`ParkingLot`] holds such sockets instead: the owner
//! hands over what must survive the wait (`T`: the socket and its small per-connection state,
//! no buffers) and lets its fiber finish; when the socket becomes readable, its deadline passes
//! or the lot closes, the lot calls its wake function with the state and a [`Wake`] saying why,
//! and that function starts a fiber (with a pooled stack) to go on.
//!
//! # Design
//!
//! - One shard per worker. A shard is an epoll instance of its own, registered with the engine
//!   like a socket, and one fiber waiting on it; a socket always goes to shard `fd % shards`.
//! - Parking arms the socket in its shard for one readability report (`EPOLLONESHOT`) with one
//!   `epoll_ctl`: `ADD` the first time, `MOD` after. Whether the socket was registered before
//!   is a flag the parked state carries ([`Parkable::registered`]), so it goes with the socket:
//!   a descriptor number closed and reused by a new connection starts again with `ADD` (a flag
//!   per descriptor number would make that first park a `MOD` failing with `ENOENT`, then an
//!   `ADD`). The call reports bytes that arrived before it, so no wake-up is lost between the
//!   owner's last read and the park, and the owner never needs a speculative read that finds
//!   nothing. Closing a socket drops its registration in the kernel: nothing is ever
//!   deregistered.
//! - Deadlines sit in an ordered set per shard. The shard's fiber arms one engine timer for the
//!   earliest, rounded up by [`DEADLINE_TICK`], and keeps it while it still fires in time, so a
//!   busy lot arms a handful of timers per second, not one per park. A deadline is honoured
//!   within one tick.
//! - The wake function runs on the shard's fiber (or, for [`Wake::Closed`] and when the kernel
//!   refuses the registration, on the parking fiber): it must not wait. Typically it spawns.
//!
//! # Trade-offs
//!
//! Against a fiber parked in `read`: one `epoll_ctl` per park instead of the read that finds
//! nothing, and a fiber spawn per wake (a pooled stack, no `mmap`). In exchange an idle socket
//! costs its slot in the lot and whatever `T` holds. The engine also keeps the socket in its own
//! epoll set (it registers every socket for its lifetime), so a parked socket's bytes raise one
//! event there too, which the engine drops: no waiter.

use std::collections::BTreeSet;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::epoll::{Epoll, Event, Guess, NO_EVENT};
use super::ready::Interest;
use crate::counters::SOCKETS_PARKED;
use crate::engine::io::{CoIo, Registered, WaitIo};
use crate::fiber::Builder as FiberBuilder;
use crate::{config, wake_timer};

/// Why a parked socket came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// Bytes, end of stream or an error are there to read.
    Readable,
    /// Its deadline passed first.
    TimedOut,
    /// The lot was closed (a server shutting down, say).
    Closed,
}

/// Deadlines are honoured within this much: a shard's timer fires at most this late.
pub const DEADLINE_TICK: Duration = Duration::from_millis(50);

/// Events taken from a shard's epoll per call.
const EVENTS: usize = 256;

type WakeFn<T> = dyn Fn(T, Wake) + Send + Sync;

/// What a [`ParkingLot`] holds: the state of a socket's owner, carrying one flag for the lot.
pub trait Parkable: AsRawFd + Send + 'static {
    /// The lot's flag, `false` for a new socket: whether a lot has registered this socket with
    /// its epoll (the lot sets it; the owner only stores it, next to the socket).
    fn registered(&mut self) -> &mut bool;
}

/// Sockets (with their owners' state `T`) waiting for readability without a fiber; see the
/// module docs. Dropping the lot closes it.
pub struct ParkingLot<T: Parkable> {
    lot: Arc<Lot<T>>,
}

struct Lot<T> {
    shards: Box<[Shard<T>]>,
    /// What the lot waits for: readability, or writability (`write_wait.rs`).
    interest: Interest,
    wake: Box<WakeFn<T>>,
    closed: AtomicBool,
    parked: AtomicUsize,
    /// Parks since the lot opened.
    parks: AtomicUsize,
    /// Parks whose first `epoll_ctl` guessed the registration wrong and needed a second.
    retries: AtomicUsize,
}

struct Shard<T> {
    epoll: Registered<CoIo<Epoll>>,
    state: Mutex<State<T>>,
}

/// A shard's parked entries. A key is the slot index in the low 32 bits and the slot's
/// generation in the high ones, so an event for an entry that already left is recognised.
struct State<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    deadlines: BTreeSet<(Instant, u64)>,
    /// When the shard's timer fires, if one is armed.
    timer_at: Option<Instant>,
}

struct Slot<T> {
    generation: u32,
    entry: Option<(T, Option<Instant>)>,
}

impl<T: Parkable> ParkingLot<T> {
    /// A lot with one shard (and one waiting fiber) per worker; `wake` gets each socket back.
    pub fn new(wake: impl Fn(T, Wake) + Send + Sync + 'static) -> io::Result<Self> {
        Self::waiting_for(Interest::Read, wake)
    }

    /// A lot whose sockets come back when they have `interest` ([`Wake::Readable`] then means
    /// that: room to write, for [`Interest::Write`]).
    pub(crate) fn waiting_for(
        interest: Interest,
        wake: impl Fn(T, Wake) + Send + Sync + 'static,
    ) -> io::Result<Self> {
        config::ensure();
        let shards = config::current_config().map_or(1, |c| c.workers).max(1);
        let shards = (0..shards)
            .map(|_| {
                Ok(Shard {
                    epoll: Registered::new(CoIo::new(Epoll::new()?).map_err(io::Error::from)?),
                    state: Mutex::new(State {
                        slots: Vec::new(),
                        free: Vec::new(),
                        deadlines: BTreeSet::new(),
                        timer_at: None,
                    }),
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let lot = Arc::new(Lot {
            shards: shards.into_boxed_slice(),
            interest,
            wake: Box::new(wake),
            closed: AtomicBool::new(false),
            parked: AtomicUsize::new(0),
            parks: AtomicUsize::new(0),
            retries: AtomicUsize::new(0),
        });
        for index in 0..lot.shards.len() {
            let lot = Arc::clone(&lot);
            FiberBuilder::new()
                .name(format!("moria-park-{index}"))
                .spawn(move || run_shard(&lot, index))?;
        }
        Ok(ParkingLot { lot })
    }

    /// Parks `item` until its socket is readable, `deadline` passes (`None`: never) or the lot
    /// closes. Its owner's fiber may finish right after this returns.
    pub fn park(&self, mut item: T, deadline: Option<Instant>) {
        let lot = &*self.lot;
        let fd = item.as_raw_fd();
        let shard = &lot.shards[fd as usize % lot.shards.len()];
        let (key, known, wake_shard) = {
            let mut st = shard.state.lock();
            if lot.closed.load(Ordering::Acquire) {
                drop(st);
                return (lot.wake)(item, Wake::Closed);
            }
            // Set while the item is still ours: once armed, the shard's fiber may hand it on.
            let known = std::mem::replace(item.registered(), true);
            let key = st.insert(item, deadline);
            // A deadline earlier than the shard's timer (or none armed) needs the shard's fiber.
            let sooner =
                deadline.is_some_and(|d| st.timer_at.is_none_or(|t| d + DEADLINE_TICK < t));
            (key, known, sooner)
        };
        lot.parked.fetch_add(1, Ordering::Relaxed);
        lot.parks.fetch_add(1, Ordering::Relaxed);
        if lot.counted() {
            SOCKETS_PARKED.fetch_add(1, Ordering::Relaxed);
        }
        match shard
            .epoll
            .inner()
            .arm_oneshot(fd, key, known, lot.interest)
        {
            Ok(Guess::Right) => {}
            Ok(Guess::Wrong) => {
                lot.retries.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                log::debug!("cannot park fd {fd}: {e}; resuming it at once");
                let entry = shard.state.lock().take(key);
                if let Some(item) = entry {
                    lot.unparked(1);
                    // The owner's next read meets whatever is wrong with the socket.
                    (lot.wake)(item, Wake::Readable);
                }
            }
        }
        if wake_shard {
            shard.epoll.waker().wakeup();
        }
    }

    /// Sockets parked now.
    pub fn parked(&self) -> usize {
        self.lot.parked.load(Ordering::Relaxed)
    }

    /// Parks since the lot opened (a socket parked twice counts twice).
    pub fn parks(&self) -> usize {
        self.lot.parks.load(Ordering::Relaxed)
    }

    /// Parks that took a second `epoll_ctl` because the first guessed the socket's
    /// registration wrong (a socket parked before in another lot, or one a failed park left
    /// flagged): none for sockets that park only here.
    pub fn registration_retries(&self) -> usize {
        self.lot.retries.load(Ordering::Relaxed)
    }

    /// Wakes every parked socket with [`Wake::Closed`]; later parks get it at once.
    pub fn close(&self) {
        self.lot.closed.store(true, Ordering::Release);
        for shard in self.lot.shards.iter() {
            shard.epoll.waker().wakeup();
        }
    }
}

impl<T: Parkable> Drop for ParkingLot<T> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<T: Parkable> std::fmt::Debug for ParkingLot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkingLot")
            .field("shards", &self.lot.shards.len())
            .field("parked", &self.parked())
            .finish()
    }
}

impl<T> Lot<T> {
    /// Whether the runtime's parked-sockets counter counts this lot's sockets (idle ones, not
    /// writers waiting for room).
    fn counted(&self) -> bool {
        matches!(self.interest, Interest::Read)
    }

    fn unparked(&self, n: usize) {
        self.parked.fetch_sub(n, Ordering::Relaxed);
        if self.counted() {
            SOCKETS_PARKED.fetch_sub(n as u64, Ordering::Relaxed);
        }
    }
}

/// A shard's fiber: collects readable sockets, expired deadlines and, once the lot closes,
/// everything; hands each to the wake function outside the lock; waits for more.
fn run_shard<T: Parkable>(lot: &Lot<T>, index: usize) {
    let shard = &lot.shards[index];
    let mut events: Vec<Event> = vec![NO_EVENT; EVENTS];
    let mut woken: Vec<(T, Wake)> = Vec::new();
    let mut _timer: Option<wake_timer::Armed> = None;
    loop {
        let closed = lot.closed.load(Ordering::Acquire);
        loop {
            let n = match shard.epoll.inner().poll(&mut events) {
                Ok(n) => n,
                Err(e) => {
                    log::error!("parking lot shard {index}: epoll_wait failed: {e}");
                    0
                }
            };
            let mut st = shard.state.lock();
            for event in &events[..n] {
                if let Some(item) = st.take(event.u64) {
                    woken.push((item, Wake::Readable));
                }
            }
            if n < EVENTS {
                break;
            }
        }
        {
            let mut st = shard.state.lock();
            let now = Instant::now();
            st.take_expired(now, &mut woken);
            if closed {
                st.take_all(&mut woken);
            }
            if st.timer_at.is_some_and(|t| t <= now) {
                st.timer_at = None;
                _timer = None;
            }
            match st.deadlines.first() {
                None => {
                    st.timer_at = None;
                    _timer = None;
                }
                Some(&(earliest, _))
                    if st.timer_at.is_none_or(|t| t > earliest + DEADLINE_TICK) =>
                {
                    let at = earliest + DEADLINE_TICK;
                    _timer = Some(wake_timer::arm(at, shard.epoll.waker()));
                    st.timer_at = Some(at);
                }
                Some(_) => {}
            }
        }
        lot.unparked(woken.len());
        for (item, why) in woken.drain(..) {
            (lot.wake)(item, why);
        }
        if closed {
            return;
        }
        shard.epoll.wait_io();
    }
}

impl<T> State<T> {
    fn insert(&mut self, item: T, deadline: Option<Instant>) -> u64 {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    entry: None,
                });
                u32::try_from(self.slots.len() - 1).expect("more than 2^32 parked sockets")
            }
        };
        let slot = &mut self.slots[index as usize];
        slot.entry = Some((item, deadline));
        let key = (u64::from(slot.generation) << 32) | u64::from(index);
        if let Some(at) = deadline {
            self.deadlines.insert((at, key));
        }
        key
    }

    /// Takes the entry `key` names, if it is still parked.
    fn take(&mut self, key: u64) -> Option<T> {
        let index = (key & u64::from(u32::MAX)) as usize;
        let slot = self.slots.get_mut(index)?;
        if u64::from(slot.generation) != key >> 32 {
            return None;
        }
        let (item, deadline) = slot.entry.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(index as u32);
        if let Some(at) = deadline {
            self.deadlines.remove(&(at, key));
        }
        Some(item)
    }

    fn take_expired(&mut self, now: Instant, out: &mut Vec<(T, Wake)>) {
        while let Some(&(at, key)) = self.deadlines.first() {
            if at > now {
                break;
            }
            if let Some(item) = self.take(key) {
                out.push((item, Wake::TimedOut));
            }
        }
    }

    fn take_all(&mut self, out: &mut Vec<(T, Wake)>) {
        for index in 0..self.slots.len() {
            let slot = &self.slots[index];
            let key = (u64::from(slot.generation) << 32) | index as u64;
            if let Some(item) = self.take(key) {
                out.push((item, Wake::Closed));
            }
        }
    }
}
