//! [`StmtCache`]: prepared statements by SQL text, least recently used evicted past the cap.
//! Shared by [`Client`](super::Client) and [`SharedClient`](super::SharedClient).

use std::collections::HashMap;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use super::error::Result;
use super::row::Statement;

/// Statements prepared on one connection, keyed by the SQL the caller gave.
pub(crate) struct StmtCache {
    map: HashMap<String, (Statement, u64)>,
    cap: usize,
    uses: u64,
}

impl StmtCache {
    /// A cache of at most `cap` statements (0: none are kept).
    pub(crate) fn new(cap: usize) -> Self {
        StmtCache {
            map: HashMap::new(),
            cap,
            uses: 0,
        }
    }

    /// The statement for `sql`, if cached (marking it used).
    pub(crate) fn get(&mut self, sql: &str) -> Option<Statement> {
        self.uses += 1;
        let (s, used) = self.map.get_mut(sql)?;
        *used = self.uses;
        Some(s.clone())
    }

    /// Keeps `stmt` for `sql`; an evicted statement's Close goes to `out`, to be sent ahead of
    /// the next request (its CloseComplete is skipped by the reader).
    pub(crate) fn insert(&mut self, sql: &str, stmt: &Statement, out: &mut BytesMut) -> Result<()> {
        if self.cap == 0 {
            return Ok(());
        }
        if self.map.len() >= self.cap {
            let oldest = self
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some((old, _)) = oldest.and_then(|k| self.map.remove(&k)) {
                frontend::close(b'S', &old.name, out)?;
            }
        }
        self.map.insert(sql.to_owned(), (stmt.clone(), self.uses));
        Ok(())
    }

    /// Number of cached statements.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}
