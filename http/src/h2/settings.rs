//! SETTINGS (RFC 9113 §6.5): what the server announces, the limits behind it, and the peer's
//! settings as they arrive, each value checked as §6.5.2 requires.

use super::frame::{kind, put_header, ErrorCode};

/// Streams a client may have open at once (beyond: REFUSED_STREAM).
pub(crate) const MAX_CONCURRENT_STREAMS: u32 = 100;
/// Largest header list (decoded names and values plus 32 bytes each) a request may carry;
/// beyond it the stream is answered 431.
pub(crate) const MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
/// Largest frame payload the server accepts (the protocol's minimum, announced by default).
pub(crate) const MAX_FRAME_SIZE: usize = 16_384;
/// The window a stream starts with, both ways, until a SETTINGS says otherwise.
pub(crate) const DEFAULT_WINDOW: i64 = 65_535;
/// The receive window of the whole connection: how much request body the server buffers at
/// most across all streams.
pub(crate) const CONN_WINDOW: i64 = 1 << 20;
/// Largest flow-control window (RFC 9113 §6.9.1).
pub(crate) const MAX_WINDOW: i64 = (1 << 31) - 1;
/// HPACK dynamic table size the server's decoder keeps (the protocol's default).
pub(crate) const HEADER_TABLE_SIZE: usize = 4096;

/// The peer's settings the server must honour when it sends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerSettings {
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub initial_window: i64,
    /// SETTINGS_MAX_FRAME_SIZE.
    pub max_frame: usize,
}

impl Default for PeerSettings {
    fn default() -> Self {
        PeerSettings {
            initial_window: DEFAULT_WINDOW,
            max_frame: MAX_FRAME_SIZE,
        }
    }
}

impl PeerSettings {
    /// Applies a SETTINGS payload; returns the change of the initial window (to apply to every
    /// open stream), or the connection error a value breaks.
    pub(crate) fn apply(&mut self, payload: &[u8]) -> Result<i64, ErrorCode> {
        if !payload.len().is_multiple_of(6) {
            return Err(ErrorCode::FrameSize);
        }
        let mut delta = 0;
        for entry in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([entry[0], entry[1]]);
            let v = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
            match id {
                // SETTINGS_ENABLE_PUSH: 0 or 1.
                0x2 if v > 1 => return Err(ErrorCode::Protocol),
                // SETTINGS_INITIAL_WINDOW_SIZE.
                0x4 => {
                    if i64::from(v) > MAX_WINDOW {
                        return Err(ErrorCode::FlowControl);
                    }
                    delta += i64::from(v) - self.initial_window;
                    self.initial_window = i64::from(v);
                }
                // SETTINGS_MAX_FRAME_SIZE: 2^14 to 2^24-1.
                0x5 => {
                    if !(16_384..=16_777_215).contains(&v) {
                        return Err(ErrorCode::Protocol);
                    }
                    self.max_frame = v as usize;
                }
                // HEADER_TABLE_SIZE needs nothing (the encoder never indexes), nor do
                // MAX_CONCURRENT_STREAMS (the server pushes nothing), MAX_HEADER_LIST_SIZE
                // (advisory) and unknown ids (ignored, §6.5.2).
                _ => {}
            }
        }
        Ok(delta)
    }
}

/// Appends the server's SETTINGS frame.
pub(crate) fn put_server_settings(out: &mut Vec<u8>) {
    let entries: [(u16, u32); 3] = [
        (0x3, MAX_CONCURRENT_STREAMS),
        (0x6, MAX_HEADER_LIST_SIZE),
        (0x2, 0),
    ];
    put_header(out, entries.len() * 6, kind::SETTINGS, 0, 0);
    for (id, v) in entries {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u16, v: u32) -> Vec<u8> {
        let mut b = id.to_be_bytes().to_vec();
        b.extend_from_slice(&v.to_be_bytes());
        b
    }

    #[test]
    fn each_value_is_checked_as_the_rfc_says() {
        let mut s = PeerSettings::default();
        assert_eq!(s.apply(&entry(0x2, 2)), Err(ErrorCode::Protocol));
        assert_eq!(s.apply(&entry(0x4, 1 << 31)), Err(ErrorCode::FlowControl));
        assert_eq!(s.apply(&entry(0x5, 16_383)), Err(ErrorCode::Protocol));
        assert_eq!(s.apply(&entry(0x5, 1 << 24)), Err(ErrorCode::Protocol));
        assert_eq!(s.apply(&[0; 5]), Err(ErrorCode::FrameSize));
        assert_eq!(s.apply(&entry(0x4, 65_536)), Ok(1));
        assert_eq!(s.apply(&entry(0x99, 7)), Ok(0));
    }
}
