//! Reading one data message as a `Read` ([`WebSocket::read_stream`], [`MessageReader`]): its
//! bytes handed out as they arrive, control frames between its fragments answered, an unread
//! rest skipped by the next read.

use std::io::{self, Read};

use super::{ReadSide, WebSocket, Whole};
use crate::ws::error::{Error, Result};
use crate::ws::frame::OpCode;
use crate::ws::inbound::Step;
use crate::ws::message::Message;
use crate::ws::timers::Duplex;

impl ReadSide {
    /// Reads what is left of a message streamed with `read_stream` and not read to its end.
    pub(super) fn drain_stream(&mut self, io: &mut impl Duplex) -> Result<()> {
        if self.inbound.is_streaming() {
            self.drain_rest(io)?;
        }
        Ok(())
    }

    /// [`drain_stream`](Self::drain_stream)'s work, in a frame of its own: its scratch buffer
    /// must not sit in every `read`'s frame, where an idle socket's wait would keep a page of
    /// stack resident for it.
    #[inline(never)]
    fn drain_rest(&mut self, io: &mut impl Duplex) -> Result<()> {
        let mut scratch = [0u8; 4096];
        while self.inbound.is_streaming() {
            self.stream_read(io, &mut scratch)?;
        }
        Ok(())
    }

    /// Waits for the next data message and starts reading it as a stream; says whether it is
    /// text. Control frames meanwhile are answered and skipped; a close ends with
    /// [`Error::Closed`].
    fn stream_start(&mut self, io: &mut impl Duplex) -> Result<bool> {
        self.drain_stream(io)?;
        loop {
            if self.done {
                return Err(Error::Closed);
            }
            let mut text = false;
            let r = {
                let (inbound, mut src) = self.source(io);
                inbound.stream_start(&mut src, &mut text)
            };
            match r {
                Ok(None) => return Ok(text),
                Ok(Some(m)) => self.streamed_control(io, m)?,
                Err(e) => return Err(self.failed(io, e)),
            }
        }
    }

    /// A control frame met while streaming: a ping is answered, a close ends the stream.
    fn streamed_control(&mut self, io: &mut impl Duplex, m: Message) -> Result<()> {
        match m {
            Message::Close(frame) => {
                self.peer_closed(io, frame.as_ref());
                Err(Error::Closed)
            }
            Message::Ping(p) if !io.close_sent() => io.control(OpCode::Pong, &p),
            _ => Ok(()),
        }
    }

    /// The next bytes of the message being streamed (0: its end).
    fn stream_read(&mut self, io: &mut impl Duplex, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() || !self.inbound.is_streaming() {
            return Ok(0);
        }
        loop {
            let r = {
                let (inbound, mut src) = self.source(io);
                inbound.stream_read(&mut src, buf)
            };
            match r {
                Ok(Step::Data(0)) => {}
                Ok(Step::Data(n)) => return Ok(n),
                Ok(Step::End) => return Ok(0),
                Ok(Step::Control(m)) => self.streamed_control(io, m)?,
                Err(e) => return Err(self.failed(io, e)),
            }
        }
    }
}

impl WebSocket {
    /// Waits for the next data message and returns it as a `Read` that yields its bytes as
    /// they arrive (nothing buffered past a frame's piece; the limits and text checks still
    /// apply), with whether it is text. Pings meanwhile are answered; a close ends with
    /// [`Error::Closed`]. An unread rest is skipped by the next read.
    pub fn read_stream(&mut self) -> Result<MessageReader<'_>> {
        let (side, mut io) = self.duplex();
        let text = side.stream_start(&mut io)?;
        Ok(MessageReader { side, io, text })
    }
}

/// One data message read as it arrives ([`WebSocket::read_stream`]).
pub struct MessageReader<'a> {
    side: &'a mut ReadSide,
    io: Whole<'a>,
    text: bool,
}

impl MessageReader<'_> {
    /// Whether the message is text (its bytes are checked to be UTF-8 as they stream).
    pub fn is_text(&self) -> bool {
        self.text
    }
}

impl Read for MessageReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.side
            .stream_read(&mut self.io, buf)
            .map_err(|e| match e {
                Error::Io(e) => e,
                e => io::Error::new(io::ErrorKind::InvalidData, e),
            })
    }
}
