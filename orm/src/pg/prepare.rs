//! Preparing statements: [`Client::prepare`], the statement cache, and reading the server's
//! answer to Parse/Describe/Sync (shared with the pipelined clients).

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use postgres_types::Type;

use super::client::Client;
use super::codec::encode_prepare;
use super::connection::Connection;
use super::error::{Error, Result};
use super::row::{Column, Statement};

impl Client {
    /// Prepares `sql` (with `$1`, `$2`… placeholders) on the server, uncached.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.conn.begin_op()?;
        let name = self.new_name();
        let out = self.prepare_inner(&name, sql);
        self.conn.end_op();
        out
    }

    /// The cached statement for `sql`, prepared on first use. The cache keeps
    /// [`Config::statement_cache`](super::Config::statement_cache) statements and closes the
    /// least recently used past that.
    pub fn prepare_cached(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.cached(sql) {
            return Ok(s);
        }
        let stmt = self.prepare(sql)?;
        self.cache_insert(sql, &stmt)?;
        Ok(stmt)
    }

    /// The cached statement for `sql`, if any (marking it used).
    pub(crate) fn cached(&mut self, sql: &str) -> Option<Statement> {
        self.cache.get(sql)
    }

    /// Caches `stmt` under `sql`, queuing a Close for the statement it evicts.
    pub(crate) fn cache_insert(&mut self, sql: &str, stmt: &Statement) -> Result<()> {
        self.cache.insert(sql, stmt, &mut self.conn.wbuf)
    }

    /// Number of statements in the cache.
    pub fn cached_statements(&self) -> usize {
        self.cache.len()
    }

    /// A statement name not used on this connection yet.
    pub(crate) fn new_name(&mut self) -> String {
        self.next_name += 1;
        format!("moria_s{}", self.next_name)
    }

    fn prepare_inner(&mut self, name: &str, sql: &str) -> Result<Statement> {
        encode_prepare(&mut self.conn.wbuf, name, sql)?;
        frontend::sync(&mut self.conn.wbuf);
        self.conn.flush()?;
        self.conn.read_prepare_reply(name)
    }
}

impl Connection {
    /// Reads the whole answer to Parse/Describe/Sync, up to and including ReadyForQuery.
    pub(crate) fn read_prepare_reply(&mut self, name: &str) -> Result<Statement> {
        match self.read_prepare(name) {
            Ok(s) => self.drain(None).map(|_| s),
            Err(e) if self.is_broken() => Err(e),
            Err(e) => Err(self.drain(Some(e)).err().unwrap_or(Error::Closed)),
        }
    }

    /// Reads ParseComplete, ParameterDescription and RowDescription/NoData (not the
    /// ReadyForQuery that follows).
    fn read_prepare(&mut self, name: &str) -> Result<Statement> {
        let mut params: Vec<Type> = Vec::new();
        loop {
            match self.recv()? {
                Message::ParseComplete => {}
                Message::ParameterDescription(b) => {
                    params = b
                        .parameters()
                        .map(|oid| Ok(type_of(oid)))
                        .collect()
                        .map_err(|e| self.fail(e))?;
                }
                Message::RowDescription(b) => {
                    let columns: Vec<Column> = b
                        .fields()
                        .map(|f| Ok(Column::new(f.name().to_owned(), type_of(f.type_oid()))))
                        .collect()
                        .map_err(|e| self.fail(e))?;
                    return Ok(statement(name, params, columns));
                }
                Message::NoData => return Ok(statement(name, params, Vec::new())),
                Message::ErrorResponse(b) => return Err(self.db_error(b.fields())),
                m => return Err(self.unexpected(&m, "prepare")),
            }
        }
    }
}

fn statement(name: &str, params: Vec<Type>, columns: Vec<Column>) -> Statement {
    Statement {
        name: name.into(),
        params: params.into(),
        columns: columns.into(),
    }
}

fn type_of(oid: u32) -> Type {
    Type::from_oid(oid).unwrap_or(Type::UNKNOWN)
}
