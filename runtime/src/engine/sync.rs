//! The engine's parking primitives, re-exported unwrapped: `crate::sync` builds its locks on
//! them (no poisoning, the hop back from the timer thread), the offload pool parks on `Blocker`.

pub(crate) use may::sync::{
    Blocker, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    Semphore as Semaphore,
};
