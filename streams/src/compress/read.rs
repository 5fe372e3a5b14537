//! Read-side compression: [`CompressReader`] and the bounded [`DecompressReader`].

use std::io::{self, BufRead, Read};

use flate2::bufread;
use flate2::Compression;

use super::tagged::{codec_error, Tagged};
use super::{Codec, Format};
use crate::Error;

/// The read-side encoders.
type Encoders<R> =
    Codec<bufread::GzEncoder<R>, bufread::ZlibEncoder<R>, bufread::DeflateEncoder<R>>;

/// Reads plain data from a `BufRead` and yields it compressed.
#[derive(Debug)]
pub struct CompressReader<R> {
    codec: Encoders<R>,
}

impl<R: BufRead> CompressReader<R> {
    /// Compresses what is read from `inner` into `format` at `level`.
    pub fn new(format: Format, inner: R, level: Compression) -> Self {
        let codec = match format {
            Format::Gzip => Codec::Gzip(bufread::GzEncoder::new(inner, level)),
            Format::Zlib => Codec::Zlib(bufread::ZlibEncoder::new(inner, level)),
            Format::Deflate => Codec::Deflate(bufread::DeflateEncoder::new(inner, level)),
        };
        CompressReader { codec }
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        each!(&self.codec, c => c.get_ref())
    }

    /// Gives back the inner reader.
    pub fn into_inner(self) -> R {
        each!(self.codec, c => c.into_inner())
    }
}

impl<R: BufRead> Read for CompressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        each!(&mut self.codec, c => c.read(buf))
    }
}

/// The read-side decoders, over the tagged inner reader.
type Decoders<R> = Codec<
    bufread::MultiGzDecoder<Tagged<R>>,
    bufread::ZlibDecoder<Tagged<R>>,
    bufread::DeflateDecoder<Tagged<R>>,
>;

/// Reads compressed data from a `BufRead` and yields it decompressed, up to a size limit.
///
/// It reads no further into `inner` than the compressed data needs (for zlib and deflate; gzip
/// goes on to look for a further member until `inner` ends).
#[derive(Debug)]
pub struct DecompressReader<R> {
    codec: Decoders<R>,
    format: Format,
    produced: u64,
    limit: u64,
}

impl<R: BufRead> DecompressReader<R> {
    /// Decompresses `format` data from `inner`, failing once more than `limit` bytes come out.
    pub fn new(format: Format, inner: R, limit: u64) -> Self {
        let inner = Tagged::new(inner);
        let codec = match format {
            Format::Gzip => Codec::Gzip(bufread::MultiGzDecoder::new(inner)),
            Format::Zlib => Codec::Zlib(bufread::ZlibDecoder::new(inner)),
            Format::Deflate => Codec::Deflate(bufread::DeflateDecoder::new(inner)),
        };
        DecompressReader {
            codec,
            format,
            produced: 0,
            limit,
        }
    }

    /// Decompressed bytes yielded so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &each!(&self.codec, c => c.get_ref()).inner
    }

    /// Gives back the inner reader.
    pub fn into_inner(self) -> R {
        each!(self.codec, c => c.into_inner()).inner
    }

    fn read_codec(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        each!(&mut self.codec, c => c.read(buf)).map_err(|e| {
            let failed = each!(&self.codec, c => c.get_ref().failed);
            codec_error(self.format, failed, e)
        })
    }
}

impl<R: BufRead> Read for DecompressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.produced >= self.limit {
            let mut probe = [0u8; 1];
            return match self.read_codec(&mut probe)? {
                0 => Ok(0),
                _ => Err(Error::DecompressedTooLarge {
                    format: self.format.name(),
                    limit: self.limit,
                }
                .into()),
            };
        }
        let room =
            usize::try_from(self.limit - self.produced).map_or(buf.len(), |r| r.min(buf.len()));
        let n = self.read_codec(&mut buf[..room])?;
        self.produced += n as u64;
        Ok(n)
    }
}
