//! A stream's request body as the stream's fiber reads it: the DATA payloads the reading fiber
//! left in the stream's inbox, each read giving its bytes back to the client's windows
//! (WINDOW_UPDATE for the stream and the connection). A `Transport`, so the body reader h1 uses
//! (limits, drain) runs over it unchanged; its only write is the `100 Continue` that reader
//! sends, which goes out as an interim HEADERS.

use std::io::{self, Read, Write};
use std::time::Duration;

use super::frame::put_window_update;
use super::hpack::encode_status;
use super::shared::{gone, Shared};
use crate::transport::Transport;

/// Reading one stream's body.
pub(crate) struct StreamBody<'c> {
    shared: &'c Shared,
    id: u32,
    chunk: Vec<u8>,
    pos: usize,
    timeout: Option<Duration>,
}

impl<'c> StreamBody<'c> {
    /// The body of stream `id`.
    pub(crate) fn new(shared: &'c Shared, id: u32) -> StreamBody<'c> {
        StreamBody {
            shared,
            id,
            chunk: Vec::new(),
            pos: 0,
            timeout: Some(shared.stall),
        }
    }

    /// Takes the next payload off the inbox (waiting for one); `false` at the end of the body.
    fn next_chunk(&mut self) -> io::Result<bool> {
        let shared = self.shared;
        let mut st = shared.state();
        let (chunk, more) = loop {
            let st_ref = &mut *st;
            let slot = st_ref.streams.get_mut(&self.id).ok_or_else(gone)?;
            if slot.reset || st_ref.dead {
                return Err(gone());
            }
            if let Some(c) = slot.inbox.pop_front() {
                slot.buffered -= c.len();
                slot.recv_window += c.len() as i64;
                let more = !slot.recv_end;
                st_ref.recv_window += c.len() as i64;
                break (c, more);
            }
            if slot.recv_end {
                return Ok(false);
            }
            let wait = self.timeout.unwrap_or(shared.stall);
            if shared.changed.wait_timeout(&mut st, wait) {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "HTTP/2 request body stalled",
                ));
            }
        };
        drop(st);
        let n = u32::try_from(chunk.len()).unwrap_or(0);
        if n > 0 {
            self.shared.send(|out| {
                put_window_update(out, 0, n);
                if more {
                    put_window_update(out, self.id, n);
                }
            })?;
        }
        self.chunk = chunk;
        self.pos = 0;
        Ok(true)
    }
}

impl Read for StreamBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            if buf.is_empty() || !self.next_chunk()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for StreamBody<'_> {
    /// The body reader's only write is `100 Continue`: sent as an interim HEADERS.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut block = Vec::new();
        encode_status(100, &mut block);
        let id = self.id;
        self.shared.send(|out| {
            super::frame::put_header_block(out, id, &block, false, usize::MAX);
        })?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transport for StreamBody<'_> {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.timeout = timeout;
        Ok(())
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        let kept = self.timeout.replace(within);
        let r = self.read(buf);
        self.timeout = kept;
        match r {
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Ok(None),
            r => r.map(Some),
        }
    }
}
