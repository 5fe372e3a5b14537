//! The extended query protocol: [`Client::query`] and friends on cached statements, and
//! reading one Bind/Execute/Sync result (shared with the pipelined clients), each row handed
//! on as it arrives, read in place.

use postgres_protocol::message::backend::Message;

use super::client::Client;
use super::codec::{encode_execute, rows_affected, Params};
use super::connection::Connection;
use super::error::{Error, Result};
use super::row::{Column, Statement};
use super::rows::{Row, RowRef, RowSet};

impl Client {
    /// Runs a prepared statement, handing each row to `each` as it arrives (borrowed from the
    /// socket buffer: nothing is collected); returns the affected-row count. After an error
    /// from `each` the rest of the result is read and dropped, and that error returned.
    pub fn query_each(
        &mut self,
        stmt: &Statement,
        params: Params<'_>,
        each: &mut dyn FnMut(RowRef<'_>) -> Result<()>,
    ) -> Result<u64> {
        let c = &mut self.conn;
        c.begin_op()?;
        let out = encode_execute(&mut c.wbuf, stmt, params)
            .and_then(|_| c.flush())
            .and_then(|_| c.read_execute(&stmt.columns, each));
        c.end_op();
        out
    }

    /// Runs `sql` (cached statement) and collects its rows in one buffer.
    pub fn query_set(&mut self, sql: &str, params: Params<'_>) -> Result<RowSet> {
        let stmt = self.prepare_cached(sql)?;
        let mut rows = RowSet::new(stmt.columns.clone());
        self.query_each(&stmt, params, &mut |r| {
            rows.push(r);
            Ok(())
        })?;
        Ok(rows)
    }

    /// Runs `sql` (cached statement) and collects its rows.
    pub fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        Ok(self.query_set(sql, params)?.into_rows())
    }

    /// Runs `sql` and returns its only row; an error when there are none or several.
    pub fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row> {
        let mut rows = self.query(sql, params)?;
        match rows.len() {
            1 => Ok(rows.remove(0)),
            n => Err(Error::Conversion(format!("expected one row, got {n}"))),
        }
    }

    /// Runs `sql` and returns its first row, if any.
    pub fn query_opt(&mut self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs `sql` (cached statement) and returns the number of rows it affected.
    pub fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64> {
        let stmt = self.prepare_cached(sql)?;
        self.query_each(&stmt, params, &mut |_| Ok(()))
    }
}

impl Connection {
    /// Reads one Bind/Execute/Sync result: rows to `each`, the affected count returned.
    pub(crate) fn read_execute(
        &mut self,
        columns: &[Column],
        each: &mut dyn FnMut(RowRef<'_>) -> Result<()>,
    ) -> Result<u64> {
        let mut first: Option<Error> = None;
        let mut affected = 0;
        loop {
            let Some(m) = self.recv_unless_row()? else {
                let skip = first.is_some();
                match self.take_row(columns, |row| if skip { Ok(()) } else { each(row) }) {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) | Err(e) => {
                        first.get_or_insert(e);
                    }
                }
                continue;
            };
            match m {
                Message::BindComplete | Message::EmptyQueryResponse => {}
                Message::CommandComplete(b) => affected = rows_affected(&b),
                Message::PortalSuspended => {}
                Message::ErrorResponse(b) => {
                    let e = self.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Message::ReadyForQuery(b) => {
                    self.set_status(b.status());
                    return first.map_or(Ok(affected), Err);
                }
                m => return Err(self.unexpected(&m, "a query")),
            }
        }
    }
}
