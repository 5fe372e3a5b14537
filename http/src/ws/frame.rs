//! The frame header (RFC 6455 §5.2): parsing one from bytes and encoding one, with the header
//! rules a frame breaks before its payload is read (reserved bits, unknown opcodes, control
//! frames fragmented or over 125 bytes, a 64-bit length with its top bit set).

use super::error::Error;

/// A frame's opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpCode {
    /// More of the message the last data frame started.
    Continuation,
    /// The first frame of a text message.
    Text,
    /// The first frame of a binary message.
    Binary,
    /// Close.
    Close,
    /// Ping.
    Ping,
    /// Pong.
    Pong,
}

impl OpCode {
    fn from_bits(b: u8) -> Option<OpCode> {
        Some(match b {
            0x0 => OpCode::Continuation,
            0x1 => OpCode::Text,
            0x2 => OpCode::Binary,
            0x8 => OpCode::Close,
            0x9 => OpCode::Ping,
            0xA => OpCode::Pong,
            _ => return None,
        })
    }

    fn bits(self) -> u8 {
        match self {
            OpCode::Continuation => 0x0,
            OpCode::Text => 0x1,
            OpCode::Binary => 0x2,
            OpCode::Close => 0x8,
            OpCode::Ping => 0x9,
            OpCode::Pong => 0xA,
        }
    }

    /// Whether this is a control frame (close, ping, pong).
    pub(crate) fn is_control(self) -> bool {
        matches!(self, OpCode::Close | OpCode::Ping | OpCode::Pong)
    }
}

/// The largest payload of a control frame (§5.5).
pub(crate) const MAX_CONTROL_PAYLOAD: u64 = 125;
/// The longest frame header: 2 bytes, an 8-byte length, a 4-byte mask.
pub(crate) const MAX_HEAD_LEN: usize = 14;

/// A parsed frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameHead {
    /// The last frame of its message.
    pub fin: bool,
    /// RSV1: the message is compressed (permessage-deflate), on its first frame.
    pub rsv1: bool,
    /// The opcode.
    pub opcode: OpCode,
    /// The masking key, if the frame is masked.
    pub mask: Option<[u8; 4]>,
    /// The payload length.
    pub len: u64,
}

/// Parses a header from the front of `buf`: `Ok(None)` when more bytes are needed, else the
/// header and its length. `rsv1_allowed`: permessage-deflate was negotiated.
pub(crate) fn parse_head(
    buf: &[u8],
    rsv1_allowed: bool,
) -> Result<Option<(FrameHead, usize)>, Error> {
    if buf.len() < 2 {
        return Ok(None);
    }
    let (b0, b1) = (buf[0], buf[1]);
    let fin = b0 & 0x80 != 0;
    let rsv1 = b0 & 0x40 != 0;
    if b0 & 0x30 != 0 || (rsv1 && !rsv1_allowed) {
        return Err(Error::Protocol("reserved bit set"));
    }
    let opcode = OpCode::from_bits(b0 & 0x0F).ok_or(Error::Protocol("unknown opcode"))?;
    let masked = b1 & 0x80 != 0;
    let (len, mut at) = match b1 & 0x7F {
        126 => match buf.get(2..4) {
            Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => {
                let mut n = [0u8; 8];
                n.copy_from_slice(b);
                (u64::from_be_bytes(n), 10)
            }
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    if len >> 63 != 0 {
        return Err(Error::Protocol(
            "frame length with its most significant bit set",
        ));
    }
    if opcode.is_control() {
        if !fin {
            return Err(Error::Protocol("fragmented control frame"));
        }
        if len > MAX_CONTROL_PAYLOAD {
            return Err(Error::Protocol("control frame over 125 bytes"));
        }
        if rsv1 {
            return Err(Error::Protocol("compressed control frame"));
        }
    }
    let mask = if masked {
        let Some(m) = buf.get(at..at + 4) else {
            return Ok(None);
        };
        at += 4;
        Some([m[0], m[1], m[2], m[3]])
    } else {
        None
    };
    Ok(Some((
        FrameHead {
            fin,
            rsv1,
            opcode,
            mask,
            len,
        },
        at,
    )))
}

/// Appends the header of a frame to `out`.
pub(crate) fn encode_head(out: &mut Vec<u8>, head: &FrameHead) {
    let mut b0 = head.opcode.bits();
    if head.fin {
        b0 |= 0x80;
    }
    if head.rsv1 {
        b0 |= 0x40;
    }
    let m = if head.mask.is_some() { 0x80 } else { 0 };
    out.push(b0);
    match head.len {
        n if n < 126 => out.push(m | n as u8),
        n if n <= u64::from(u16::MAX) => {
            out.push(m | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(m | 127);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
    if let Some(key) = head.mask {
        out.extend_from_slice(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(opcode: OpCode, len: u64, mask: Option<[u8; 4]>) -> FrameHead {
        FrameHead {
            fin: true,
            rsv1: false,
            opcode,
            mask,
            len,
        }
    }

    #[test]
    fn every_length_form_round_trips() {
        for len in [0, 125, 126, 65535, 65536, 1 << 40] {
            for mask in [None, Some([1, 2, 3, 4])] {
                let h = head(OpCode::Binary, len, mask);
                let mut out = Vec::new();
                encode_head(&mut out, &h);
                assert_eq!(parse_head(&out, false).unwrap(), Some((h, out.len())));
                assert_eq!(parse_head(&out[..out.len() - 1], false).unwrap(), None);
            }
        }
    }

    #[test]
    fn header_rules_are_protocol_errors() {
        let bad: [&[u8]; 6] = [
            &[0x81 | 0x20, 0],                       // RSV2
            &[0x83, 0],                              // opcode 3
            &[0x09, 0],                              // fragmented ping
            &[0x89, 126, 0, 126],                    // ping of 126 bytes
            &[0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0], // 2^63
            &[0xC1, 0],                              // RSV1 without deflate
        ];
        for b in bad {
            assert!(
                matches!(parse_head(b, false), Err(Error::Protocol(_))),
                "{b:?}"
            );
        }
        assert!(parse_head(&[0xC1, 0], true).is_ok());
        assert!(matches!(
            parse_head(&[0xC9, 0], true),
            Err(Error::Protocol(_))
        ));
    }
}
