//! The server role over the shared codec, split by job:
//!
//! - `conn.rs`: the connection loop (read a batch, answer each head through the [`Dispatch`],
//!   write the answers at once, wait or park), what a connection remembers between runs, and
//!   the [`Dispatch`] trait: the one thing the loop asks of the layer above it.
//! - `buffers.rs`: the working state ([`Conn`]: read and write buffers, the parsed head) and its
//!   I/O: room for a head, flush, timeouts, lingering before a close.
//! - `pool.rs`: working states kept between connections, per worker.
//! - `input.rs`: the read side as a `BufRead` for request bodies.
//! - `date.rs`: the cached `Date`; `status.rs`: the one status each decoding failure gets.
//!
//! Nothing here names the application (`Request`, `Response`, `Handler`): that is
//! `crate::dispatch::h1`, which implements [`Dispatch`].

mod buffers;
mod conn;
mod date;
mod input;
mod pool;
mod status;

pub(crate) use buffers::{Conn, Scratch, INIT_READ_BUF, MIN_BODY_ROOM, WRITE_FLUSH_AT};
pub(crate) use conn::{serve, ConnMemory, Dispatch, Ending, Next};
pub(crate) use date::current_date;
pub(crate) use input::Input;
pub(crate) use pool::ConnPool;
