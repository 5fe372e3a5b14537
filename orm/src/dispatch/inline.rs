//! The inline dispatcher: the job runs on the calling fiber under a fiber-aware mutex. Only for
//! memory databases, where SQLite never waits on a disk.

use moria_runtime::sync::Mutex;

use super::{run_caught, Opener};
use crate::conn::Conn;
use crate::error::Result;

/// One connection shared under a fiber-aware mutex.
pub(crate) struct InlineDispatcher {
    conn: Mutex<Conn>,
}

impl InlineDispatcher {
    pub(crate) fn open(open: &Opener) -> Result<Self> {
        Ok(InlineDispatcher {
            conn: Mutex::new(open()?),
        })
    }

    pub(crate) fn call<R>(&self, f: impl FnOnce(&Conn) -> Result<R>) -> Result<R> {
        let conn = self.conn.lock();
        run_caught(&conn, f)
    }
}
