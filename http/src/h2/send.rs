//! Sending a stream's response: the head as a HEADERS block (CONTINUATION past the peer's
//! frame size), the body as DATA frames cut to what the stream's and the connection's send
//! windows allow, queued on the connection and written after each call by `flush_soon` (the
//! responses of the streams ready at the same time share a write). A stream fiber short of
//! window writes what is queued, then waits on the connection's condition variable
//! (a parked fiber, no worker held) until a WINDOW_UPDATE, a reset, or the stall timeout, which
//! resets the stream (CANCEL): a client holding a window shut costs one parked fiber for that
//! long.

use std::io;

use super::frame::{flag, kind, put_header, put_header_block, put_rst, ErrorCode};
use super::hpack::{encode_field, encode_status};
use super::shared::{gone, Shared};

/// Fields that HTTP/2 forbids (RFC 9113 §8.2.2), left out of a response head.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "proxy-connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
];

/// A response head to send: status and `Name: value\r\n` lines.
pub(crate) struct ResponseHead<'a> {
    /// The status code.
    pub status: u16,
    /// Field lines as HTTP/1.1 writes them.
    pub lines: &'a [u8],
    /// A `content-length` to add, if known.
    pub length: Option<u64>,
}

/// Sends one stream's response.
pub(crate) struct StreamSender<'c> {
    shared: &'c Shared,
    id: u32,
}

impl<'c> StreamSender<'c> {
    /// The sender of stream `id`.
    pub(crate) fn new(shared: &'c Shared, id: u32) -> StreamSender<'c> {
        StreamSender { shared, id }
    }

    /// Sends the head, then `body` (all of it, waiting for window), ending the stream if `end`.
    pub(crate) fn respond(
        &self,
        head: &ResponseHead<'_>,
        body: &[u8],
        end: bool,
    ) -> io::Result<()> {
        let mut block = Vec::with_capacity(head.lines.len() + 16);
        encode_head(head, &mut block);
        let head_ends = end && body.is_empty();
        let n = if body.is_empty() {
            0
        } else {
            self.reserve(body.len())?
        };
        let (max_frame, alone) = {
            let st = self.shared.state();
            (st.peer.max_frame, st.streams.len() <= 1)
        };
        let id = self.id;
        self.shared.queue(|out| {
            put_header_block(out, id, &block, head_ends, max_frame);
            if n > 0 {
                put_data(out, id, &body[..n], end && n == body.len());
            }
        })?;
        if n < body.len() {
            return self.data(&body[n..], end);
        }
        // The only open stream has nobody to share its write with: no yield.
        if alone {
            return self.shared.flush();
        }
        self.shared.flush_soon()
    }

    /// Sends `body` as DATA frames, the last one ending the stream if `end`.
    pub(crate) fn data(&self, mut body: &[u8], end: bool) -> io::Result<()> {
        let id = self.id;
        if body.is_empty() && end {
            self.shared.queue(|out| put_data(out, id, &[], true))?;
        }
        while !body.is_empty() {
            let n = self.reserve(body.len())?;
            let last = end && n == body.len();
            self.shared
                .queue(|out| put_data(out, id, &body[..n], last))?;
            body = &body[n..];
        }
        self.shared.flush_soon()
    }

    /// Takes up to `want` bytes of send window (at most one frame), waiting for some (after
    /// writing what is queued: the client may be waiting for it to open the window).
    fn reserve(&self, want: usize) -> io::Result<usize> {
        let shared = self.shared;
        let mut flushed = false;
        let mut st = shared.state();
        loop {
            let st_ref = &mut *st;
            let max_frame = st_ref.peer.max_frame;
            let conn_window = st_ref.send_window;
            let slot = st_ref.streams.get_mut(&self.id).ok_or_else(gone)?;
            if slot.reset || st_ref.dead {
                return Err(gone());
            }
            let window = conn_window.min(slot.send_window);
            if window > 0 {
                let n = want.min(max_frame).min(window as usize);
                slot.send_window -= n as i64;
                st_ref.send_window -= n as i64;
                return Ok(n);
            }
            if !flushed {
                drop(st);
                shared.flush()?;
                flushed = true;
                st = shared.state();
                continue;
            }
            if shared.changed.wait_timeout(&mut st, shared.stall) {
                if let Some(slot) = st.streams.get_mut(&self.id) {
                    slot.reset = true;
                }
                drop(st);
                let id = self.id;
                shared.send(|out| put_rst(out, id, ErrorCode::Cancel))?;
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "HTTP/2 send window stayed shut",
                ));
            }
        }
    }

    /// Resets the stream (INTERNAL_ERROR) after a failure, unless it is already gone.
    pub(crate) fn reset(&self) {
        let open = {
            let mut st = self.shared.state();
            let dead = st.dead;
            match st.streams.get_mut(&self.id) {
                Some(slot) if !slot.reset && !dead => {
                    slot.reset = true;
                    true
                }
                _ => false,
            }
        };
        if open {
            let id = self.id;
            let _ = self
                .shared
                .send(|out| put_rst(out, id, ErrorCode::Internal));
        }
    }
}

fn put_data(out: &mut Vec<u8>, id: u32, body: &[u8], end: bool) {
    put_header(
        out,
        body.len(),
        kind::DATA,
        if end { flag::END_STREAM } else { 0 },
        id,
    );
    out.extend_from_slice(body);
}

/// HPACK-encodes a response head: names lowercased, connection-specific fields dropped.
fn encode_head(head: &ResponseHead<'_>, block: &mut Vec<u8>) {
    encode_status(head.status, block);
    let mut name = Vec::new();
    for line in head.lines.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        name.clear();
        name.extend(line[..colon].iter().map(u8::to_ascii_lowercase));
        if CONNECTION_SPECIFIC.iter().any(|c| c.as_bytes() == name) {
            continue;
        }
        let value = line[colon + 1..].trim_ascii();
        encode_field(&name, value, block);
    }
    if let Some(n) = head.length {
        let mut digits = itoa::Buffer::new();
        encode_field(b"content-length", digits.format(n).as_bytes(), block);
    }
}
