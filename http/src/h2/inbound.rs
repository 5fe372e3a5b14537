//! The frames a client sends, each checked (RFC 9113 §4–6, §8.1) and applied by the
//! connection's reading fiber: stream states (idle, open, half-closed, closed), header blocks
//! and their CONTINUATIONs, flow control, SETTINGS, PING, RST_STREAM, GOAWAY, and the bounds
//! against the known attacks, each a constant here: header block size (CONTINUATION flood),
//! streams reset or refused (rapid reset), control frames that demand an answer (SETTINGS and
//! PING floods), concurrent streams (REFUSED_STREAM), the header list (HPACK bomb: 431); and
//! the end of a connection whose client stalled too many streams (`shared::MAX_STALLED`,
//! counted by the stream fibers).

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{fence, AtomicBool, Ordering};

use moria_runtime::ShutdownToken;

use super::conn::{ConnError, Failure, Job, Step};
use super::fields::ResponseHead;
use super::frame::{flag, kind, put_goaway, put_header, put_ping_ack, put_rst};
use super::frame::{put_window_update, u31, unpad, ErrorCode, FrameHeader, HEADER_LEN};
use super::hpack::{BlockError, Decoder};
use super::reader::FrameReader;
use super::request_head::HeadBuilder;
use super::send::StreamSender;
use super::settings::{DEFAULT_WINDOW, MAX_WINDOW};
use super::settings::{MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE};
use super::shared::{Shared, Slot, MAX_STALLED};

/// Largest header block (HEADERS plus CONTINUATIONs) taken before decoding: past it the
/// connection ends with ENHANCE_YOUR_CALM (CVE-2024-27316 is an endless CONTINUATION).
const MAX_HEADER_BLOCK: usize = 2 * MAX_HEADER_LIST_SIZE as usize;
/// Streams reset by the client or refused by the server that are tolerated before the
/// connection ends with ENHANCE_YOUR_CALM, once they are also half the streams opened
/// (CVE-2023-44487, rapid reset).
const MAX_CANCELLED: u64 = 200;
/// Control frames that demand an answer (SETTINGS, PING) tolerated besides
/// [`CONTROL_PER_STREAM`] per stream opened; past it, ENHANCE_YOUR_CALM.
const MAX_CONTROL: u64 = 1000;
/// See [`MAX_CONTROL`].
const CONTROL_PER_STREAM: u64 = 4;

/// The connection error once the client stalled more than [`MAX_STALLED`] streams.
fn stalled() -> ConnError {
    ConnError(
        ErrorCode::EnhanceYourCalm,
        "too many streams stalled on a shut window",
    )
}

/// How many opened stream ids the connection remembers (see `Conn::recent`).
const RECENT_STREAMS: usize = 256;

/// What the HEADERS frame that starts a header block says.
#[derive(Clone, Copy)]
struct BlockStart {
    stream: u32,
    end_stream: bool,
    self_dependent: bool,
}

/// A header block still waiting for its CONTINUATION frames.
struct Pending {
    start: BlockStart,
    block: Vec<u8>,
}

/// The reading fiber's own state.
pub(super) struct Conn<'s> {
    shared: &'s Shared,
    decoder: Decoder,
    /// The highest stream id the client opened.
    pub(super) last_stream: u32,
    opened: u64,
    cancelled: u64,
    control: u64,
    got_settings: bool,
    goaway_sent: bool,
    pending: Option<Pending>,
    /// The last [`RECENT_STREAMS`] stream ids opened: a header block on one of them that is
    /// closed is STREAM_CLOSED, on any other old id PROTOCOL_ERROR (§5.1, §5.1.1).
    recent: VecDeque<u32>,
}

impl<'s> Conn<'s> {
    /// The state of a connection that has received nothing yet.
    pub(super) fn new(shared: &'s Shared) -> Conn<'s> {
        Conn {
            shared,
            decoder: Decoder::new(),
            last_stream: 0,
            opened: 0,
            cancelled: 0,
            control: 0,
            got_settings: false,
            goaway_sent: false,
            pending: None,
            recent: VecDeque::new(),
        }
    }

    /// Reads and applies frames until the connection ends (`Ok`: a graceful end).
    pub(super) fn run(
        &mut self,
        input: &mut FrameReader<'_>,
        start: &mut dyn FnMut(Job),
        token: &ShutdownToken,
        idle: &AtomicBool,
    ) -> Result<(), Failure> {
        let r = self.read_frames(input, start, token, idle);
        // A stream fiber that reset one stalled stream too many shut the reading side: that
        // end of input (or whatever else ended the loop meanwhile) is ENHANCE_YOUR_CALM.
        if self.shared.too_stalled() {
            return Err(stalled().into());
        }
        r
    }

    fn read_frames(
        &mut self,
        input: &mut FrameReader<'_>,
        start: &mut dyn FnMut(Job),
        token: &ShutdownToken,
        idle: &AtomicBool,
    ) -> Result<(), Failure> {
        loop {
            let quiet = {
                let st = self.shared.state();
                if st.stalled > MAX_STALLED {
                    return Err(stalled().into());
                }
                st.streams.is_empty()
            };
            idle.store(quiet, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if token.is_triggered() {
                if quiet {
                    return Ok(());
                }
                self.drain();
            }
            let r = input.fill(HEADER_LEN);
            idle.store(false, Ordering::SeqCst);
            match r {
                Ok(()) => {}
                Err(e)
                    if e.kind() == io::ErrorKind::TimedOut
                        || e.kind() == io::ErrorKind::WouldBlock =>
                {
                    if self.shared.state().streams.is_empty() && !input.partial() {
                        return Ok(());
                    }
                    continue;
                }
                // A shutdown shut the reading side of a quiet connection: GOAWAY, then close.
                // (With streams still open, the client is gone instead: they fail.)
                Err(_)
                    if token.is_triggered()
                        && !input.partial()
                        && self.shared.state().streams.is_empty() =>
                {
                    return Ok(())
                }
                Err(e) => return Err(Failure::Io(e)),
            }
            let h = FrameHeader::parse(input.header());
            if h.len > MAX_FRAME_SIZE {
                return Err(ConnError(ErrorCode::FrameSize, "frame larger than allowed").into());
            }
            input.fill(HEADER_LEN + h.len)?;
            let payload = input.frame(h.len);
            if !self.got_settings && h.kind != kind::SETTINGS {
                return Err(ConnError(ErrorCode::Protocol, "first frame not SETTINGS").into());
            }
            if self.pending.is_some() || h.kind == kind::CONTINUATION {
                self.continuation(&h, payload, start)?;
            } else {
                self.frame(&h, payload, start)?;
            }
        }
    }

    /// Sends the GOAWAY of a graceful shutdown once: streams after the last one are refused.
    fn drain(&mut self) {
        if self.goaway_sent {
            return;
        }
        self.goaway_sent = true;
        self.shared.state().draining = true;
        let last = self.last_stream;
        let _ = self
            .shared
            .send(|out| put_goaway(out, last, ErrorCode::NoError));
    }

    fn frame(&mut self, h: &FrameHeader, payload: &[u8], start: &mut dyn FnMut(Job)) -> Step {
        match h.kind {
            kind::DATA => self.data(h, payload),
            kind::HEADERS => self.headers(h, payload, start),
            kind::PRIORITY => self.priority(h, payload),
            kind::RST_STREAM => self.rst(h, payload),
            kind::SETTINGS => self.settings(h, payload),
            kind::PUSH_PROMISE => Err(ConnError(ErrorCode::Protocol, "PUSH_PROMISE from a client")),
            kind::PING => self.ping(h, payload),
            kind::GOAWAY if h.stream != 0 => {
                Err(ConnError(ErrorCode::Protocol, "GOAWAY on a stream"))
            }
            kind::GOAWAY => {
                self.drain();
                Ok(())
            }
            kind::WINDOW_UPDATE => self.window_update(h, payload),
            // Unknown frame types are ignored (RFC 9113 §4.1).
            _ => Ok(()),
        }
    }

    /// Writes frames; a failed write ends the connection.
    fn send(&self, f: impl FnOnce(&mut Vec<u8>)) -> Step {
        self.shared
            .send(f)
            .map_err(|_| ConnError(ErrorCode::Internal, "write failed"))
    }

    fn reset(&self, id: u32, code: ErrorCode) -> Step {
        self.send(|out| put_rst(out, id, code))
    }

    /// Gives `n` bytes back to the client's connection window.
    fn credit(&self, n: usize) -> Step {
        if n == 0 {
            return Ok(());
        }
        self.shared.state().recv_window += n as i64;
        self.send(|out| put_window_update(out, 0, n as u32))
    }

    /// A client reset or a refusal; too many of them (rapid reset) end the connection.
    fn cancelled(&mut self) -> Step {
        self.cancelled += 1;
        if self.cancelled > MAX_CANCELLED && self.cancelled * 2 > self.opened {
            return Err(ConnError(
                ErrorCode::EnhanceYourCalm,
                "too many streams reset or refused",
            ));
        }
        Ok(())
    }

    /// A frame that demands an answer; too many of them (floods) end the connection.
    fn control(&mut self) -> Step {
        self.control += 1;
        if self.control > MAX_CONTROL + CONTROL_PER_STREAM * self.opened {
            return Err(ConnError(
                ErrorCode::EnhanceYourCalm,
                "too many control frames",
            ));
        }
        Ok(())
    }

    /// Whether stream `id` is idle: above every stream the client opened, or even (a stream
    /// only the server could open, and it opens none) (§5.1, §5.1.1).
    fn idle(&self, id: u32) -> bool {
        id > self.last_stream || id.is_multiple_of(2)
    }

    fn data(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if h.stream == 0 {
            return Err(ConnError(ErrorCode::Protocol, "DATA on stream 0"));
        }
        if self.idle(h.stream) {
            return Err(ConnError(ErrorCode::Protocol, "DATA on an idle stream"));
        }
        let body = unpad(h.flags, payload).map_err(|c| ConnError(c, "bad padding"))?;
        let padding = h.len - body.len();
        let end = h.has(flag::END_STREAM);
        let mut st = self.shared.state();
        st.recv_window -= h.len as i64;
        if st.recv_window < 0 {
            return Err(ConnError(
                ErrorCode::FlowControl,
                "connection window overrun",
            ));
        }
        let Some(slot) = st
            .streams
            .get_mut(&h.stream)
            .filter(|s| !s.recv_end && !s.reset)
        else {
            drop(st);
            // Not open for the client (§5.1): STREAM_CLOSED, and what it carried goes back to
            // the connection window.
            self.credit(h.len)?;
            return self.reset(h.stream, ErrorCode::StreamClosed);
        };
        slot.recv_window -= h.len as i64;
        if slot.recv_window < 0 {
            return Err(ConnError(ErrorCode::FlowControl, "stream window overrun"));
        }
        slot.received += body.len() as u64;
        let wrong_length = slot
            .declared
            .is_some_and(|d| slot.received > d || (end && slot.received != d));
        if wrong_length {
            // A body longer or shorter than its content-length is malformed (§8.1.1).
            slot.reset = true;
            drop(st);
            self.shared.changed.notify_all();
            self.credit(h.len)?;
            return self.reset(h.stream, ErrorCode::Protocol);
        }
        // Padding is given back at once; the body as the stream's fiber reads it.
        slot.recv_window += padding as i64;
        if !body.is_empty() {
            slot.buffered += body.len();
            slot.inbox.push_back(body.to_vec());
        }
        slot.recv_end |= end;
        drop(st);
        self.shared.changed.notify_all();
        self.credit(padding)
    }

    fn headers(&mut self, h: &FrameHeader, payload: &[u8], start: &mut dyn FnMut(Job)) -> Step {
        if h.stream == 0 || h.stream.is_multiple_of(2) {
            return Err(ConnError(
                ErrorCode::Protocol,
                "HEADERS on a server stream id",
            ));
        }
        let mut frag = unpad(h.flags, payload).map_err(|c| ConnError(c, "bad padding"))?;
        let mut self_dependent = false;
        if h.has(flag::PRIORITY) {
            if frag.len() < 5 {
                return Err(ConnError(ErrorCode::FrameSize, "short priority"));
            }
            self_dependent = u31(frag) == h.stream;
            frag = &frag[5..];
        }
        let block_start = BlockStart {
            stream: h.stream,
            end_stream: h.has(flag::END_STREAM),
            self_dependent,
        };
        // A whole block (the usual case) is decoded where it lies; a partial one is kept.
        if h.has(flag::END_HEADERS) {
            return self.header_block(block_start, frag, start);
        }
        self.pending = Some(Pending {
            start: block_start,
            block: frag.to_vec(),
        });
        Ok(())
    }

    fn continuation(
        &mut self,
        h: &FrameHeader,
        payload: &[u8],
        start: &mut dyn FnMut(Job),
    ) -> Step {
        let Some(mut pending) = self.pending.take() else {
            return Err(ConnError(ErrorCode::Protocol, "CONTINUATION out of place"));
        };
        if h.kind != kind::CONTINUATION || h.stream != pending.start.stream {
            return Err(ConnError(ErrorCode::Protocol, "header block interrupted"));
        }
        if pending.block.len() + payload.len() > MAX_HEADER_BLOCK {
            return Err(ConnError(
                ErrorCode::EnhanceYourCalm,
                "header block too large",
            ));
        }
        pending.block.extend_from_slice(payload);
        if h.has(flag::END_HEADERS) {
            return self.header_block(pending.start, &pending.block, start);
        }
        self.pending = Some(pending);
        Ok(())
    }

    /// A complete header block: a new request, or trailers.
    fn header_block(&mut self, p: BlockStart, block: &[u8], start: &mut dyn FnMut(Job)) -> Step {
        let mut builder = HeadBuilder::default();
        let decoded = self
            .decoder
            .decode(block, MAX_HEADER_LIST_SIZE as usize, |n, v| {
                builder.field(n, v)
            });
        if decoded == Err(BlockError::Compression) {
            return Err(ConnError(ErrorCode::Compression, "bad header block"));
        }
        let id = p.stream;
        if id <= self.last_stream {
            return self.trailers(id, &p, &builder);
        }
        self.last_stream = id;
        self.opened += 1;
        if self.recent.len() == RECENT_STREAMS {
            self.recent.pop_front();
        }
        self.recent.push_back(id);
        if p.self_dependent {
            return self.reset(id, ErrorCode::Protocol);
        }
        if self.goaway_sent {
            return self.reset(id, ErrorCode::RefusedStream);
        }
        // One lock for the check and the insertion (each request takes it once here).
        let mut st = self.shared.state();
        if st.streams.len() >= MAX_CONCURRENT_STREAMS as usize {
            drop(st);
            self.cancelled()?;
            return self.reset(id, ErrorCode::RefusedStream);
        }
        if decoded == Err(BlockError::TooLarge) {
            drop(st);
            return self.refuse_431(id, p.end_stream);
        }
        let declared = builder.content_length();
        let head = builder
            .finish()
            .filter(|_| !(p.end_stream && declared.is_some_and(|n| n > 0)));
        let Some(head) = head else {
            drop(st);
            return self.reset(id, ErrorCode::Protocol);
        };
        let mut slot = Slot::new(st.peer.initial_window, DEFAULT_WINDOW, declared);
        slot.recv_end = p.end_stream;
        st.streams.insert(id, slot);
        drop(st);
        start(Job {
            id,
            head,
            bodyless: p.end_stream,
        });
        Ok(())
    }

    /// A header block on a stream already opened: trailers, which must end the stream.
    fn trailers(&mut self, id: u32, p: &BlockStart, builder: &HeadBuilder) -> Step {
        let mut st = self.shared.state();
        let Some(slot) = st.streams.get_mut(&id) else {
            drop(st);
            if self.recent.contains(&id) {
                return Err(ConnError(
                    ErrorCode::StreamClosed,
                    "HEADERS on a closed stream",
                ));
            }
            return Err(ConnError(ErrorCode::Protocol, "stream id going backwards"));
        };
        // Half-closed (remote), or reset: STREAM_CLOSED (§5.1), whether or not the stream's
        // fiber has finished yet.
        if slot.recv_end || slot.reset {
            drop(st);
            return self.reset(id, ErrorCode::StreamClosed);
        }
        if !p.end_stream || !builder.trailers_ok() {
            slot.reset = true;
            drop(st);
            self.shared.changed.notify_all();
            return self.reset(id, ErrorCode::Protocol);
        }
        if slot.declared.is_some_and(|d| d != slot.received) {
            slot.reset = true;
            drop(st);
            self.shared.changed.notify_all();
            return self.reset(id, ErrorCode::Protocol);
        }
        slot.recv_end = true;
        drop(st);
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Answers 431 to a request whose header list is over the limit.
    fn refuse_431(&mut self, id: u32, end_stream: bool) -> Step {
        let mut slot = Slot::new(0, DEFAULT_WINDOW, None);
        slot.recv_end = end_stream;
        self.shared.state().streams.insert(id, slot);
        let head = ResponseHead {
            status: 431,
            lines: b"",
            length: Some(0),
        };
        let r = StreamSender::new(self.shared, id).respond(&head, b"", true);
        let slot = self.shared.state().streams.remove(&id);
        r.map_err(|_| ConnError(ErrorCode::Internal, "write failed"))?;
        if slot.is_some_and(|s| !s.recv_end) {
            return self.reset(id, ErrorCode::NoError);
        }
        Ok(())
    }

    fn priority(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if h.stream == 0 {
            return Err(ConnError(ErrorCode::Protocol, "PRIORITY on stream 0"));
        }
        if payload.len() != 5 {
            return self.reset(h.stream, ErrorCode::FrameSize);
        }
        if u31(payload) == h.stream {
            return self.reset(h.stream, ErrorCode::Protocol);
        }
        Ok(())
    }

    fn rst(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if h.stream == 0 {
            return Err(ConnError(ErrorCode::Protocol, "RST_STREAM on stream 0"));
        }
        if payload.len() != 4 {
            return Err(ConnError(
                ErrorCode::FrameSize,
                "RST_STREAM of the wrong size",
            ));
        }
        if self.idle(h.stream) {
            return Err(ConnError(
                ErrorCode::Protocol,
                "RST_STREAM on an idle stream",
            ));
        }
        let was_open = {
            let mut st = self.shared.state();
            match st.streams.get_mut(&h.stream) {
                Some(slot) if !slot.reset => {
                    slot.reset = true;
                    true
                }
                _ => false,
            }
        };
        if was_open {
            self.shared.changed.notify_all();
            self.cancelled()?;
        }
        Ok(())
    }

    fn settings(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if h.stream != 0 {
            return Err(ConnError(ErrorCode::Protocol, "SETTINGS on a stream"));
        }
        if h.has(flag::ACK) {
            if !payload.is_empty() {
                return Err(ConnError(
                    ErrorCode::FrameSize,
                    "SETTINGS ack with a payload",
                ));
            }
            return Ok(());
        }
        self.got_settings = true;
        self.control()?;
        {
            let mut st = self.shared.state();
            let delta = st
                .peer
                .apply(payload)
                .map_err(|c| ConnError(c, "bad SETTINGS"))?;
            if delta != 0 {
                for slot in st.streams.values_mut() {
                    slot.send_window += delta;
                    if slot.send_window > MAX_WINDOW {
                        return Err(ConnError(ErrorCode::FlowControl, "stream window overflow"));
                    }
                }
            }
        }
        self.shared.changed.notify_all();
        self.send(|out| put_header(out, 0, kind::SETTINGS, flag::ACK, 0))
    }

    fn ping(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if h.stream != 0 {
            return Err(ConnError(ErrorCode::Protocol, "PING on a stream"));
        }
        if payload.len() != 8 {
            return Err(ConnError(ErrorCode::FrameSize, "PING of the wrong size"));
        }
        if h.has(flag::ACK) {
            return Ok(());
        }
        self.control()?;
        self.send(|out| put_ping_ack(out, payload))
    }

    fn window_update(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if payload.len() != 4 {
            return Err(ConnError(
                ErrorCode::FrameSize,
                "WINDOW_UPDATE of the wrong size",
            ));
        }
        let inc = i64::from(u31(payload));
        if h.stream == 0 {
            if inc == 0 {
                return Err(ConnError(ErrorCode::Protocol, "WINDOW_UPDATE of 0"));
            }
            let mut st = self.shared.state();
            st.send_window += inc;
            if st.send_window > MAX_WINDOW {
                return Err(ConnError(
                    ErrorCode::FlowControl,
                    "connection window overflow",
                ));
            }
        } else {
            if self.idle(h.stream) {
                return Err(ConnError(
                    ErrorCode::Protocol,
                    "WINDOW_UPDATE on an idle stream",
                ));
            }
            if inc == 0 {
                return self.reset(h.stream, ErrorCode::Protocol);
            }
            let mut st = self.shared.state();
            if let Some(slot) = st.streams.get_mut(&h.stream) {
                slot.send_window += inc;
                if slot.send_window > MAX_WINDOW {
                    slot.reset = true;
                    drop(st);
                    self.shared.changed.notify_all();
                    return self.reset(h.stream, ErrorCode::FlowControl);
                }
            }
        }
        self.shared.changed.notify_all();
        Ok(())
    }
}
