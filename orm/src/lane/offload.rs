//! The offload lane: each call is one `moria_runtime::blocking` job that checks a connection
//! out of a pool (waiting on the pool thread, never on the fiber's worker).

use std::sync::{Arc, Condvar, Mutex, PoisonError};

use moria_runtime::blocking;

use super::{run_caught, Opener};
use crate::conn::Conn;
use crate::error::{Error, Result};

struct Pool {
    idle: Mutex<Vec<Conn>>,
    returned: Condvar,
}

impl Pool {
    fn take(&self) -> Conn {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(c) = idle.pop() {
                return c;
            }
            idle = self
                .returned
                .wait(idle)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn give_back(&self, conn: Conn) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(conn);
        self.returned.notify_one();
    }
}

/// `n` connections used by offload-pool threads.
pub(crate) struct OffloadLane {
    pool: Arc<Pool>,
}

impl OffloadLane {
    pub(crate) fn open(n: usize, open: Opener) -> Result<Self> {
        let conns = blocking(move || (0..n).map(|_| open()).collect::<Result<Vec<_>>>())
            .map_err(|e| Error::Offload(e.to_string()))??;
        Ok(OffloadLane {
            pool: Arc::new(Pool {
                idle: Mutex::new(conns),
                returned: Condvar::new(),
            }),
        })
    }

    pub(crate) fn call<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let pool = self.pool.clone();
        blocking(move || {
            let conn = pool.take();
            let out = run_caught(&conn, f);
            pool.give_back(conn);
            out
        })
        .map_err(|e| Error::Offload(e.to_string()))?
    }
}
