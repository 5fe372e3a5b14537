//! HTTP/2 frames on the wire (RFC 9113 §4 and §6): the 9-byte frame header, frame types, flags,
//! error codes, padding, and the encoders for every frame the server sends.

/// Length of a frame header.
pub(crate) const HEADER_LEN: usize = 9;

/// Frame types (RFC 9113 §6).
pub(crate) mod kind {
    pub(crate) const DATA: u8 = 0x0;
    pub(crate) const HEADERS: u8 = 0x1;
    pub(crate) const PRIORITY: u8 = 0x2;
    pub(crate) const RST_STREAM: u8 = 0x3;
    pub(crate) const SETTINGS: u8 = 0x4;
    pub(crate) const PUSH_PROMISE: u8 = 0x5;
    pub(crate) const PING: u8 = 0x6;
    pub(crate) const GOAWAY: u8 = 0x7;
    pub(crate) const WINDOW_UPDATE: u8 = 0x8;
    pub(crate) const CONTINUATION: u8 = 0x9;
}

/// Frame flags (RFC 9113 §6).
pub(crate) mod flag {
    pub(crate) const END_STREAM: u8 = 0x1;
    pub(crate) const ACK: u8 = 0x1;
    pub(crate) const END_HEADERS: u8 = 0x4;
    pub(crate) const PADDED: u8 = 0x8;
    pub(crate) const PRIORITY: u8 = 0x20;
}

/// Error codes of RST_STREAM and GOAWAY (RFC 9113 §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum ErrorCode {
    NoError = 0x0,
    Protocol = 0x1,
    Internal = 0x2,
    FlowControl = 0x3,
    StreamClosed = 0x5,
    FrameSize = 0x6,
    RefusedStream = 0x7,
    Cancel = 0x8,
    Compression = 0x9,
    EnhanceYourCalm = 0xb,
}

/// A parsed frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    /// Payload length.
    pub len: usize,
    /// Frame type.
    pub kind: u8,
    /// Flags.
    pub flags: u8,
    /// Stream identifier (the reserved bit cleared).
    pub stream: u32,
}

impl FrameHeader {
    /// Parses the 9 header bytes.
    pub(crate) fn parse(b: &[u8; HEADER_LEN]) -> FrameHeader {
        FrameHeader {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }

    /// Whether `f` is set.
    pub(crate) fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Appends a frame header.
pub(crate) fn put_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// The payload of a frame that may be PADDED, without its padding (RFC 9113 §6.1, §6.2):
/// a pad length as long as the payload or longer is a PROTOCOL_ERROR.
pub(crate) fn unpad(flags: u8, payload: &[u8]) -> Result<&[u8], ErrorCode> {
    if flags & flag::PADDED == 0 {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or(ErrorCode::FrameSize)?;
    let keep = rest
        .len()
        .checked_sub(usize::from(pad))
        .ok_or(ErrorCode::Protocol)?;
    Ok(&rest[..keep])
}

/// Reads a 31-bit big-endian value at the start of `b` (4 bytes at least).
pub(crate) fn u31(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
}

/// Appends a PING with ACK echoing `data`.
pub(crate) fn put_ping_ack(out: &mut Vec<u8>, data: &[u8]) {
    put_header(out, 8, kind::PING, flag::ACK, 0);
    out.extend_from_slice(data);
}

/// Appends a WINDOW_UPDATE.
pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends a RST_STREAM.
pub(crate) fn put_rst(out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
    put_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&(code as u32).to_be_bytes());
}

/// Appends a GOAWAY naming the last stream the server processed.
pub(crate) fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: ErrorCode) {
    put_header(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&(code as u32).to_be_bytes());
}

/// Appends a header block as HEADERS plus as many CONTINUATION frames as `max_frame` needs.
pub(crate) fn put_header_block(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    max_frame: usize,
) {
    let mut chunks = block.chunks(max_frame).peekable();
    let mut first = true;
    if block.is_empty() {
        let flags = flag::END_HEADERS | if end_stream { flag::END_STREAM } else { 0 };
        put_header(out, 0, kind::HEADERS, flags, stream);
        return;
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let mut flags = if last { flag::END_HEADERS } else { 0 };
        let k = if first {
            if end_stream {
                flags |= flag::END_STREAM;
            }
            kind::HEADERS
        } else {
            kind::CONTINUATION
        };
        put_header(out, chunk.len(), k, flags, stream);
        out.extend_from_slice(chunk);
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_the_reserved_bit_is_ignored() {
        let mut out = Vec::new();
        put_header(&mut out, 0x01_02_03, kind::HEADERS, flag::END_HEADERS, 7);
        out[5] |= 0x80;
        let h = FrameHeader::parse(out[..9].try_into().unwrap());
        assert_eq!((h.len, h.kind, h.flags, h.stream), (0x01_02_03, 1, 4, 7));
    }

    #[test]
    fn padding_longer_than_the_payload_is_a_protocol_error() {
        assert_eq!(unpad(flag::PADDED, &[2, b'a', 0, 0]), Ok(&b"a"[..]));
        assert_eq!(unpad(flag::PADDED, &[3, b'a']), Err(ErrorCode::Protocol));
        assert_eq!(unpad(flag::PADDED, &[]), Err(ErrorCode::FrameSize));
        assert_eq!(unpad(0, b"ab"), Ok(&b"ab"[..]));
    }

    #[test]
    fn a_long_block_is_split_into_continuations() {
        let mut out = Vec::new();
        put_header_block(&mut out, 1, &[7u8; 10], true, 4);
        let kinds: Vec<(u8, u8)> = [0, 13, 26]
            .iter()
            .map(|&i| (out[i + 3], out[i + 4]))
            .collect();
        assert_eq!(
            kinds,
            [
                (kind::HEADERS, flag::END_STREAM),
                (kind::CONTINUATION, 0),
                (kind::CONTINUATION, flag::END_HEADERS)
            ]
        );
    }
}
