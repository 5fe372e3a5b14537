//! Transactions: a guard that rolls back on drop, and `transaction(|c| …)` built on it.
//!
//! On PostgreSQL the outermost level is a plain `BEGIN`. On SQLite it is `BEGIN IMMEDIATE` (the write lock is taken up front, so a WAL reader
//! never has to upgrade and deadlock); inner levels are savepoints `moria_sp<N>`. Leaving a level
//! without `commit` — an `Err` returned through `?`, or a panic unwinding — rolls that level back.

use std::ops::Deref;

use crate::conn::Conn;
use crate::error::{Error, Result};

/// An open transaction or savepoint; rolls back when dropped without [`Transaction::commit`].
#[must_use = "a transaction rolls back when dropped"]
pub struct Transaction<'c> {
    conn: &'c Conn,
    /// This guard's level (1 = the transaction itself).
    level: u32,
}

impl Conn {
    /// Opens a transaction, or a savepoint when one is already open.
    pub fn begin(&self) -> Result<Transaction<'_>> {
        let level = self.depth.get() + 1;
        if level == 1 {
            self.execute_batch(if self.is_pg() {
                "BEGIN"
            } else {
                "BEGIN IMMEDIATE"
            })?;
        } else {
            self.execute_batch(&format!("SAVEPOINT moria_sp{level}"))?;
        }
        self.depth.set(level);
        Ok(Transaction { conn: self, level })
    }

    /// Whether the database itself has a transaction open on this connection.
    fn in_server_transaction(&self) -> bool {
        self.on_engine(
            |db| !db.is_autocommit(),
            |_| {
                self.pg()
                    .is_some_and(|c| !c.is_broken() && c.tx_status() != crate::pg::TxStatus::Idle)
            },
        )
    }

    /// Runs `f` in a transaction (a savepoint when nested): commit on `Ok`, roll back on `Err`
    /// or panic.
    pub fn transaction<R, E: From<Error>>(
        &self,
        f: impl FnOnce(&Conn) -> std::result::Result<R, E>,
    ) -> std::result::Result<R, E> {
        let tx = self.begin()?;
        let out = f(self)?;
        tx.commit()?;
        Ok(out)
    }
}

impl Transaction<'_> {
    /// Makes the changes of this level permanent (or part of the enclosing level).
    pub fn commit(self) -> Result<()> {
        if self.conn.depth.get() < self.level {
            return Err(Error::Config(
                "transaction already ended by an enclosing level".into(),
            ));
        }
        if self.level == 1 {
            let failed = self
                .conn
                .pg()
                .is_some_and(|c| c.tx_status() == crate::pg::TxStatus::Failed);
            if failed {
                // PostgreSQL turns COMMIT of a failed transaction into a silent ROLLBACK.
                self.conn.execute_batch("ROLLBACK")?;
                self.conn.depth.set(0);
                std::mem::forget(self);
                return Err(Error::Config(
                    "the transaction had a failed statement and was rolled back".into(),
                ));
            }
            self.conn.execute_batch("COMMIT")?;
        } else {
            self.conn
                .execute_batch(&format!("RELEASE moria_sp{}", self.level))?;
        }
        self.conn.depth.set(self.level - 1);
        std::mem::forget(self);
        Ok(())
    }

    /// Undoes this level's changes.
    pub fn rollback(self) -> Result<()> {
        let out = self.undo();
        std::mem::forget(self);
        out
    }

    fn undo(&self) -> Result<()> {
        let conn = self.conn;
        if conn.depth.get() < self.level {
            return Ok(());
        }
        conn.depth.set(self.level - 1);
        if self.level == 1 {
            // SQLite may already have rolled back by itself (e.g. after SQLITE_FULL); a broken
            // PostgreSQL connection has nothing left to roll back.
            if conn.in_server_transaction() {
                conn.execute_batch("ROLLBACK")?;
            }
        } else {
            let sp = self.level;
            conn.execute_batch(&format!("ROLLBACK TO moria_sp{sp}; RELEASE moria_sp{sp}"))?;
        }
        Ok(())
    }
}

impl Deref for Transaction<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.undo() {
            log::error!("rollback failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::Mode;

    fn count(c: &Conn) -> i64 {
        c.sqlite()
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    fn setup() -> Conn {
        let c = Conn::open(":memory:", Mode::Memory).unwrap();
        c.execute_batch("CREATE TABLE t(x)").unwrap();
        c
    }

    #[test]
    fn nested_savepoint_rolls_back_alone() {
        let c = setup();
        c.transaction(|c| -> Result<()> {
            c.sqlite().unwrap().execute("INSERT INTO t VALUES(1)", [])?;
            let inner: Result<()> = c.transaction(|c| {
                c.sqlite().unwrap().execute("INSERT INTO t VALUES(2)", [])?;
                Err(Error::Config("boom".into()))
            });
            assert!(inner.is_err());
            Ok(())
        })
        .unwrap();
        assert_eq!(count(&c), 1);
        assert!(!c.in_transaction());
    }

    #[test]
    fn outer_guard_dropped_first_leaves_inner_harmless() {
        let c = setup();
        let outer = c.begin().unwrap();
        let inner = c.begin().unwrap();
        c.sqlite()
            .unwrap()
            .execute("INSERT INTO t VALUES(1)", [])
            .unwrap();
        drop(outer);
        assert!(inner.commit().is_err());
        assert_eq!(count(&c), 0);
        assert!(c.sqlite().unwrap().is_autocommit());
    }
}
