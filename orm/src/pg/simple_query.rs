//! The simple query protocol: [`Client::batch_execute`] and [`Client::simple_query`] (text
//! results, no parameters, several statements per call).

use std::io;
use std::sync::Arc;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, Message};
use postgres_protocol::message::frontend;

use super::client::Client;
use super::codec::check_size;
use super::error::Result;
use super::row::SimpleRow;

impl Client {
    /// Runs one or more `;`-separated statements with the simple protocol (no parameters, no
    /// results): DDL, `SET`, `BEGIN`… Stops at the first error.
    pub fn batch_execute(&mut self, sql: &str) -> Result<()> {
        self.simple_query_each(sql, &mut |_| Ok(()))
    }

    /// Runs `sql` with the simple protocol and returns every row as text.
    pub fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleRow>> {
        let mut out = Vec::new();
        self.simple_query_each(sql, &mut |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    fn simple_query_each(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(SimpleRow) -> Result<()>,
    ) -> Result<()> {
        self.conn.begin_op()?;
        let out = self.simple_inner(sql, each);
        self.conn.end_op();
        out
    }

    fn simple_inner(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(SimpleRow) -> Result<()>,
    ) -> Result<()> {
        let c = &mut self.conn;
        check_size(sql)?;
        frontend::query(sql, &mut c.wbuf)?;
        c.flush()?;
        let mut names: Arc<[String]> = Arc::from(Vec::new());
        let mut first = None;
        loop {
            match c.recv()? {
                Message::RowDescription(b) => {
                    names = b
                        .fields()
                        .map(|f| Ok(f.name().to_owned()))
                        .collect::<Vec<_>>()
                        .map_err(|e| c.fail(e))?
                        .into();
                }
                Message::DataRow(b) => {
                    if first.is_none() {
                        let values = text_values(&b).map_err(|e| c.fail(e))?;
                        let row = SimpleRow {
                            columns: names.clone(),
                            values,
                        };
                        if let Err(e) = each(row) {
                            first = Some(e);
                        }
                    }
                }
                Message::CommandComplete(_) | Message::EmptyQueryResponse => {}
                Message::ErrorResponse(b) => {
                    let e = c.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Message::ReadyForQuery(b) => {
                    c.set_status(b.status());
                    return first.map_or(Ok(()), Err);
                }
                Message::CopyInResponse(_) => {
                    frontend::copy_fail("COPY FROM STDIN needs Client::copy_in", &mut c.wbuf)?;
                    c.flush()?;
                }
                Message::CopyOutResponse(_) | Message::CopyData(_) | Message::CopyDone => {}
                m => return Err(c.unexpected(&m, "a simple query")),
            }
        }
    }
}

fn text_values(b: &DataRowBody) -> io::Result<Vec<Option<String>>> {
    let buf = b.buffer();
    b.ranges()
        .map(|r| Ok(r.map(|r| String::from_utf8_lossy(&buf[r]).into_owned())))
        .collect()
}
