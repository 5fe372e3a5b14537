//! [`Transaction`]: a transaction or savepoint on a [`Client`], rolled back when dropped.

use super::client::Client;
use super::error::Result;

impl Client {
    /// Opens a transaction, or a savepoint inside an open one; rolls back when dropped
    /// without [`Transaction::commit`].
    pub fn transaction(&mut self) -> Result<Transaction<'_>> {
        let level = self.conn.depth + 1;
        if level == 1 {
            self.batch_execute("BEGIN")?;
        } else {
            self.batch_execute(&format!("SAVEPOINT moria_sp{level}"))?;
        }
        self.conn.depth = level;
        Ok(Transaction {
            client: self,
            level,
            done: false,
        })
    }
}

/// A transaction (or savepoint) on a [`Client`]; derefs to the client.
#[must_use = "a transaction rolls back when dropped"]
pub struct Transaction<'c> {
    client: &'c mut Client,
    level: u32,
    done: bool,
}

impl Transaction<'_> {
    /// Makes the changes permanent (or part of the enclosing level).
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        let sql = if self.level == 1 {
            "COMMIT".to_owned()
        } else {
            format!("RELEASE moria_sp{}", self.level)
        };
        let out = self.client.batch_execute(&sql);
        self.client.conn.depth = self.level - 1;
        out
    }

    /// Undoes the changes of this level.
    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        self.undo()
    }

    fn undo(&mut self) -> Result<()> {
        if self.client.is_broken() {
            return Ok(());
        }
        let out = if self.level == 1 {
            self.client.batch_execute("ROLLBACK")
        } else {
            let sp = self.level;
            self.client
                .batch_execute(&format!("ROLLBACK TO moria_sp{sp}; RELEASE moria_sp{sp}"))
        };
        self.client.conn.depth = self.level - 1;
        out
    }
}

impl std::ops::Deref for Transaction<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client
    }
}

impl std::ops::DerefMut for Transaction<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.undo() {
                log::error!("postgres rollback failed: {e}");
            }
        }
    }
}
