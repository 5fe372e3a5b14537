//! Content decoding of response bodies (gzip, deflate) behind the decompression-bomb guard.

use std::io::{self, BufRead, Read};

use moria_streams::compress::Format;
use moria_streams::{Counting, DecompressReader};

use super::body_reader::BodyReader;
use super::error::{Error, Violation};

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
    Identity(Box<BodyReader>),
    /// gzip or deflate, decoded.
    Decoded {
        decoder: Box<Decoder>,
        guard: BombGuard,
        url: String,
    },
}

/// A content coding this client decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    /// `gzip` (and `x-gzip`).
    Gzip,
    /// `deflate`: zlib-wrapped as RFC 9110 §8.4.1.2 says, or raw deflate as some servers send.
    Deflate,
}

/// The content coding named by a `Content-Encoding` value, if it is one this client decodes.
pub(crate) fn coding_of(value: &[u8]) -> Option<Coding> {
    let value = value.trim_ascii();
    if value.eq_ignore_ascii_case(b"gzip") || value.eq_ignore_ascii_case(b"x-gzip") {
        Some(Coding::Gzip)
    } else if value.eq_ignore_ascii_case(b"deflate") {
        Some(Coding::Deflate)
    } else {
        None
    }
}

/// Whether `head` starts a zlib stream (RFC 1950 §2.2): method 8 (deflate), a window of at
/// most 32 KiB, and a header check that makes `CMF * 256 + FLG` a multiple of 31. A raw deflate
/// stream from a real encoder never starts so (that would be a non-final stored block with
/// padding bits set).
fn is_zlib_header(head: &[u8]) -> bool {
    match *head {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(cmf) * 256 + u16::from(flg)) % 31 == 0
        }
        _ => false,
    }
}

/// A body's decoder. A `deflate` body waits for its first read, which reads two bytes ahead
/// to tell zlib from raw deflate.
// The whole decoder lives in a Box (`Content::Decoded`); the running variant is the larger
// one on flate2's zlib-rs backend, and boxing it too would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Decoder {
    /// A `deflate` body before its first read (`None` only while its decoder is being set up).
    Sniffing(Option<Box<Ahead>>),
    /// Decoding. Both boxed: zlib-rs keeps the decompressor's state inline (several hundred
    /// bytes), and the body reader is large too.
    Running(Box<DecompressReader<Ahead>>),
}

/// The body on the wire (counted, for the bomb guard), behind up to two bytes read ahead and
/// given back first.
pub(crate) struct Ahead {
    head: [u8; 2],
    /// Bytes in `head`.
    len: usize,
    /// Bytes of `head` already given back.
    pos: usize,
    framed: Counting<BodyReader>,
}

impl Ahead {
    fn new(framed: BodyReader) -> Ahead {
        Ahead {
            head: [0; 2],
            len: 0,
            pos: 0,
            framed: Counting::new(framed),
        }
    }

    /// Reads until two bytes are ahead or the body ends (kept across a failed call).
    fn read_ahead(&mut self) -> io::Result<&[u8]> {
        while self.len < self.head.len() {
            match self.framed.read(&mut self.head[self.len..])? {
                0 => break,
                n => self.len += n,
            }
        }
        Ok(&self.head[..self.len])
    }
}

impl Read for Ahead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.len {
            return self.framed.read(buf);
        }
        let n = (self.len - self.pos).min(buf.len());
        buf[..n].copy_from_slice(&self.head[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl BufRead for Ahead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.len {
            return self.framed.fill_buf();
        }
        Ok(&self.head[self.pos..self.len])
    }

    fn consume(&mut self, amt: usize) {
        if self.pos == self.len {
            self.framed.consume(amt);
        } else {
            self.pos = (self.pos + amt).min(self.len);
        }
    }
}

impl Decoder {
    /// Decodes as `format` (unbounded here: [`BombGuard`] bounds it by ratio).
    fn running(format: Format, body: Ahead) -> Decoder {
        Decoder::Running(Box::new(DecompressReader::new(format, body, u64::MAX)))
    }

    /// The decoder, started if it was waiting for a `deflate` body's first bytes.
    fn start(&mut self) -> io::Result<&mut DecompressReader<Ahead>> {
        if let Decoder::Sniffing(slot) = self {
            if let Some(body) = slot {
                let head = body.read_ahead()?;
                // Under two bytes is no raw deflate either: decoded as the standard's zlib.
                let format = if head.len() < 2 || is_zlib_header(head) {
                    Format::Zlib
                } else {
                    Format::Deflate
                };
                if let Some(body) = slot.take() {
                    *self = Decoder::running(format, *body);
                }
            }
        }
        match self {
            Decoder::Running(reader) => Ok(reader),
            Decoder::Sniffing(_) => Err(io::Error::other("the content decoder failed to start")),
        }
    }

    /// The counted body.
    fn body(&self) -> Option<&Counting<BodyReader>> {
        match self {
            Decoder::Sniffing(body) => body.as_ref().map(|b| &b.framed),
            Decoder::Running(reader) => Some(&reader.get_ref().framed),
        }
    }
}

impl Content {
    /// Decodes `framed` as `coding`.
    pub(crate) fn decoded(
        framed: BodyReader,
        coding: Coding,
        guard: BombGuard,
        url: String,
    ) -> Content {
        let body = Ahead::new(framed);
        let decoder = match coding {
            Coding::Gzip => Decoder::running(Format::Gzip, body),
            Coding::Deflate => Decoder::Sniffing(Some(Box::new(body))),
        };
        Content::Decoded {
            decoder: Box::new(decoder),
            guard,
            url,
        }
    }

    /// The body on the wire (`None` only while a decoder is being set up).
    pub(crate) fn body_reader(&self) -> Option<&BodyReader> {
        match self {
            Content::Identity(w) => Some(w),
            Content::Decoded { decoder, .. } => decoder.body().map(Counting::get_ref),
        }
    }
}

impl Read for Content {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Content::Identity(w) => w.read(buf),
            Content::Decoded {
                decoder,
                guard,
                url,
            } => {
                if buf.is_empty() {
                    return Ok(0);
                }
                let bad = |e: io::Error| {
                    if Error::from_io(&e).is_some() {
                        return e;
                    }
                    let violation = Violation::BadContentCoding(e.to_string());
                    let url = url.clone();
                    Error::Protocol { url, violation }.into_io()
                };
                let reader = decoder.start().map_err(bad)?;
                let n = reader.read(buf).map_err(bad)?;
                let decoded = reader.produced();
                let compressed = reader.get_ref().framed.bytes_read();
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

#[cfg(test)]
mod tests {
    use super::is_zlib_header;

    #[test]
    fn zlib_headers_are_told_from_raw_deflate() {
        // The four FLEVEL headers zlib writes with a 32 KiB window, and a 256-byte window.
        for head in [
            [0x78, 0x01],
            [0x78, 0x5e],
            [0x78, 0x9c],
            [0x78, 0xda],
            [0x08, 0x1d],
        ] {
            assert!(is_zlib_header(&head), "{head:02x?}");
        }
        // A bad check, a window over 32 KiB, another method, raw deflate block starts
        // (final stored, fixed and dynamic), and too few bytes.
        for head in [
            &[0x78, 0x9d][..],
            &[0x88, 0x98],
            &[0x79, 0x18],
            &[0x01, 0x00],
        ] {
            assert!(!is_zlib_header(head), "{head:02x?}");
        }
        for head in [&[0x4b, 0x4c][..], &[0xed, 0xbd], &[0x78], &[]] {
            assert!(!is_zlib_header(head), "{head:02x?}");
        }
    }
}
