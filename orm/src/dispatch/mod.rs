//! [`Dispatch`]: where a [`Db`](crate::Db) call runs its [`Conn`] work so that no fiber's worker
//! blocks on SQLite, and [`Dispatcher`]: the connections behind each choice.
//!
//! - [`Dispatch::Thread`]: dedicated OS threads own the connections and take jobs from a
//!   channel (`moria_runtime::sync`); the calling fiber parks on a one-message reply channel.
//! - [`Dispatch::Offload`]: the calling fiber waits for a free connection (holding no thread),
//!   then the call is one `moria_runtime::blocking` job.
//! - [`Dispatch::Inline`]: memory databases only (no disk I/O to wait for): the call runs on the
//!   calling fiber under a fiber-aware mutex.
//!
//! - PostgreSQL (not a [`Dispatch`] choice): the call runs on the calling fiber with a pooled
//!   connection; the client's waits park only that fiber.
//!
//! Every dispatcher refuses a call made from inside one of its own database's closures
//! ([`Error::Reentrant`], see `reentry.rs`) and turns a panic inside the job into [`Error::Panicked`]; open transactions roll back
//! as the panic unwinds through their guards.

mod inline;
mod offload;
pub(crate) mod pg;
mod reentry;
mod thread;

use std::any::Any;
use std::sync::Arc;

use crate::conn::Conn;
use crate::error::{Error, Result};

/// How [`Db`](crate::Db) calls reach SQLite (see the module docs for the measured trade-off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Dedicated connection threads fed by a channel.
    Thread,
    /// One offload-pool job per call.
    Offload,
    /// On the calling fiber; memory databases only.
    Inline,
}

/// Opens one connection; called on the thread that will use it.
pub(crate) type Opener = Arc<dyn Fn() -> Result<Conn> + Send + Sync>;

/// A job run against a connection, with its result sent back by the job itself.
pub(crate) type Job = Box<dyn FnOnce(&Conn) + Send>;

/// A set of `n` connections behind one dispatch strategy.
pub(crate) enum Dispatcher {
    Inline(Box<inline::InlineDispatcher>),
    Offload(offload::OffloadDispatcher),
    Thread(thread::ThreadDispatcher),
    Pg(pg::PgDispatcher),
}

impl Dispatcher {
    /// Opens `n` connections with `open`, dispatched by `how`.
    pub(crate) fn open(how: Dispatch, n: usize, open: Opener, name: &str) -> Result<Dispatcher> {
        Ok(match how {
            Dispatch::Inline => {
                Dispatcher::Inline(Box::new(inline::InlineDispatcher::open(&open)?))
            }
            Dispatch::Offload => Dispatcher::Offload(offload::OffloadDispatcher::open(n, open)?),
            Dispatch::Thread => Dispatcher::Thread(thread::ThreadDispatcher::open(n, open, name)?),
        })
    }

    /// Runs `f` on one of the dispatcher's connections and returns its result to the calling fiber;
    /// `db` identifies the database, for the reentrancy guard.
    pub(crate) fn call<R, F>(&self, db: usize, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let chain = reentry::enter(db)?;
        let f = move |c: &Conn| reentry::within(chain, || f(c));
        match self {
            Dispatcher::Inline(l) => l.call(f),
            Dispatcher::Offload(l) => l.call(f),
            Dispatcher::Thread(l) => l.call(f),
            Dispatcher::Pg(l) => l.call(f),
        }
    }
}

/// Runs `f`, turning a panic into `Error::Panicked`.
pub(crate) fn run_caught<R>(conn: &Conn, f: impl FnOnce(&Conn) -> Result<R>) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn)))
        .unwrap_or_else(|p| Err(Error::Panicked(panic_message(&*p))))
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into())
}
