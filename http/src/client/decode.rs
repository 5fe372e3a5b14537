//! Content decoding of response bodies (gzip, deflate) behind the decompression-bomb guard.

use std::io::{self, Read};

use moria_streams::compress::Format;
use moria_streams::{Counting, DecompressReader};

use super::error::{Error, Violation};
use super::wire::Wire;

/// Expansion ratio past which a decoded body is refused as a bomb, once it is past
/// [`DEFAULT_BOMB_AFTER`].
pub const DEFAULT_BOMB_RATIO: u64 = 200;
/// Decoded bytes before the expansion ratio is checked (small bodies may compress very well).
pub const DEFAULT_BOMB_AFTER: u64 = 10 * 1024 * 1024;

/// The guard's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BombGuard {
    /// See [`DEFAULT_BOMB_RATIO`].
    pub ratio: u64,
    /// See [`DEFAULT_BOMB_AFTER`].
    pub after: u64,
}

/// The response body as the caller reads it: as sent, or decoded.
pub(crate) enum Content {
    /// No content coding (or decoding turned off).
    Identity(Box<Wire>),
    /// gzip or deflate, decoded.
    Decoded {
        reader: Box<DecompressReader<Counting<Wire>>>,
        guard: BombGuard,
        url: String,
    },
}

/// The decoder for a `Content-Encoding` value, if it is one this client decodes.
pub(crate) fn format_of(coding: &[u8]) -> Option<Format> {
    let coding = coding.trim_ascii();
    if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
        Some(Format::Gzip)
    } else if coding.eq_ignore_ascii_case(b"deflate") {
        Some(Format::Zlib)
    } else {
        None
    }
}

impl Content {
    /// Decodes `wire` as `format`.
    pub(crate) fn decoded(wire: Wire, format: Format, guard: BombGuard, url: String) -> Content {
        Content::Decoded {
            reader: Box::new(DecompressReader::new(format, Counting::new(wire), u64::MAX)),
            guard,
            url,
        }
    }

    /// The body on the wire.
    pub(crate) fn wire(&self) -> &Wire {
        match self {
            Content::Identity(w) => w,
            Content::Decoded { reader, .. } => reader.get_ref().get_ref(),
        }
    }
}

impl Read for Content {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Content::Identity(w) => w.read(buf),
            Content::Decoded { reader, guard, url } => {
                let n = reader.read(buf).map_err(|e| {
                    if Error::from_io(&e).is_some() {
                        return e;
                    }
                    let violation = Violation::BadContentCoding(e.to_string());
                    let url = url.clone();
                    Error::Protocol { url, violation }.into_io()
                })?;
                let decoded = reader.produced();
                let compressed = reader.get_ref().bytes_read();
                if decoded > guard.after && decoded > compressed.saturating_mul(guard.ratio) {
                    let url = url.clone();
                    return Err(Error::DecompressionBomb {
                        url,
                        decoded,
                        compressed,
                    }
                    .into_io());
                }
                Ok(n)
            }
        }
    }
}
