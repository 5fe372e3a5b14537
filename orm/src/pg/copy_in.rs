//! `COPY … FROM STDIN`: [`Client::copy_in`] streams a reader's bytes to the server.

use std::io::{self, Read};

use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::client::Client;
use super::codec::rows_affected;
use super::error::{Error, Result};

/// Bytes per CopyData message of [`Client::copy_in`].
const COPY_CHUNK: usize = 64 * 1024;

impl Client {
    /// Runs `COPY … FROM STDIN` with the bytes of `data` (text, CSV or binary, as the
    /// statement says); returns the rows copied. A read error aborts the COPY on the server.
    pub fn copy_in(&mut self, sql: &str, data: &mut dyn Read) -> Result<u64> {
        self.conn.begin_op()?;
        let out = self.copy_in_inner(sql, data);
        self.conn.end_op();
        out
    }

    fn copy_in_inner(&mut self, sql: &str, data: &mut dyn Read) -> Result<u64> {
        let c = &mut self.conn;
        frontend::query(sql, &mut c.wbuf)?;
        c.flush()?;
        match c.recv()? {
            Message::CopyInResponse(_) => {}
            Message::ErrorResponse(b) => {
                let e = c.db_error(b.fields());
                return c.drain(Some(e)).map(|_| 0);
            }
            m => return Err(c.unexpected(&m, "COPY")),
        }
        let mut chunk = vec![0u8; COPY_CHUNK];
        let mut failed = None;
        loop {
            match data.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    frontend::CopyData::new(&chunk[..n])?.write(&mut c.wbuf);
                    c.flush()?;
                    // An error from the server (bad row) arrives while we send: stop early.
                    if c.readable_now().unwrap_or(false) {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        match &failed {
            Some(e) => frontend::copy_fail(&e.to_string(), &mut c.wbuf)?,
            None => frontend::copy_done(&mut c.wbuf),
        }
        c.flush()?;
        let mut rows = 0;
        let mut first = failed.map(Error::Io);
        loop {
            match c.recv()? {
                Message::CommandComplete(b) => rows = rows_affected(&b),
                Message::ErrorResponse(b) => {
                    let e = c.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Message::ReadyForQuery(b) => {
                    c.set_status(b.status());
                    return first.map_or(Ok(rows), Err);
                }
                m => return Err(c.unexpected(&m, "COPY")),
            }
        }
    }
}
