//! Streaming a data message ([`Inbound::stream_start`], [`Inbound::stream_read`]): its payload
//! handed out piece by piece as it arrives (inflated first when compressed), with the message
//! limit and the text check applied to what is handed out, and control frames between its
//! fragments returned as they come.

use std::io;

use super::{Inbound, Partial, Source, DIRECT_STEP, READ_BUF};
use crate::ws::error::{Error, Result};
use crate::ws::frame::OpCode;
use crate::ws::mask;
use crate::ws::message::Message;

/// A data message handed out piece by piece.
pub(super) struct Streaming {
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
}
