//! Write-side compression: [`CompressWriter`] and the bounded [`DecompressWriter`].

use std::io::{self, Write};

use flate2::write;
use flate2::Compression;

use super::tagged::{codec_error, Tagged};
use super::{Codec, Format};
use crate::Error;

/// Compresses what is written to it and writes the result to an inner writer.
///
/// Call [`CompressWriter::finish`] to write the end of the stream; dropping it finishes too but
/// ignores errors.
#[derive(Debug)]
pub struct CompressWriter<W: Write> {
    codec: Codec<write::GzEncoder<W>, write::ZlibEncoder<W>, write::DeflateEncoder<W>>,
}

impl<W: Write> CompressWriter<W> {
    /// Compresses into `inner` as `format` at `level`.
    pub fn new(format: Format, inner: W, level: Compression) -> Self {
        let codec = match format {
            Format::Gzip => Codec::Gzip(write::GzEncoder::new(inner, level)),
            Format::Zlib => Codec::Zlib(write::ZlibEncoder::new(inner, level)),
            Format::Deflate => Codec::Deflate(write::DeflateEncoder::new(inner, level)),
        };
        CompressWriter { codec }
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        each!(&self.codec, c => c.get_ref())
    }

    /// Writes the end of the compressed stream and gives back the inner writer.
    pub fn finish(self) -> io::Result<W> {
        each!(self.codec, c => c.finish())
    }
}

impl<W: Write> Write for CompressWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        each!(&mut self.codec, c => c.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        each!(&mut self.codec, c => c.flush())
    }
}

/// Counts decompressed bytes on their way to the inner writer and refuses those past a limit.
#[derive(Debug)]
struct Bounded<W> {
    inner: W,
    written: u64,
    limit: u64,
    format: Format,
}

impl<W: Write> Write for Bounded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() as u64 > self.limit - self.written {
            return Err(Error::DecompressedTooLarge {
                format: self.format.name(),
                limit: self.limit,
            }
            .into());
        }
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The bounded, tagged sink the write-side decoders write into.
type Sink<W> = Tagged<Bounded<W>>;

/// The write-side decoders.
type Decoders<W> = Codec<
    write::MultiGzDecoder<Sink<W>>,
    write::ZlibDecoder<Sink<W>>,
    write::DeflateDecoder<Sink<W>>,
>;

/// Decompresses what is written to it and writes the plain data to an inner writer, up to a
/// size limit.
///
/// Call [`DecompressWriter::finish`]: it checks that the compressed stream was complete.
#[derive(Debug)]
pub struct DecompressWriter<W: Write> {
    codec: Decoders<W>,
    format: Format,
}

impl<W: Write> DecompressWriter<W> {
    /// Decompresses `format` data into `inner`, failing once more than `limit` bytes come out.
    pub fn new(format: Format, inner: W, limit: u64) -> Self {
        let sink = Tagged::new(Bounded {
            inner,
            written: 0,
            limit,
            format,
        });
        let codec = match format {
            Format::Gzip => Codec::Gzip(write::MultiGzDecoder::new(sink)),
            Format::Zlib => Codec::Zlib(write::ZlibDecoder::new(sink)),
            Format::Deflate => Codec::Deflate(write::DeflateDecoder::new(sink)),
        };
        DecompressWriter { codec, format }
    }

    /// Decompressed bytes written to the inner writer so far.
    pub fn produced(&self) -> u64 {
        each!(&self.codec, c => c.get_ref().inner.written)
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &each!(&self.codec, c => c.get_ref()).inner.inner
    }

    /// Checks the compressed stream is complete, flushes and gives back the inner writer.
    pub fn finish(self) -> io::Result<W> {
        let format = self.format;
        let mut codec = self.codec;
        let result = each!(&mut codec, c => c.try_finish());
        let failed = each!(&codec, c => c.get_ref().failed);
        result.map_err(|e| codec_error(format, failed, e))?;
        let sink = each!(codec, c => c.finish()).map_err(|e| codec_error(format, false, e))?;
        Ok(sink.inner.inner)
    }

    fn map(&self, err: io::Error) -> io::Error {
        let failed = each!(&self.codec, c => c.get_ref().failed);
        codec_error(self.format, failed, err)
    }
}

impl<W: Write> Write for DecompressWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = each!(&mut self.codec, c => c.write(buf));
        match result {
            Ok(0) if !buf.is_empty() => Err(self.map(io::ErrorKind::WriteZero.into())),
            Ok(n) => Ok(n),
            Err(e) => Err(self.map(e)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = each!(&mut self.codec, c => c.flush());
        result.map_err(|e| self.map(e))
    }
}
