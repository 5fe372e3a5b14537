//! The connection loop: the connection's own fiber checks the preface, reads every frame and
//! keeps the protocol state (RFC 9113 §5 stream states, §6 frame rules, §6.9 flow control);
//! each request stream goes to a fiber of the connection's pool, which answers it through the
//! shared writer. Bounds against the known attacks live here, each with its constant:
//! concurrent streams (REFUSED_STREAM), streams reset or refused (rapid reset), control frames
//! that demand an answer (SETTINGS and PING floods), header block size (CONTINUATION flood), the
//! header list (HPACK bomb: 431); window overflows and id reuse are connection errors.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use moria_runtime::scope::scope;
use moria_runtime::sync::{channel, Receiver};
use moria_runtime::ShutdownToken;

use super::body::StreamBody;
use super::frame::{
    flag, kind, put_goaway, put_header, put_ping_ack, put_rst, put_window_update, u31,
};
use super::frame::{unpad, ErrorCode, FrameHeader, HEADER_LEN};
use super::hpack::{BlockError, Decoder};
use super::request_head::HeadBuilder;
use super::send::{ResponseHead, StreamSender};
use super::settings::{put_server_settings, CONN_WINDOW, DEFAULT_WINDOW, MAX_WINDOW};
use super::settings::{MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE};
use super::shared::{Shared, Slot};
use super::{Call, Service, PREFACE};

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

/// Most bytes read and dropped after an error GOAWAY (see `linger`).
const LINGER_MAX: usize = 1 << 20;
/// How many opened stream ids the connection remembers (see `Conn::recent`).
const RECENT_STREAMS: usize = 256;

/// Server-wide settings an HTTP/2 connection needs (the socket's read timeout, set by the
/// caller, is how long a connection with no open stream waits for a frame).
pub(crate) struct ConnConfig {
    /// How long a stream waits on the client (window, body) before giving up.
    pub stall: Duration,
}

/// A connection error: the GOAWAY code, and why (for the log).
#[derive(Debug)]
struct ConnError(ErrorCode, &'static str);

type Step = Result<(), ConnError>;

/// A request stream for the pool.
struct Job {
    id: u32,
    head: Vec<u8>,
    bodyless: bool,
}

/// Serves one HTTP/2 connection whose preface (if `preface_read` is false) is still to be read
/// from `read`; returns when it is closed. `fd` is the socket, whose reading side is shut to
/// wake this fiber when the last stream ends during a shutdown.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    read: &mut dyn Read,
    write: Box<dyn Write + Send>,
    service: &dyn Service,
    cfg: &ConnConfig,
    token: &ShutdownToken,
    idle: &AtomicBool,
    fd: RawFd,
) -> io::Result<()> {
    let mut input = FrameReader::new(read);
    input.fill(PREFACE.len())?;
    if input.take(PREFACE.len()) != PREFACE.as_slice() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an HTTP/2 preface",
        ));
    }
    let shared = Shared::new(write, cfg.stall);
    shared.send(|out| {
        put_server_settings(out);
        put_window_update(out, 0, (CONN_WINDOW - DEFAULT_WINDOW) as u32);
    })?;
    let (jobs, queue) = channel::<Job>();
    let idle_workers = AtomicUsize::new(0);
    let workers = AtomicUsize::new(0);
    let ctx = WorkCtx {
        idle_workers: &idle_workers,
        idle,
        token,
        fd,
    };
    scope(|s| {
        let mut conn = Conn {
            shared: &shared,
            decoder: Decoder::new(),
            last_stream: 0,
            opened: 0,
            cancelled: 0,
            control: 0,
            got_settings: false,
            goaway_sent: false,
            pending: None,
            recent: VecDeque::new(),
        };
        let mut start = |job: Job| {
            if idle_workers.load(Ordering::Acquire) == 0
                && workers.load(Ordering::Relaxed) < MAX_CONCURRENT_STREAMS as usize
            {
                workers.fetch_add(1, Ordering::Relaxed);
                let (q, sh, ctx) = (queue.clone(), &shared, &ctx);
                s.spawn(move || work(q, sh, service, ctx));
            } else {
                idle_workers.fetch_sub(1, Ordering::AcqRel);
            }
            // The queue outlives every sender: sending cannot fail.
            let _ = jobs.send(job);
        };
        let r = conn.run(&mut input, &mut start, token, idle);
        let end = match &r {
            Ok(()) => Some((ErrorCode::NoError, "done")),
            Err(Failure::Conn(ConnError(code, why))) => Some((*code, *why)),
            Err(Failure::Io(_)) => None,
        };
        if let Some((code, why)) = end {
            log::debug!("HTTP/2 connection ends: {why} ({code:?})");
            let last = conn.last_stream;
            let _ = shared.send(|out| put_goaway(out, last, code));
        }
        match end {
            Some((ErrorCode::NoError, _)) => wait_streams(&shared, cfg.stall),
            Some(_) => linger(&mut input, fd, idle, token),
            None => {}
        }
        shared.state().dead = true;
        shared.changed.notify_all();
        drop(jobs);
        match r {
            Err(Failure::Io(e)) => Err(e),
            _ => Ok(()),
        }
    })
}

/// After a GOAWAY for an error: stops sending and reads (up to [`LINGER_MAX`] bytes, within the
/// socket's read timeout) what the client still sends, so the close does not reset the
/// connection before the client reads the GOAWAY. Idle meanwhile: a shutdown ends it.
fn linger(input: &mut FrameReader<'_>, fd: RawFd, idle: &AtomicBool, token: &ShutdownToken) {
    // SAFETY: `fd` is the connection's socket, open until `serve` returns.
    unsafe {
        libc::shutdown(fd, libc::SHUT_WR);
    }
    idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if token.is_triggered() {
        return;
    }
    let mut scratch = [0u8; 4096];
    let mut total = 0;
    while total < LINGER_MAX {
        match input.io.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(n) => total += n,
        }
    }
}

/// Waits (at most `limit` without progress) for the open streams to finish.
fn wait_streams(shared: &Shared, limit: Duration) {
    let mut st = shared.state();
    while !st.streams.is_empty() {
        if shared.changed.wait_timeout(&mut st, limit) {
            return;
        }
    }
}

/// A pool fiber: serves streams until the connection ends.
fn work(queue: Receiver<Job>, shared: &Shared, service: &dyn Service, ctx: &WorkCtx<'_>) {
    while let Ok(job) = queue.recv() {
        let id = job.id;
        service.serve(Call {
            head: job.head,
            bodyless: job.bodyless,
            body: StreamBody::new(shared, id),
            send: StreamSender::new(shared, id),
        });
        let (slot, quiet) = {
            let mut st = shared.state();
            let slot = st.streams.remove(&id);
            (slot, st.streams.is_empty())
        };
        shared.changed.notify_all();
        if let Some(slot) = slot.filter(|s| !s.recv_end && !s.reset) {
            // The answer is complete before the request: the client may stop sending
            // (RFC 9113 §8.1), and what it sent unread is credited back to the connection.
            let unread = slot.buffered as u32;
            shared.state().recv_window += i64::from(unread);
            let _ = shared.send(|out| {
                put_rst(out, id, ErrorCode::NoError);
                if unread > 0 {
                    put_window_update(out, 0, unread);
                }
            });
        }
        ctx.idle_workers.fetch_add(1, Ordering::AcqRel);
        if quiet {
            // The reading fiber may be waiting with a stream open: it is idle now, for a
            // shutdown to wake (and if the shutdown already began, it is woken here).
            ctx.idle.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if ctx.token.is_triggered() {
                shutdown_read(ctx.fd);
            }
        }
    }
}

/// What the pool fibers share besides the connection state.
struct WorkCtx<'a> {
    idle_workers: &'a AtomicUsize,
    idle: &'a AtomicBool,
    token: &'a ShutdownToken,
    fd: RawFd,
}

/// Shuts the reading side of the socket, so the reading fiber's wait ends.
fn shutdown_read(fd: RawFd) {
    // SAFETY: `fd` is the connection's socket, which stays open until `serve` returns, after
    // every stream fiber (the only callers) has finished.
    unsafe {
        libc::shutdown(fd, libc::SHUT_RD);
    }
}

/// What ended the loop.
enum Failure {
    Conn(ConnError),
    Io(io::Error),
}

impl From<ConnError> for Failure {
    fn from(e: ConnError) -> Failure {
        Failure::Conn(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

/// A header block still waiting for its CONTINUATION frames.
struct Pending {
    stream: u32,
    end_stream: bool,
    self_dependent: bool,
    block: Vec<u8>,
}

/// The reading fiber's own state.
struct Conn<'s> {
    shared: &'s Shared,
    decoder: Decoder,
    /// The highest stream id the client opened.
    last_stream: u32,
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

impl Conn<'_> {
    fn run(
        &mut self,
        input: &mut FrameReader<'_>,
        start: &mut dyn FnMut(Job),
        token: &ShutdownToken,
        idle: &AtomicBool,
    ) -> Result<(), Failure> {
        loop {
            let quiet = self.shared.state().streams.is_empty();
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
                Err(_) if token.is_triggered() && !input.partial() => return Ok(()),
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

    fn data(&mut self, h: &FrameHeader, payload: &[u8]) -> Step {
        if h.stream == 0 {
            return Err(ConnError(ErrorCode::Protocol, "DATA on stream 0"));
        }
        if h.stream > self.last_stream {
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
        let pending = Pending {
            stream: h.stream,
            end_stream: h.has(flag::END_STREAM),
            self_dependent,
            block: frag.to_vec(),
        };
        if h.has(flag::END_HEADERS) {
            return self.header_block(pending, start);
        }
        self.pending = Some(pending);
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
        if h.kind != kind::CONTINUATION || h.stream != pending.stream {
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
            return self.header_block(pending, start);
        }
        self.pending = Some(pending);
        Ok(())
    }

    /// A complete header block: a new request, or trailers.
    fn header_block(&mut self, p: Pending, start: &mut dyn FnMut(Job)) -> Step {
        let mut builder = HeadBuilder::default();
        let decoded = self
            .decoder
            .decode(&p.block, MAX_HEADER_LIST_SIZE as usize, |n, v| {
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
        let (open, send_window) = {
            let st = self.shared.state();
            (st.streams.len(), st.peer.initial_window)
        };
        if open >= MAX_CONCURRENT_STREAMS as usize {
            self.cancelled()?;
            return self.reset(id, ErrorCode::RefusedStream);
        }
        if decoded == Err(BlockError::TooLarge) {
            return self.refuse_431(id, p.end_stream);
        }
        let declared = builder.content_length();
        if p.end_stream && declared.is_some_and(|n| n > 0) {
            return self.reset(id, ErrorCode::Protocol);
        }
        let Some(head) = builder.finish() else {
            return self.reset(id, ErrorCode::Protocol);
        };
        let mut slot = Slot::new(send_window, DEFAULT_WINDOW, declared);
        slot.recv_end = p.end_stream;
        self.shared.state().streams.insert(id, slot);
        start(Job {
            id,
            head,
            bodyless: p.end_stream,
        });
        Ok(())
    }

    /// A header block on a stream already opened: trailers, which must end the stream.
    fn trailers(&mut self, id: u32, p: &Pending, builder: &HeadBuilder) -> Step {
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
        if slot.recv_end {
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
        if h.stream > self.last_stream {
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
            if h.stream > self.last_stream {
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

/// Reads whole frames, keeping a partial one across a timed-out read.
struct FrameReader<'r> {
    io: &'r mut dyn Read,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
}

impl<'r> FrameReader<'r> {
    fn new(io: &'r mut dyn Read) -> FrameReader<'r> {
        FrameReader {
            io,
            buf: vec![0; 16 * 1024],
            pos: 0,
            filled: 0,
        }
    }

    /// Whether part of a frame is buffered.
    fn partial(&self) -> bool {
        self.pos < self.filled
    }

    /// Reads until `n` bytes are buffered.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.filled - self.pos >= n {
            return Ok(());
        }
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.filled -= self.pos;
            self.pos = 0;
            if n > self.buf.len() {
                self.buf.resize(n, 0);
            }
        }
        while self.filled - self.pos < n {
            let got = self.io.read(&mut self.buf[self.filled..])?;
            if got == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.filled += got;
        }
        Ok(())
    }

    /// Consumes `n` buffered bytes.
    fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        s
    }

    /// The buffered frame header.
    fn header(&self) -> &[u8; HEADER_LEN] {
        self.buf[self.pos..self.pos + HEADER_LEN]
            .try_into()
            .unwrap_or(&[0; HEADER_LEN])
    }

    /// Consumes a frame header and its `len`-byte payload; returns the payload.
    fn frame(&mut self, len: usize) -> &[u8] {
        self.pos += HEADER_LEN;
        self.take(len)
    }
}
