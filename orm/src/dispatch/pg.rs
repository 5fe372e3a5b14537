//! The PostgreSQL dispatcher: the call runs on the calling fiber (the client's waits park only that
//! fiber, so no thread is needed). Its single statements go through one of the pool's shared,
//! pipelined connections; a transaction or raw SQL checks a connection out of the pool.

use super::run_caught;
use crate::conn::{Conn, PgHandle};
use crate::error::Result;
use crate::pg;

/// A pool of PostgreSQL connections.
pub(crate) struct PgDispatcher {
    pub(crate) pool: pg::Pool,
    batch_params: usize,
}

impl PgDispatcher {
    /// A dispatcher over `pool`; checks out one connection now so that a bad URL, password or
    /// database fails here.
    pub(crate) fn open(pool: pg::Pool, batch_params: usize) -> Result<Self> {
        drop(pool.acquire()?);
        Ok(PgDispatcher { pool, batch_params })
    }

    pub(crate) fn call<R>(&self, f: impl FnOnce(&Conn) -> Result<R>) -> Result<R> {
        let handle = match self.pool.shared() {
            Some(shared) => PgHandle::Shared {
                shared: shared?,
                pool: self.pool.clone(),
                own: None,
            },
            None => PgHandle::Pooled(self.pool.acquire()?),
        };
        let conn = Conn::from_pg(handle, self.batch_params);
        run_caught(&conn, f)
    }
}
