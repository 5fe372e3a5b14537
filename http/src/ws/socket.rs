//! [`WebSocket`]: blocking `read` and `send` over one connection, the close handshake, and
//! [`split`](WebSocket::split) into a [`WsReader`] and a [`WsWriter`] for two fibers. The read
//! loop runs once for both forms, over a [`Duplex`]: pings are answered, a close is answered
//! and ends the connection, a peer that breaks the protocol gets the close code its fault
//! calls for. Reading a message as a `Read` is `socket/streaming.rs`.

mod streaming;

pub use streaming::MessageReader;

use std::io;
use std::sync::Arc;

use moria_runtime::sync::Mutex as FiberMutex;

use super::config::Config;
use super::error::{Error, Result};
use super::frame::{OpCode, MAX_CONTROL_PAYLOAD};
use super::inbound::Inbound;
use super::message::{CloseFrame, Message, CLOSE_GOING_AWAY};
use super::outbound::Outbound;
use super::prepared::Prepared;
use super::stream::{ReadHalf, Stream, WriteHalf};
use super::timers::{Duplex, ServerLink, Src, Stop, Timers};

/// The read side's state, whichever form the socket has.
pub(crate) struct ReadSide {
    /// Declared first: the tracker forgets the connection before its socket closes.
    link: Option<ServerLink>,
    inbound: Inbound,
    timers: Timers,
    /// Nothing more will arrive (the close handshake is over or the connection failed).
    done: bool,
}

impl ReadSide {
    /// A read side for `cfg`, with what the handshake agreed.
    pub(crate) fn new(cfg: &Config, inbound: Inbound, link: Option<ServerLink>) -> ReadSide {
        ReadSide {
            link,
            inbound,
            timers: Timers::new(cfg),
            done: false,
        }
    }

    /// The inbound reader, and its byte source over `io` with the timers running.
    fn source<'a, D: Duplex>(&'a mut self, io: &'a mut D) -> (&'a mut Inbound, Src<'a, D>) {
        let src = Src {
            io,
            timers: &mut self.timers,
            link: self.link.as_ref(),
        };
        (&mut self.inbound, src)
    }

    /// The read failed with `e`: nothing more will be read; see [`fail`](Self::fail).
    fn failed(&mut self, io: &mut impl Duplex, e: Error) -> Error {
        self.done = true;
        self.fail(io, e)
    }

    /// The peer's close arrived: answered (unless ours went first), then our half closes.
    fn peer_closed(&mut self, io: &mut impl Duplex, frame: Option<&CloseFrame>) {
        self.done = true;
        if !io.close_sent() {
            let code = frame.map(|f| f.code.to_be_bytes());
            let _ = io.control(OpCode::Close, code.as_ref().map_or(&[][..], |c| c));
        }
        io.shutdown_write();
    }

    /// Reads the next message, answering pings and a close; while our close waits for its
    /// answer, everything else is dropped.
    fn read(&mut self, io: &mut impl Duplex) -> Result<Message> {
        self.drain_stream(io)?;
        if self.done {
            return Err(Error::Closed);
        }
        loop {
            let r = {
                let (inbound, mut src) = self.source(io);
                inbound.next(&mut src)
            };
            match r {
                Ok(Message::Close(frame)) => {
                    self.peer_closed(io, frame.as_ref());
                    return Ok(Message::Close(frame));
                }
                Ok(_) if io.close_sent() => {}
                Ok(Message::Ping(p)) => {
                    io.control(OpCode::Pong, &p)?;
                    return Ok(Message::Ping(p));
                }
                Ok(m) => return Ok(m),
                Err(e) => return Err(self.failed(io, e)),
            }
        }
    }

    /// Ends the connection after `e`: the close frame its cause calls for, then our half of
    /// the connection. Returns what the caller sees.
    fn fail(&mut self, io: &mut impl Duplex, e: Error) -> Error {
        let shutting_down = self.link.as_ref().is_some_and(|l| l.token.is_triggered());
        let (code, reason) = match (self.timers.stop, &e) {
            (Some(Stop::Shutdown), _) => (CLOSE_GOING_AWAY, "server shutting down"),
            // The shutdown woke the wait: an end of stream or an error, whichever the socket
            // reports.
            (_, Error::Closed | Error::Io(_)) if shutting_down => {
                (CLOSE_GOING_AWAY, "server shutting down")
            }
            (Some(Stop::Idle), _) => (CLOSE_GOING_AWAY, "idle timeout"),
            (Some(Stop::Stalled), _) => (CLOSE_GOING_AWAY, "frame timeout"),
            (Some(Stop::CloseTimeout), _) => return Error::Io(io::ErrorKind::TimedOut.into()),
            (_, Error::Closed) if io.close_sent() => return Error::Closed,
            (_, Error::Closed) => {
                return Error::Io(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "connection closed without a close frame",
                ))
            }
            (_, failure) => match failure.close_code() {
                Some(code) => (code, ""),
                None => return e,
            },
        };
        let seen = match (code, self.timers.stop) {
            (CLOSE_GOING_AWAY, Some(Stop::Idle | Stop::Stalled)) => e,
            (CLOSE_GOING_AWAY, _) => Error::Closed,
            _ => e,
        };
        if !io.close_sent() {
            let _ = io.control(OpCode::Close, &close_payload(code, reason));
        }
        io.shutdown_write();
        seen
    }

    /// Sends our close (unless sent) and waits for the peer's, up to the close timeout.
    fn close(&mut self, io: &mut impl Duplex, code: u16, reason: &str) -> Result<()> {
        if !io.close_sent() {
            if reason.len() > MAX_CONTROL_PAYLOAD as usize - 2 {
                return Err(Error::Protocol("close reason over 123 bytes"));
            }
            io.control(OpCode::Close, &close_payload(code, reason))?;
        }
        self.timers.close_sent();
        loop {
            match self.read(io) {
                Ok(Message::Close(_)) | Err(Error::Closed) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn close_payload(code: u16, reason: &str) -> Vec<u8> {
    let mut p = code.to_be_bytes().to_vec();
    p.extend_from_slice(reason.as_bytes());
    p
}

/// The opcode and payload of a message to send.
fn parts(msg: &Message) -> Result<(OpCode, &[u8])> {
    Ok(match msg {
        Message::Text(t) => (OpCode::Text, t.as_bytes()),
        Message::Binary(b) => (OpCode::Binary, b),
        Message::Ping(p) | Message::Pong(p) if p.len() > MAX_CONTROL_PAYLOAD as usize => {
            return Err(Error::Protocol("control payload over 125 bytes"))
        }
        Message::Ping(p) => (OpCode::Ping, p),
        Message::Pong(p) => (OpCode::Pong, p),
        Message::Close(_) => return Err(Error::Protocol("send a close with WebSocket::close")),
    })
}

/// A WebSocket connection (server or client side): `read` and `send` from one fiber, or
/// [`split`](Self::split) for a reading fiber and writing ones.
pub struct WebSocket {
    /// Declared before the stream: see [`ReadSide`].
    read: ReadSide,
    out: Outbound,
    stream: Stream,
    protocol: Option<String>,
}

/// The whole socket as the read loop's [`Duplex`].
struct Whole<'a> {
    stream: &'a mut Stream,
    out: &'a mut Outbound,
}

impl Duplex for Whole<'_> {
    type Src = Stream;

    fn src(&mut self) -> &mut Stream {
        self.stream
    }

    fn control(&mut self, op: OpCode, payload: &[u8]) -> Result<()> {
        self.out.send(self.stream, op, payload)
    }

    fn close_sent(&self) -> bool {
        self.out.close_sent
    }

    fn shutdown_write(&mut self) {
        self.stream.shutdown_write();
    }

    fn release_out(&mut self) {
        self.out.release();
    }
}

impl WebSocket {
    /// A WebSocket over `stream` after a completed handshake.
    pub(crate) fn new(
        stream: Stream,
        read: ReadSide,
        out: Outbound,
        protocol: Option<String>,
    ) -> WebSocket {
        WebSocket {
            read,
            out,
            stream,
            protocol,
        }
    }

    fn duplex(&mut self) -> (&mut ReadSide, Whole<'_>) {
        (
            &mut self.read,
            Whole {
                stream: &mut self.stream,
                out: &mut self.out,
            },
        )
    }

    /// Waits for the next message. A ping is answered before it is returned; a close is
    /// answered and returned once, after which reads fail with [`Error::Closed`]. A peer
    /// that breaks the protocol gets its close code and the read fails.
    pub fn read(&mut self) -> Result<Message> {
        let (side, mut io) = self.duplex();
        side.read(&mut io)
    }

    /// Sends a message (text, binary, ping or pong; close with [`close`](Self::close)).
    pub fn send(&mut self, msg: Message) -> Result<()> {
        let (op, payload) = parts(&msg)?;
        self.out.send(&mut self.stream, op, payload)
    }

    /// Sends a text message.
    pub fn send_text(&mut self, text: &str) -> Result<()> {
        self.out
            .send(&mut self.stream, OpCode::Text, text.as_bytes())
    }

    /// Sends a binary message.
    pub fn send_binary(&mut self, data: &[u8]) -> Result<()> {
        self.out.send(&mut self.stream, OpCode::Binary, data)
    }

    /// Sends a message framed once for many sockets (see [`Prepared`]).
    pub fn send_prepared(&mut self, msg: &Prepared) -> Result<()> {
        self.out.send_prepared(&mut self.stream, msg)
    }

    /// Starts the close handshake with `code` and `reason` (at most 123 bytes) and waits for
    /// the peer's answer (messages meanwhile are dropped), up to the close timeout.
    pub fn close(&mut self, code: u16, reason: &str) -> Result<()> {
        let (side, mut io) = self.duplex();
        side.close(&mut io, code, reason)
    }

    /// The subprotocol agreed in the handshake.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// The socket's descriptor (for the parking lot).
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match &self.stream {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.get_ref().as_raw_fd(),
        }
    }

    /// Its server's tracker entry and shutdown token (server side).
    pub(crate) fn link(&self) -> Option<&ServerLink> {
        self.read.link.as_ref()
    }

    /// Whether nothing more will be read (closed or failed).
    pub(crate) fn is_done(&self) -> bool {
        self.read.done
    }

    /// Readies the socket to wait without a fiber: `Some(deadline)` (its next timer, if any)
    /// when nothing is buffered, with its buffers released and marked idle for a shutdown;
    /// `None` when a read would not wait or the server shuts down (the read sends 1001).
    pub(crate) fn park_ready(&mut self) -> Option<Option<std::time::Instant>> {
        if !self.read.inbound.is_between() {
            return None;
        }
        if let Stream::Tls(s) = &mut self.stream {
            if s.has_buffered_input() {
                return None;
            }
            s.release_buffers();
        }
        self.read.inbound.release();
        self.out.release();
        if let Some(link) = &self.read.link {
            // The fiber is about to finish without the connection ending: the tracker must
            // not take it for one that died (and reclaim the socket) after a stack overflow
            // elsewhere. The fiber that wakes it later is recorded (`parked.rs`).
            link.reg.detach();
            link.reg
                .state
                .idle
                .store(true, std::sync::atomic::Ordering::SeqCst);
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            if link.token.is_triggered() {
                return None;
            }
        }
        Some(self.read.timers.next_wait())
    }

    /// Whether permessage-deflate was agreed (our messages go out compressed).
    pub fn is_compressed(&self) -> bool {
        self.out.is_compressed()
    }

    /// Splits into a reader and a writer that two fibers use at once (clone the writer for
    /// more). The reader keeps the timers and goes quiet between messages as `read` does.
    pub fn split(self) -> Result<(WsReader, WsWriter)> {
        let WebSocket {
            read,
            out,
            stream,
            protocol,
        } = self;
        let (src, dst) = stream.split()?;
        let writer = WsWriter {
            shared: Arc::new(FiberMutex::new(WriteSide { out, dst })),
        };
        Ok((
            WsReader {
                read,
                src,
                writer: writer.clone(),
                protocol,
            },
            writer,
        ))
    }
}

/// The writing half's state, behind the writers' lock.
struct WriteSide {
    out: Outbound,
    dst: WriteHalf,
}

/// The writing half of a split [`WebSocket`]; clones share it (one frame at a time).
#[derive(Clone)]
pub struct WsWriter {
    shared: Arc<FiberMutex<WriteSide>>,
}

impl WsWriter {
    fn send_frame(&self, op: OpCode, payload: &[u8]) -> Result<()> {
        let mut w = self.shared.lock();
        let WriteSide { out, dst } = &mut *w;
        out.send(dst, op, payload)
    }

    /// Sends a message (text, binary, ping or pong).
    pub fn send(&self, msg: Message) -> Result<()> {
        let (op, payload) = parts(&msg)?;
        self.send_frame(op, payload)
    }

    /// Sends a text message.
    pub fn send_text(&self, text: &str) -> Result<()> {
        self.send_frame(OpCode::Text, text.as_bytes())
    }

    /// Sends a binary message.
    pub fn send_binary(&self, data: &[u8]) -> Result<()> {
        self.send_frame(OpCode::Binary, data)
    }

    /// Sends a message framed once for many sockets (see [`Prepared`]).
    pub fn send_prepared(&self, msg: &Prepared) -> Result<()> {
        let mut w = self.shared.lock();
        let WriteSide { out, dst } = &mut *w;
        out.send_prepared(dst, msg)
    }

    /// Sends a close frame; the reader then sees the peer's answer (or times out).
    pub fn close(&self, code: u16, reason: &str) -> Result<()> {
        if reason.len() > MAX_CONTROL_PAYLOAD as usize - 2 {
            return Err(Error::Protocol("close reason over 123 bytes"));
        }
        self.send_frame(OpCode::Close, &close_payload(code, reason))
    }
}

/// The reading half of a split [`WebSocket`].
pub struct WsReader {
    /// Declared before the socket half: see [`ReadSide`].
    read: ReadSide,
    src: ReadHalf,
    writer: WsWriter,
    protocol: Option<String>,
}

/// The reading half and the shared writer as the read loop's [`Duplex`].
struct Halves<'a> {
    src: &'a mut ReadHalf,
    writer: &'a WsWriter,
}

impl Duplex for Halves<'_> {
    type Src = ReadHalf;

    fn src(&mut self) -> &mut ReadHalf {
        self.src
    }

    fn control(&mut self, op: OpCode, payload: &[u8]) -> Result<()> {
        self.writer.send_frame(op, payload)
    }

    fn close_sent(&self) -> bool {
        self.writer.shared.lock().out.close_sent
    }

    fn shutdown_write(&mut self) {
        self.writer.shared.lock().dst.shutdown_write();
    }

    fn release_out(&mut self) {
        if let Some(mut w) = self.writer.shared.try_lock() {
            w.out.release();
        }
    }
}

impl WsReader {
    /// Waits for the next message, as [`WebSocket::read`].
    pub fn read(&mut self) -> Result<Message> {
        let mut io = Halves {
            src: &mut self.src,
            writer: &self.writer,
        };
        if io.close_sent() {
            self.read.timers.close_sent();
        }
        self.read.read(&mut io)
    }

    /// The subprotocol agreed in the handshake.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// Whether the next [`read`](Self::read) returns without waiting: a whole frame (a message
    /// in one frame, or a control frame) already arrived with an earlier read. A sender can
    /// gather what is there into one batch ([`Prepared::batch`]).
    pub fn is_ready(&self) -> bool {
        !self.read.done && self.read.inbound.frame_buffered()
    }
}
