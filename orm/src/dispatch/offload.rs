//! The offload dispatcher: the calling fiber waits for a free connection (parked on a channel, holding
//! no thread), then runs the call as one `moria_runtime::blocking` job that hands the connection
//! back when done. Waiting on the pool thread instead would let a burst of callers occupy every
//! offload thread while one of them works, stalling file, DNS and static-file jobs behind it.

use moria_runtime::blocking;
use moria_runtime::sync::{bounded, Receiver, Sender};

use super::{run_caught, Opener};
use crate::conn::Conn;
use crate::error::{Error, Result};

/// `n` connections, idle ones queued in a channel of capacity `n`.
pub(crate) struct OffloadDispatcher {
    idle: Receiver<Conn>,
    back: Sender<Conn>,
}

impl OffloadDispatcher {
    pub(crate) fn open(n: usize, open: Opener) -> Result<Self> {
        let conns = blocking(move || (0..n).map(|_| open()).collect::<Result<Vec<_>>>())
            .map_err(|e| Error::Offload(e.to_string()))??;
        let (back, idle) = bounded(n.max(1));
        for c in conns {
            back.send(c)
                .map_err(|_| Error::Offload("connection queue closed".into()))?;
        }
        Ok(OffloadDispatcher { idle, back })
    }

    pub(crate) fn call<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let conn = self
            .idle
            .recv()
            .map_err(|_| Error::Offload("connection queue closed".into()))?;
        let back = self.back.clone();
        blocking(move || {
            let out = run_caught(&conn, f);
            // The queue holds every connection of the dispatcher, so it always has room.
            let _ = back.send(conn);
            out
        })
        .map_err(|e| Error::Offload(e.to_string()))?
    }
}
