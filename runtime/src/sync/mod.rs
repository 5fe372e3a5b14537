//! Synchronisation that parks fibers instead of blocking workers; also works from plain threads.
//!
//! | item | what |
//! |---|---|
//! | [`Mutex`], [`RwLock`], [`Condvar`] | locks and waiting on conditions (`mutex.rs`) |
//! | [`Semaphore`] | counting permits with a timed acquire (`semaphore.rs`) |
//! | [`Event`], [`WaitGroup`] | Mordor's FiberEvent (manual/auto reset); Go's WaitGroup (`event.rs`) |
//! | [`channel`], [`bounded`] | MPMC channels with timed and non-blocking forms (`channel.rs`) |

mod channel;
mod event;
mod mutex;
mod semaphore;

pub use channel::{
    bounded, channel, Receiver, RecvError, RecvTimeoutError, SendError, SendTimeoutError, Sender,
    TryRecvError, TrySendError,
};
pub use event::{Event, Reset, WaitGroup};
pub use mutex::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use semaphore::Semaphore;
