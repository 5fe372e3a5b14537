//! The message reader: frames from a byte source assembled into messages, with the rules
//! RFC 6455 puts on a stream of frames: masking by role, fragmentation with control frames
//! between the fragments, continuation without a start (or a start inside a message) → 1002,
//! text checked as it arrives (1007 at the first bad byte), frame and message limits (1009,
//! checked before anything is allocated), permessage-deflate's RSV1 and inflation. A message
//! handed out as it arrives, without assembling it, is `inbound/streaming.rs`.

mod streaming;

use std::io;

use super::deflate::Inflater;
use super::error::{Error, Result};
use super::frame::{parse_head, FrameHead, OpCode, MAX_HEAD_LEN};
use super::mask;
use super::message::{parse_close, Message};
use super::utf8::Utf8Check;
pub(crate) use streaming::Step;
use streaming::Streaming;

/// The read buffer's size (frame heads, small frames; a large payload is read straight into
/// its message).
const READ_BUF: usize = 4 * 1024;
/// A payload read straight into its message grows it by at most this much per read.
const DIRECT_STEP: usize = 64 * 1024;

/// Where the reader's bytes come from.
pub(crate) trait Source {
    /// Reads into `buf` (`Ok(0)`: end of stream). `between`: no frame has started (the
    /// connection is idle between messages).
    fn fill(&mut self, buf: &mut [u8], between: bool) -> io::Result<usize>;
    /// Between messages: reads what arrives within a short while (`Ok(None)`: nothing did,
    /// the connection has gone quiet).
    fn fill_soon(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>>;
    /// The connection has gone quiet: gives back what a long wait need not hold (the stream's
    /// and the writer's buffers, the deep part of the fiber's stack), then reads as `fill`
    /// between messages.
    fn fill_quiet(&mut self, buf: &mut [u8]) -> io::Result<usize>;
}

/// A quiet connection reads the first bytes of its next frame into an array this size, on
/// the stack, and only then allocates its read buffer.
const QUIET_READ: usize = 64;

/// A data message being assembled.
struct Partial {
    text: bool,
    compressed: bool,
}

/// One connection's inbound side.
pub(crate) struct Inbound {
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Frames must be masked (we are the server) or unmasked (the client).
    expect_masked: bool,
    max_frame: u64,
    max_message: u64,
    inflater: Option<Inflater>,
    partial: Option<Partial>,
    data: Vec<u8>,
    utf8: Utf8Check,
    /// The message being read as a stream ([`Inbound::stream_read`]).
    streaming: Option<Streaming>,
}

impl Inbound {
    /// A reader for the server (`expect_masked`) or the client side, starting with the bytes
    /// already read past the handshake.
    pub(crate) fn new(
        expect_masked: bool,
        max_frame: u64,
        max_message: u64,
        inflater: Option<Inflater>,
        leftover: Vec<u8>,
    ) -> Inbound {
        let end = leftover.len();
        Inbound {
            buf: leftover,
            pos: 0,
            end,
            expect_masked,
            max_frame,
            max_message,
            inflater,
            partial: None,
            data: Vec::new(),
            utf8: Utf8Check::default(),
            streaming: None,
        }
    }

    /// Whether no message is in progress and no byte of a next frame is buffered.
    pub(crate) fn is_between(&self) -> bool {
        self.partial.is_none() && self.streaming.is_none() && self.pos == self.end
    }

    /// Whether a whole frame that ends its message (or a control frame) is buffered: the next
    /// [`next`](Self::next) returns without reading the connection.
    pub(crate) fn frame_buffered(&self) -> bool {
        if self.partial.is_some() || self.streaming.is_some() {
            return false;
        }
        let bytes = &self.buf[self.pos..self.end];
        matches!(
            parse_head(bytes, self.inflater.is_some()),
            Ok(Some((head, at))) if head.fin && (bytes.len() - at) as u64 >= head.len
        )
    }

    /// Frees the buffers while the connection waits between messages.
    pub(crate) fn release(&mut self) {
        if self.is_between() {
            self.buf = Vec::new();
            self.data = Vec::new();
            self.pos = 0;
            self.end = 0;
        }
    }

    /// Reads more bytes into the buffer; end of stream is [`Error::Closed`] between frames and
    /// an `UnexpectedEof` inside one.
    fn more(&mut self, src: &mut impl Source) -> Result<()> {
        if self.is_between() {
            return self.more_between(src);
        }
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
        } else if self.buf.len() - self.end < MAX_HEAD_LEN {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < READ_BUF {
            self.buf.resize(READ_BUF, 0);
        }
        let n = src.fill(&mut self.buf[self.end..], false)?;
        if n == 0 {
            return Err(Error::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        self.end += n;
        Ok(())
    }

    /// The first bytes of the next message: straight into the buffer if they come soon; if
    /// not, the connection has gone quiet, and it waits holding no buffer (they are freed,
    /// and the first bytes land in a small array on the stack). End of stream here is
    /// [`Error::Closed`].
    fn more_between(&mut self, src: &mut impl Source) -> Result<()> {
        self.pos = 0;
        self.end = 0;
        if self.buf.len() < READ_BUF {
            self.buf.resize(READ_BUF, 0);
        }
        if let Some(n) = src.fill_soon(&mut self.buf)? {
            self.end = n;
            return if n == 0 { Err(Error::Closed) } else { Ok(()) };
        }
        self.buf = Vec::new();
        self.data = Vec::new();
        let mut first = [0u8; QUIET_READ];
        let n = src.fill_quiet(&mut first)?;
        if n == 0 {
            return Err(Error::Closed);
        }
        self.buf.resize(READ_BUF, 0);
        self.buf[..n].copy_from_slice(&first[..n]);
        self.end = n;
        Ok(())
    }

    fn head(&mut self, src: &mut impl Source) -> Result<FrameHead> {
        loop {
            let rsv1 = self.inflater.is_some();
            if let Some((head, len)) = parse_head(&self.buf[self.pos..self.end], rsv1)? {
                self.pos += len;
                return Ok(head);
            }
            self.more(src)?;
        }
    }

    /// The next frame's header, checked against the role's masking and the frame limit.
    fn checked_head(&mut self, src: &mut impl Source) -> Result<FrameHead> {
        let head = self.head(src)?;
        if head.mask.is_some() != self.expect_masked {
            return Err(Error::Protocol(match self.expect_masked {
                true => "unmasked client frame",
                false => "masked server frame",
            }));
        }
        if head.len > self.max_frame {
            return Err(Error::TooBig(self.max_frame));
        }
        Ok(head)
    }

    /// A control frame's payload, as its message.
    fn control(&mut self, src: &mut impl Source, head: &FrameHead) -> Result<Message> {
        let mut payload = Vec::with_capacity(head.len as usize);
        self.payload(src, head, |chunk| {
            payload.extend_from_slice(chunk);
            Ok(())
        })?;
        match head.opcode {
            OpCode::Ping => Ok(Message::Ping(payload)),
            OpCode::Pong => Ok(Message::Pong(payload)),
            _ => Ok(Message::Close(parse_close(&payload)?)),
        }
    }

    /// Reads the next message (or control frame).
    pub(crate) fn next(&mut self, src: &mut impl Source) -> Result<Message> {
        loop {
            let head = self.checked_head(src)?;
            if head.opcode.is_control() {
                return self.control(src, &head);
            }
            match (&self.partial, head.opcode) {
                (None, OpCode::Continuation) => {
                    return Err(Error::Protocol("continuation without a message"))
                }
                (Some(_), OpCode::Text | OpCode::Binary) => {
                    return Err(Error::Protocol("new message inside a fragmented one"))
                }
                (Some(_), _) if head.rsv1 => {
                    return Err(Error::Protocol("RSV1 on a continuation frame"))
                }
                (None, op) => {
                    self.partial = Some(Partial {
                        text: op == OpCode::Text,
                        compressed: head.rsv1,
                    });
                    self.data.clear();
                }
                _ => {}
            }
            let (text, compressed) = match &self.partial {
                Some(p) => (p.text, p.compressed),
                None => (false, false),
            };
            if !compressed && self.data.len() as u64 + head.len > self.max_message {
                return Err(Error::TooBig(self.max_message));
            }
            self.data_payload(src, &head, text, compressed)?;
            if head.fin {
                return self.complete(text, compressed);
            }
        }
    }

    fn data_payload(
        &mut self,
        src: &mut impl Source,
        head: &FrameHead,
        text: bool,
        compressed: bool,
    ) -> Result<()> {
        let limit = self.max_message;
        let mut data = std::mem::take(&mut self.data);
        let mut utf8 = std::mem::take(&mut self.utf8);
        let r = match (self.inflater.take(), compressed) {
            (Some(mut inf), true) => {
                let r = self.payload(src, head, |chunk| {
                    inf.inflate(chunk, &mut data, limit)?;
                    match text && !utf8.feed(&data) {
                        true => Err(Error::InvalidUtf8),
                        false => Ok(()),
                    }
                });
                self.inflater = Some(inf);
                r
            }
            (inflater, _) => {
                self.inflater = inflater;
                self.plain_payload(src, head, &mut data, text.then_some(&mut utf8))
            }
        };
        self.data = data;
        self.utf8 = utf8;
        r
    }

    /// Reads an uncompressed data frame's payload onto `data`: large pieces straight from the
    /// source into it, unmasked and (text) checked in place.
    fn plain_payload(
        &mut self,
        src: &mut impl Source,
        head: &FrameHead,
        data: &mut Vec<u8>,
        mut utf8: Option<&mut Utf8Check>,
    ) -> Result<()> {
        let mut left = head.len;
        let mut offset = 0;
        while left > 0 {
            let start = data.len();
            if self.pos < self.end {
                let n = (self.end - self.pos).min(left as usize);
                data.extend_from_slice(&self.buf[self.pos..self.pos + n]);
                self.pos += n;
            } else if left as usize >= READ_BUF {
                let want = (left as usize).min(DIRECT_STEP);
                data.resize(start + want, 0);
                let n = src.fill(&mut data[start..], false)?;
                data.truncate(start + n);
                if n == 0 {
                    return Err(Error::Io(io::ErrorKind::UnexpectedEof.into()));
                }
            } else {
                self.more(src)?;
                continue;
            }
            let n = data.len() - start;
            if let Some(key) = head.mask {
                mask::apply(&mut data[start..], key, offset);
            }
            if let Some(check) = utf8.as_deref_mut() {
                if !check.feed(data) {
                    return Err(Error::InvalidUtf8);
                }
            }
            offset += n;
            left -= n as u64;
        }
        Ok(())
    }

    fn complete(&mut self, text: bool, compressed: bool) -> Result<Message> {
        self.partial = None;
        if compressed {
            if let Some(inf) = &mut self.inflater {
                inf.finish(&mut self.data, self.max_message)?;
            }
        }
        let data = std::mem::take(&mut self.data);
        if !text {
            return Ok(Message::Binary(data));
        }
        if !self.utf8.finish(&data) {
            return Err(Error::InvalidUtf8);
        }
        String::from_utf8(data)
            .map(Message::Text)
            .map_err(|_| Error::InvalidUtf8)
    }

    /// Reads a frame's payload, unmasked, handing it to `each` in pieces.
    fn payload(
        &mut self,
        src: &mut impl Source,
        head: &FrameHead,
        mut each: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut left = head.len;
        let mut offset = 0usize;
        let mut direct = Vec::new();
        while left > 0 {
            let piece: &mut [u8] = if self.pos < self.end {
                let n = (self.end - self.pos).min(left as usize);
                let p = &mut self.buf[self.pos..self.pos + n];
                self.pos += n;
                p
            } else if left as usize > READ_BUF {
                let want = (left as usize).min(DIRECT_STEP);
                direct.resize(want, 0);
                let n = src.fill(&mut direct, false)?;
                if n == 0 {
                    return Err(Error::Io(io::ErrorKind::UnexpectedEof.into()));
                }
                &mut direct[..n]
            } else {
                self.more(src)?;
                continue;
            };
            if let Some(key) = head.mask {
                mask::apply(piece, key, offset);
            }
            let n = piece.len();
            each(piece)?;
            offset += n;
            left -= n as u64;
        }
        Ok(())
    }
}
