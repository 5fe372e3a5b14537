//! Channels between fibers and threads: unbounded, or bounded so that senders wait at capacity.
//!
//! One implementation serves both (a queue under a fiber-aware mutex, two condition variables);
//! every handle can be cloned (many senders, many receivers), every blocking call has a timed
//! and a non-blocking form. There is deliberately no `select`: the engine's own `select!` loses
//! or duplicates messages, and a correct one needs a single-waiter design not built yet.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{Condvar, Mutex};
use crate::time::Deadline;

struct State<T> {
    queue: VecDeque<T>,
    senders: usize,
    receivers: usize,
}

struct Chan<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
    capacity: Option<usize>,
}

impl<T> Chan<T> {
    fn full(&self, state: &State<T>) -> bool {
        self.capacity.is_some_and(|cap| state.queue.len() >= cap)
    }
}

/// The sending half; clone it for more senders.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

/// The receiving half; clone it for more receivers (each message goes to one of them).
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

/// An unbounded channel: `send` never waits.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    make(None)
}

/// A bounded channel: `send` waits while `capacity` messages are queued.
///
/// # Panics
/// If `capacity` is zero (rendezvous channels are not offered).
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "bounded channel capacity must be at least 1");
    make(Some(capacity))
}

fn make<T>(capacity: Option<usize>) -> (Sender<T>, Receiver<T>) {
    let chan = Arc::new(Chan {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            senders: 1,
            receivers: 1,
        }),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
        capacity,
    });
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// The receivers are gone; the message comes back.
#[derive(PartialEq, Eq, thiserror::Error)]
#[error("sending on a channel whose receivers are gone")]
pub struct SendError<T>(pub T);

/// Why `send_timeout` failed; the message comes back.
#[derive(PartialEq, Eq, thiserror::Error)]
pub enum SendTimeoutError<T> {
    /// The channel stayed full until the deadline.
    #[error("channel full until the timeout")]
    Timeout(T),
    /// The receivers are gone.
    #[error("sending on a channel whose receivers are gone")]
    Disconnected(T),
}

/// Why `try_send` failed; the message comes back.
#[derive(PartialEq, Eq, thiserror::Error)]
pub enum TrySendError<T> {
    /// The channel is full.
    #[error("channel full")]
    Full(T),
    /// The receivers are gone.
    #[error("sending on a channel whose receivers are gone")]
    Disconnected(T),
}

/// Every sender is gone and the queue is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("receiving on an empty channel whose senders are gone")]
pub struct RecvError;

/// Why `recv_timeout` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecvTimeoutError {
    /// Nothing arrived before the deadline.
    #[error("nothing received before the timeout")]
    Timeout,
    /// Every sender is gone and the queue is empty.
    #[error("receiving on an empty channel whose senders are gone")]
    Disconnected,
}

/// Why `try_recv` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TryRecvError {
    /// Nothing queued right now.
    #[error("channel empty")]
    Empty,
    /// Every sender is gone and the queue is empty.
    #[error("receiving on an empty channel whose senders are gone")]
    Disconnected,
}

macro_rules! opaque_debug {
    ($($t:ident),*) => {$(
        impl<T> fmt::Debug for $t<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(stringify!($t))
            }
        }
    )*};
}
opaque_debug!(SendError, SendTimeoutError, TrySendError, Sender, Receiver);

/// What a send attempt found.
enum Outcome<T> {
    Sent,
    Full(T),
    Closed(T),
}

impl<T> Sender<T> {
    /// Queues `value`, waiting while a bounded channel is full.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        match self.send_until(value, None) {
            Outcome::Sent => Ok(()),
            Outcome::Full(v) | Outcome::Closed(v) => Err(SendError(v)),
        }
    }

    /// Queues `value`, waiting at most `timeout` for room.
    pub fn send_timeout(&self, value: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        match self.send_until(value, Some(Deadline::after(timeout))) {
            Outcome::Sent => Ok(()),
            Outcome::Full(v) => Err(SendTimeoutError::Timeout(v)),
            Outcome::Closed(v) => Err(SendTimeoutError::Disconnected(v)),
        }
    }

    /// Queues `value` only if there is room right now.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        match self.send_until(value, Some(Deadline::after(Duration::ZERO))) {
            Outcome::Sent => Ok(()),
            Outcome::Full(v) => Err(TrySendError::Full(v)),
            Outcome::Closed(v) => Err(TrySendError::Disconnected(v)),
        }
    }

    fn send_until(&self, value: T, deadline: Option<Deadline>) -> Outcome<T> {
        let chan = &*self.chan;
        let mut state = chan.state.lock();
        let blocked = |s: &mut State<T>| s.receivers > 0 && chan.full(s);
        let timed_out = match deadline {
            None => {
                chan.not_full.wait_while(&mut state, blocked);
                false
            }
            Some(d) => chan.not_full.wait_while_until(&mut state, d, blocked),
        };
        if state.receivers == 0 {
            return Outcome::Closed(value);
        }
        if timed_out {
            return Outcome::Full(value);
        }
        state.queue.push_back(value);
        drop(state);
        chan.not_empty.notify_one();
        Outcome::Sent
    }

    /// Messages queued now.
    pub fn len(&self) -> usize {
        self.chan.state.lock().queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bound, or `None` for an unbounded channel.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity
    }
}

impl<T> Receiver<T> {
    /// Takes the next message, waiting for one.
    pub fn recv(&self) -> Result<T, RecvError> {
        self.recv_until(None).map_err(|_| RecvError)
    }

    /// Takes the next message, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_until(Some(Deadline::after(timeout)))
            .map_err(|closed| match closed {
                true => RecvTimeoutError::Disconnected,
                false => RecvTimeoutError::Timeout,
            })
    }

    /// Takes the next message if one is queued.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.recv_until(Some(Deadline::after(Duration::ZERO)))
            .map_err(|closed| match closed {
                true => TryRecvError::Disconnected,
                false => TryRecvError::Empty,
            })
    }

    /// The next message, or `Err(closed)` where `closed` tells disconnection from time-out.
    fn recv_until(&self, deadline: Option<Deadline>) -> Result<T, bool> {
        let chan = &*self.chan;
        let mut state = chan.state.lock();
        let empty = |s: &mut State<T>| s.senders > 0 && s.queue.is_empty();
        match deadline {
            None => chan.not_empty.wait_while(&mut state, empty),
            Some(d) => {
                chan.not_empty.wait_while_until(&mut state, d, empty);
            }
        }
        match state.queue.pop_front() {
            Some(v) => {
                drop(state);
                if chan.capacity.is_some() {
                    chan.not_full.notify_one();
                }
                Ok(v)
            }
            None => Err(state.senders == 0),
        }
    }

    /// Messages queued now.
    pub fn len(&self) -> usize {
        self.chan.state.lock().queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over messages until every sender is gone.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv().ok())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.state.lock().senders += 1;
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.chan.state.lock().receivers += 1;
        Receiver {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.chan.state.lock();
        state.senders -= 1;
        if state.senders == 0 {
            drop(state);
            self.chan.not_empty.notify_all();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.chan.state.lock();
        state.receivers -= 1;
        if state.receivers == 0 {
            drop(state);
            self.chan.not_full.notify_all();
        }
    }
}
