//! Synchronisation that parks fibers instead of blocking workers; also works from plain threads.
//!
//! | item | what |
//! |---|---|
//! | [`Mutex`], [`RwLock`], [`Condvar`] | locks and waiting on conditions (`mutex.rs`) |
//! | [`Semaphore`] | counting permits with a timed acquire (`semaphore.rs`) |
//! | [`Event`], [`WaitGroup`] | Mordor's FiberEvent (manual/auto reset); Go's WaitGroup (`event.rs`) |
//! | [`channel`], [`bounded`] | MPMC channels with timed and non-blocking forms (`channel.rs`) |
//! | [`PerWorker`] | a value per worker thread for state every request touches (`per_worker.rs`) |

mod channel;
mod event;
mod mutex;
mod per_worker;
mod semaphore;

pub use channel::{
    bounded, channel, Receiver, RecvError, RecvTimeoutError, SendError, SendTimeoutError, Sender,
    TryRecvError, TrySendError,
};
pub use event::{Event, Reset, WaitGroup};
pub use mutex::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use per_worker::PerWorker;
pub use semaphore::Semaphore;
