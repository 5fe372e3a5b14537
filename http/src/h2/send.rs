//! Sending a stream's response: the head as a HEADERS block (CONTINUATION past the peer's
//! frame size), the body as DATA frames cut to what the stream's and the connection's send
//! windows allow, queued on the connection and written after each call by `flush_soon` (the
//! responses of the streams ready at the same time share a write). A stream fiber short of
//! window writes what is queued, then waits on the connection's condition variable
//! (a parked fiber, no worker held) until a WINDOW_UPDATE, a reset, or the stall timeout, which
//! resets the stream (CANCEL): a client holding a window shut costs one parked fiber for that
//! long, within a server-wide cap of parked streams, and a connection whose client stalls too
//! many streams is closed.

use std::io::{self, Read};

use super::fields::{put_head, ResponseHead};
use super::frame::{flag, kind, put_header, put_rst, ErrorCode};
use super::shared::{gone, Shared, State};

/// The most send window a stream takes at once, and so the largest buffer a file copy holds.
const COPY_CHUNK: usize = 64 * 1024;

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
        let head_ends = end && body.is_empty();
        let want = body.len().min(COPY_CHUNK);
        // One lock for the window, the frame size, and whether the stream is alone.
        let (got, alone) = {
            let mut st = self.shared.state();
            let alone = st.streams.len() <= 1;
            let got = if body.is_empty() {
                Some((0, st.peer.max_frame))
            } else {
                self.take(&mut st, want)?
            };
            (got, alone)
        };
        let (n, max_frame) = match got {
            Some(got) => got,
            None => self.reserve(want)?,
        };
        let id = self.id;
        let frames = |out: &mut Vec<u8>| {
            put_head(out, id, head, head_ends, max_frame);
            if n > 0 {
                put_data_frames(out, id, &body[..n], end && n == body.len(), max_frame);
            }
        };
        // The only open stream, answered whole, has nobody to share its write with: no yield.
        if alone && n == body.len() {
            return self.shared.frames(true, frames);
        }
        self.shared.frames(false, frames)?;
        if n < body.len() {
            return self.data(&body[n..], end);
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
            let (n, max_frame) = self.reserve(body.len().min(COPY_CHUNK))?;
            let last = end && n == body.len();
            self.shared
                .queue(|out| put_data_frames(out, id, &body[..n], last, max_frame))?;
            body = &body[n..];
        }
        self.shared.flush_soon()
    }

    /// Sends `len` bytes of `src` as DATA frames (not ending the stream), read piece by piece
    /// as the windows open: each read is no larger than the window just taken (at most
    /// [`COPY_CHUNK`]), and no buffer is held while the stream waits for window. Returns the
    /// bytes sent (fewer than `len`: `src` ended first).
    pub(crate) fn copy_from(&self, src: &mut dyn Read, len: u64) -> io::Result<u64> {
        let id = self.id;
        let mut buf = Vec::new();
        let mut moved = 0;
        while moved < len {
            let left = usize::try_from(len - moved).map_or(COPY_CHUNK, |l| l.min(COPY_CHUNK));
            if !self.has_window() {
                buf = Vec::new();
            }
            let (n, max_frame) = self.reserve(left)?;
            buf.clear();
            buf.reserve_exact(n);
            let got = (&mut *src).take(n as u64).read_to_end(&mut buf)?;
            self.shared
                .queue(|out| put_data_frames(out, id, &buf, false, max_frame))?;
            moved += got as u64;
            if got < n {
                break;
            }
        }
        self.shared.flush_soon()?;
        Ok(moved)
    }

    /// Whether some window is open for this stream now.
    fn has_window(&self) -> bool {
        let st = self.shared.state();
        let stream = st.streams.get(&self.id).map_or(0, |s| s.send_window);
        st.send_window.min(stream) > 0
    }

    /// Takes up to `want` bytes of send window, waiting for some (after writing what is
    /// queued: the client may be waiting for it to open the window); returns them and the
    /// peer's frame size. A stream waiting on a window at 0 (its own or the connection's)
    /// counts as parked: past the server's cap ([`Parked`](super::shared::Parked)) it is reset
    /// (ENHANCE_YOUR_CALM) instead, so clients opening streams they never let us answer hold
    /// a bounded number of fibers. A stream reset so, or after waiting out the stall timeout,
    /// counts against its connection ([`Shared::stalled`]).
    fn reserve(&self, want: usize) -> io::Result<(usize, usize)> {
        let shared = self.shared;
        if let Some(got) = self.take(&mut shared.state(), want)? {
            return Ok(got);
        }
        shared.flush()?;
        // A long wait may follow: the deep pages of this fiber's stack go back to the kernel.
        moria_runtime::fiber::trim_stack();
        let mut st = shared.state();
        if let Some(got) = self.take(&mut st, want)? {
            return Ok(got);
        }
        if !shared.parked.enter() {
            drop(st);
            self.reset_stalled(ErrorCode::EnhanceYourCalm);
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "too many HTTP/2 streams parked on a zero window",
            ));
        }
        let got = loop {
            if shared.changed.wait_timeout(&mut st, shared.stall) {
                break None;
            }
            match self.take(&mut st, want) {
                Ok(Some(got)) => break Some(Ok(got)),
                Ok(None) => {}
                Err(e) => break Some(Err(e)),
            }
        };
        drop(st);
        shared.parked.leave();
        got.unwrap_or_else(|| {
            self.reset_stalled(ErrorCode::Cancel);
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "HTTP/2 send window stayed shut",
            ))
        })
    }

    /// Resets the stream with `code` for a window held shut, and counts it.
    fn reset_stalled(&self, code: ErrorCode) {
        self.reset_with(code);
        self.shared.stalled();
    }

    /// Takes up to `want` bytes of the open window (`None`: none open), and the frame size.
    fn take(&self, st: &mut State, want: usize) -> io::Result<Option<(usize, usize)>> {
        let conn_window = st.send_window;
        let slot = st.streams.get_mut(&self.id).ok_or_else(gone)?;
        if slot.reset || st.dead {
            return Err(gone());
        }
        let window = conn_window.min(slot.send_window);
        if window <= 0 {
            return Ok(None);
        }
        let n = want.min(window as usize);
        slot.send_window -= n as i64;
        st.send_window -= n as i64;
        Ok(Some((n, st.peer.max_frame)))
    }

    /// Resets the stream (INTERNAL_ERROR) after a failure, unless it is already gone.
    pub(crate) fn reset(&self) {
        self.reset_with(ErrorCode::Internal);
    }

    /// Resets the stream with `code`, unless it is already gone.
    fn reset_with(&self, code: ErrorCode) {
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
            let _ = self.shared.send(|out| put_rst(out, id, code));
        }
    }
}

/// Queues `body` as DATA frames of at most `max_frame` bytes, the last one ending the stream
/// if `end`.
fn put_data_frames(out: &mut Vec<u8>, id: u32, body: &[u8], end: bool, max_frame: usize) {
    let mut chunks = body.chunks(max_frame.max(1)).peekable();
    while let Some(chunk) = chunks.next() {
        put_data(out, id, chunk, end && chunks.peek().is_none());
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
