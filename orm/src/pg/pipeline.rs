//! [`Pipeline`]: several statements written before any result is read — one round trip for N
//! queries once their statements are cached (two on first use: prepare, then execute).
//!
//! Each statement gets its own Sync, so each succeeds or fails alone (and, outside an explicit
//! transaction, commits alone). Results come back in the order the statements were added.
//! Keep a pipeline to what the socket buffers hold (hundreds of small queries, not millions):
//! the server's answers are read only after everything has been written.

use std::collections::HashMap;

use super::client::Client;
use super::codec::{encode_execute, encode_prepare, Params};
use super::error::{Error, Result};
use super::row::Statement;
use super::rows::{Row, RowSet};

/// Statements queued on a [`Client`], sent together by [`Pipeline::run`].
pub struct Pipeline<'c, 'p> {
    client: &'c mut Client,
    items: Vec<(&'p str, Params<'p>)>,
}

/// A copy of an error for each statement that shares its cause.
fn dup(e: &Error) -> Error {
    match e {
        Error::Db(d) => Error::Db(d.clone()),
        Error::Timeout(t) => Error::Timeout(*t),
        Error::Conversion(m) => Error::Conversion(m.clone()),
        Error::Closed => Error::Closed,
        other => Error::Protocol(other.to_string()),
    }
}

impl Client {
    /// Starts a pipeline on this connection.
    pub fn pipeline<'p>(&mut self) -> Pipeline<'_, 'p> {
        Pipeline {
            client: self,
            items: Vec::new(),
        }
    }
}

impl<'p> Pipeline<'_, 'p> {
    /// Queues `sql` with `params`; returns its position in the results.
    pub fn query(&mut self, sql: &'p str, params: Params<'p>) -> usize {
        self.items.push((sql, params));
        self.items.len() - 1
    }

    /// Number of queued statements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sends every statement, then reads every result. The outer error means the connection
    /// failed; each inner result is one statement's rows or error.
    pub fn run(self) -> Result<Vec<Result<Vec<Row>>>> {
        let c = self.client;
        c.conn.begin_op()?;
        let out = run(c, &self.items);
        c.conn.end_op();
        out
    }
}

fn run(c: &mut Client, items: &[(&str, Params<'_>)]) -> Result<Vec<Result<Vec<Row>>>> {
    // 1. Prepare every statement not cached yet, all in one round trip.
    let mut stmts: HashMap<&str, Result<Statement>> = HashMap::new();
    let mut to_prepare: Vec<(&str, String)> = Vec::new();
    for (sql, _) in items {
        if stmts.contains_key(sql) {
            continue;
        }
        match c.cached(sql) {
            Some(s) => {
                stmts.insert(sql, Ok(s));
            }
            None => {
                let name = c.new_name();
                encode_prepare(&mut c.conn.wbuf, &name, sql)?;
                postgres_protocol::message::frontend::sync(&mut c.conn.wbuf);
                to_prepare.push((sql, name));
                stmts.insert(sql, Err(Error::Closed));
            }
        }
    }
    if !to_prepare.is_empty() {
        c.conn.flush()?;
        for (sql, name) in to_prepare {
            let got = c.conn.read_prepare_reply(&name);
            if c.is_broken() {
                return Err(got.err().unwrap_or(Error::Closed));
            }
            if let Ok(s) = &got {
                c.cache_insert(sql, s)?;
            }
            stmts.insert(sql, got);
        }
    }
    // 2. Bind and execute everything, then read the results in order.
    let mut sent: Vec<Option<Result<Vec<Row>>>> = Vec::with_capacity(items.len());
    for (sql, params) in items {
        let written = match &stmts[sql] {
            Ok(stmt) => {
                encode_execute(&mut c.conn.wbuf, stmt, params).map(|_| stmt.columns.clone())
            }
            Err(e) => Err(dup(e)),
        };
        sent.push(match written {
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        });
    }
    c.conn.flush()?;
    let mut results = Vec::with_capacity(items.len());
    for ((sql, _), early) in items.iter().zip(sent) {
        if let Some(r) = early {
            results.push(r);
            continue;
        }
        let columns = match &stmts[sql] {
            Ok(s) => s.columns.clone(),
            Err(_) => return Err(Error::protocol("pipeline lost a statement")),
        };
        let mut rows = RowSet::new(columns.clone());
        let got = c.conn.read_execute(&columns, &mut |r| {
            rows.push(r);
            Ok(())
        });
        if c.is_broken() {
            return Err(got.err().unwrap_or(Error::Closed));
        }
        results.push(got.map(|_| rows.into_rows()));
    }
    Ok(results)
}
