//! The frame writer: a message or control frame encoded (compressed if agreed, masked on the
//! client side with a fresh key from the CSPRNG) and written with as few writes as it takes.

use std::io::{self, IoSlice, Write};

use super::deflate::Deflater;
use super::error::{Error, Result};
use super::frame::{encode_head, FrameHead, OpCode, MAX_HEAD_LEN};
use super::mask;
use super::prepared::Prepared;

/// A payload up to this size is copied behind its header and sent with one write; a larger
/// one (server side) goes out as a vectored write from where it is.
const COPY_MAX: usize = 16 * 1024;
/// Masked payloads are copied and masked in pieces of this size.
const MASK_STEP: usize = 16 * 1024;

/// A fresh masking key. The one place the client asks the CSPRNG for one (RFC 6455 §5.3: an
/// unpredictable key per frame).
fn mask_key() -> Result<[u8; 4]> {
    let mut key = [0u8; 4];
    moria_crypto::rng::fill(&mut key).map_err(|e| Error::Io(io::Error::other(e)))?;
    Ok(key)
}

/// One connection's outbound side.
pub(crate) struct Outbound {
    /// We are the client: every frame is masked.
    masks: bool,
    deflater: Option<Deflater>,
    buf: Vec<u8>,
    /// Our close frame has gone out (nothing may follow it).
    pub(crate) close_sent: bool,
    /// A write failed: the stream's framing is unknown, nothing more may be sent.
    broken: bool,
}

impl Outbound {
    /// A writer for the client (`masks`) or server side.
    pub(crate) fn new(masks: bool, deflater: Option<Deflater>) -> Outbound {
        Outbound {
            masks,
            deflater,
            buf: Vec::new(),
            close_sent: false,
            broken: false,
        }
    }

    /// Frees the frame buffer (a socket about to wait).
    pub(crate) fn release(&mut self) {
        self.buf = Vec::new();
    }

    /// Whether messages go out compressed.
    pub(crate) fn is_compressed(&self) -> bool {
        self.deflater.is_some()
    }

    /// Sends one whole message (`Text` or `Binary`, compressed when agreed) or control frame.
    pub(crate) fn send(
        &mut self,
        dst: &mut dyn Write,
        opcode: OpCode,
        payload: &[u8],
    ) -> Result<()> {
        if self.close_sent || self.broken {
            return Err(Error::Closed);
        }
        if opcode == OpCode::Close {
            self.close_sent = true;
        }
        let r = match &mut self.deflater {
            Some(d) if !opcode.is_control() => {
                let mut z = Vec::with_capacity(payload.len() / 2 + 16);
                d.compress(payload, &mut z);
                self.frame(dst, opcode, true, &z)
            }
            _ => self.frame(dst, opcode, false, payload),
        };
        if r.is_err() {
            self.broken = true;
        }
        if self.buf.capacity() > COPY_MAX + MAX_HEAD_LEN {
            self.buf = Vec::new();
        }
        r
    }

    /// Sends messages framed once for many sockets: their frames as they are, or, where this
    /// side masks or compresses, each payload framed as [`send`](Self::send) does.
    pub(crate) fn send_prepared(&mut self, dst: &mut dyn Write, msg: &Prepared) -> Result<()> {
        if self.masks || self.deflater.is_some() {
            return msg
                .messages()
                .try_for_each(|(opcode, payload)| self.send(dst, opcode, payload));
        }
        if self.close_sent || self.broken {
            return Err(Error::Closed);
        }
        let r = dst.write_all(msg.frames()).and_then(|()| dst.flush());
        if r.is_err() {
            self.broken = true;
        }
        Ok(r?)
    }

    fn frame(
        &mut self,
        dst: &mut dyn Write,
        opcode: OpCode,
        rsv1: bool,
        payload: &[u8],
    ) -> Result<()> {
        let mask = if self.masks { Some(mask_key()?) } else { None };
        let head = FrameHead {
            fin: true,
            rsv1,
            opcode,
            mask,
            len: payload.len() as u64,
        };
        self.buf.clear();
        encode_head(&mut self.buf, &head);
        match mask {
            None if payload.len() > COPY_MAX => write_both(dst, &self.buf, payload)?,
            None => {
                self.buf.extend_from_slice(payload);
                dst.write_all(&self.buf)?;
            }
            Some(key) => {
                let mut offset = 0;
                for piece in payload.chunks(MASK_STEP) {
                    let at = self.buf.len();
                    self.buf.extend_from_slice(piece);
                    mask::apply(&mut self.buf[at..], key, offset);
                    offset += piece.len();
                    dst.write_all(&self.buf)?;
                    self.buf.clear();
                }
                if payload.is_empty() {
                    dst.write_all(&self.buf)?;
                }
            }
        }
        dst.flush()?;
        Ok(())
    }
}

/// Writes `a` then `b`, vectored while both have bytes left.
fn write_both(dst: &mut dyn Write, mut a: &[u8], mut b: &[u8]) -> io::Result<()> {
    while !a.is_empty() {
        let n = dst.write_vectored(&[IoSlice::new(a), IoSlice::new(b)])?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let from_a = n.min(a.len());
        a = &a[from_a..];
        b = &b[n - from_a..];
    }
    dst.write_all(b)
}
