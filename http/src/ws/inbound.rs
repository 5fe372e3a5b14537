//! The message reader: frames from a byte source assembled into messages, with the rules
//! RFC 6455 puts on a stream of frames: masking by role, fragmentation with control frames
//! between the fragments, continuation without a start (or a start inside a message) → 1002,
//! text checked as it arrives (1007 at the first bad byte), frame and message limits (1009,
//! checked before anything is allocated), permessage-deflate's RSV1 and inflation.

use std::io;

use super::deflate::Inflater;
use super::error::{Error, Result};
use super::frame::{parse_head, FrameHead, OpCode, MAX_HEAD_LEN};
use super::mask;
use super::message::{parse_close, Message};
use super::utf8::Utf8Check;

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
}

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

/// A data message handed out piece by piece.
struct Streaming {
    /// Payload bytes of the current frame still to read.
    left: u64,
    mask: Option<[u8; 4]>,
    /// Offset into the current frame's payload (for unmasking).
    offset: usize,
    /// The current frame is the message's last.
    fin: bool,
    /// The inflater's tail has been fed (a compressed message's end).
    flushed: bool,
    /// Bytes handed out so far (the message limit applies).
    total: u64,
    /// Inflated bytes of `Inbound::data` from here on are still to hand out.
    pending: usize,
    /// The end of an unfinished character, for text (checked as it streams).
    carry: Vec<u8>,
}

/// What [`Inbound::stream_read`] found.
pub(crate) enum Step {
    /// This many bytes of the message.
    Data(usize),
    /// The message ended.
    End,
    /// A control frame between fragments.
    Control(Message),
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
        let between = self.is_between();
        let n = src.fill(&mut self.buf[self.end..], between)?;
        if n == 0 {
            return Err(match between {
                true => Error::Closed,
                false => Error::Io(io::ErrorKind::UnexpectedEof.into()),
            });
        }
        self.end += n;
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

    /// Waits for the next data message and starts streaming it: `Ok(None)` then (text or
    /// binary in `is_text`); a control frame first is returned as `Ok(Some(..))`.
    pub(crate) fn stream_start(
        &mut self,
        src: &mut impl Source,
        is_text: &mut bool,
    ) -> Result<Option<Message>> {
        let head = self.checked_head(src)?;
        if head.opcode.is_control() {
            return self.control(src, &head).map(Some);
        }
        if head.opcode == OpCode::Continuation {
            return Err(Error::Protocol("continuation without a message"));
        }
        *is_text = head.opcode == OpCode::Text;
        self.partial = Some(Partial {
            text: *is_text,
            compressed: head.rsv1,
        });
        self.data.clear();
        self.streaming = Some(Streaming {
            left: head.len,
            mask: head.mask,
            offset: 0,
            fin: head.fin,
            flushed: false,
            total: 0,
            pending: 0,
            carry: Vec::new(),
        });
        Ok(None)
    }

    /// Whether a streamed message has not been read to its end.
    pub(crate) fn is_streaming(&self) -> bool {
        self.streaming.is_some()
    }

    /// The next piece of the message being streamed, into `out` (`Data(0)`: bytes went to the
    /// inflater, ask again).
    pub(crate) fn stream_read(&mut self, src: &mut impl Source, out: &mut [u8]) -> Result<Step> {
        let Some(mut st) = self.streaming.take() else {
            return Ok(Step::End);
        };
        let r = self.stream_step(src, &mut st, out);
        if !matches!(r, Ok(Step::End) | Err(_)) {
            self.streaming = Some(st);
        } else {
            self.partial = None;
            self.data.clear();
        }
        r
    }

    fn stream_step(
        &mut self,
        src: &mut impl Source,
        st: &mut Streaming,
        out: &mut [u8],
    ) -> Result<Step> {
        let (text, compressed) = match &self.partial {
            Some(p) => (p.text, p.compressed),
            None => (false, false),
        };
        loop {
            if st.pending < self.data.len() {
                let n = (self.data.len() - st.pending).min(out.len());
                out[..n].copy_from_slice(&self.data[st.pending..st.pending + n]);
                st.pending += n;
                if st.pending == self.data.len() {
                    self.data.clear();
                    st.pending = 0;
                }
                return self.hand_out(st, &out[..n], text);
            }
            if st.left == 0 {
                if st.fin {
                    if compressed && !st.flushed {
                        st.flushed = true;
                        if let Some(inf) = &mut self.inflater {
                            let held_limit = self.max_message.saturating_sub(st.total);
                            inf.finish(&mut self.data, held_limit)?;
                        }
                        continue;
                    }
                    if !st.carry.is_empty() {
                        return Err(Error::InvalidUtf8);
                    }
                    return Ok(Step::End);
                }
                let head = self.checked_head(src)?;
                if head.opcode.is_control() {
                    return self.control(src, &head).map(Step::Control);
                }
                if head.opcode != OpCode::Continuation {
                    return Err(Error::Protocol("new message inside a fragmented one"));
                }
                if head.rsv1 {
                    return Err(Error::Protocol("RSV1 on a continuation frame"));
                }
                st.left = head.len;
                st.mask = head.mask;
                st.offset = 0;
                st.fin = head.fin;
                continue;
            }
            // Payload: straight into `out`, or through the inflater into `data`.
            if self.pos == self.end {
                let want = (st.left as usize).min(out.len());
                if want >= READ_BUF || compressed {
                    let n = src.fill(&mut out[..want.min(DIRECT_STEP)], false)?;
                    if n == 0 {
                        return Err(Error::Io(io::ErrorKind::UnexpectedEof.into()));
                    }
                    return self.payload_piece(st, out, n, text, compressed);
                }
                self.more(src)?;
            }
            let n = (self.end - self.pos).min(st.left as usize).min(out.len());
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            return self.payload_piece(st, out, n, text, compressed);
        }
    }

    /// `out[..n]` holds payload bytes just read: unmasked, then handed out (or inflated).
    fn payload_piece(
        &mut self,
        st: &mut Streaming,
        out: &mut [u8],
        n: usize,
        text: bool,
        compressed: bool,
    ) -> Result<Step> {
        if let Some(key) = st.mask {
            mask::apply(&mut out[..n], key, st.offset);
        }
        st.offset += n;
        st.left -= n as u64;
        match (&mut self.inflater, compressed) {
            (Some(inf), true) => {
                // What inflates is handed out on the next turns; the limit counts what is
                // held, and `hand_out` what went before.
                let held_limit = self.max_message.saturating_sub(st.total);
                inf.inflate(&out[..n], &mut self.data, held_limit)?;
                Ok(Step::Data(0))
            }
            _ => self.hand_out(st, &out[..n], text),
        }
    }

    /// Counts and checks what is handed out.
    fn hand_out(&mut self, st: &mut Streaming, piece: &[u8], text: bool) -> Result<Step> {
        st.total += piece.len() as u64;
        if st.total > self.max_message {
            return Err(Error::TooBig(self.max_message));
        }
        if text {
            st.carry.extend_from_slice(piece);
            match std::str::from_utf8(&st.carry) {
                Ok(_) => st.carry.clear(),
                Err(e) if e.error_len().is_some() => return Err(Error::InvalidUtf8),
                Err(e) => {
                    let keep = e.valid_up_to();
                    st.carry.drain(..keep);
                }
            }
        }
        Ok(Step::Data(piece.len()))
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
