//! Body decoding for both roles: the bytes of one message body, delimited as its
//! [`BodyFraming`] says (moria-streams' `Limited` for a length, `ChunkedReader` for chunked),
//! over the connection's `BufRead`, which it hands back once the body is done; and what a
//! failed body read means, the same for a server reading a request and a client a response.

use std::io::{self, BufRead, Read};

use moria_streams::chunked::TrailerField;
use moria_streams::{ChunkedReader, Limited};

use super::framing::BodyFraming;

/// One message body over the reader `R` that carries it.
pub(crate) enum BodyDecoder<R> {
    /// No body: reads nothing.
    Empty(R),
    /// Exactly as many bytes as the length said.
    Length(Limited<R>),
    /// Chunk-decoded, trailers kept. Boxed: inline, the decoder's limits and buffers made it
    /// the largest variant by far, and building a bodyless request's decoder
    /// stored all of them (~15 instructions of every request); a chunked body pays one
    /// allocation more, beside the ones its line buffer makes.
    Chunked(Box<ChunkedReader<R>>),
    /// Everything until the peer closes.
    UntilClose(R),
}

/// What a failed body read reveals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyFault {
    /// The peer closed before the body was complete.
    Truncated,
    /// The chunked coding is malformed (the decoder's reason).
    BadChunk(String),
    /// The transport failed (a timeout, a reset): the error itself says which.
    Transport,
}

impl BodyFault {
    /// Classifies an error from a [`BodyDecoder`] read.
    pub(crate) fn of(e: &io::Error) -> BodyFault {
        match moria_streams::Error::from_io(e) {
            Some(
                moria_streams::Error::ShortRead { .. } | moria_streams::Error::ChunkedTruncated(_),
            ) => BodyFault::Truncated,
            Some(moria_streams::Error::Io(_)) | None => BodyFault::Transport,
            Some(other) => BodyFault::BadChunk(other.to_string()),
        }
    }
}

impl<R: BufRead> BodyDecoder<R> {
    /// The body framed by `framing` at the start of `reader`.
    pub(crate) fn new(reader: R, framing: BodyFraming) -> BodyDecoder<R> {
        match framing {
            BodyFraming::None | BodyFraming::Length(0) => BodyDecoder::Empty(reader),
            BodyFraming::Length(n) => BodyDecoder::Length(Limited::exact(reader, n)),
            BodyFraming::Chunked => BodyDecoder::Chunked(Box::new(ChunkedReader::new(reader))),
            BodyFraming::UntilClose => BodyDecoder::UntilClose(reader),
        }
    }

    /// Whether every byte of the body has been read (never, until the close, for a body that
    /// runs until it).
    pub(crate) fn is_complete(&self) -> bool {
        match self {
            BodyDecoder::Empty(_) => true,
            BodyDecoder::Length(l) => l.remaining() == 0,
            BodyDecoder::Chunked(c) => c.is_done(),
            BodyDecoder::UntilClose(_) => false,
        }
    }

    /// The trailer fields of a chunked body read to its end; none otherwise.
    pub(crate) fn trailers(&self) -> &[TrailerField] {
        match self {
            BodyDecoder::Chunked(c) => c.trailers(),
            _ => &[],
        }
    }

    /// The reader under the body.
    pub(crate) fn get_mut(&mut self) -> &mut R {
        match self {
            BodyDecoder::Empty(r) | BodyDecoder::UntilClose(r) => r,
            BodyDecoder::Length(l) => l.get_mut(),
            BodyDecoder::Chunked(c) => c.get_mut(),
        }
    }

    /// Ends the body and hands back the reader, positioned after what was read of it.
    pub(crate) fn into_inner(self) -> R {
        match self {
            BodyDecoder::Empty(r) | BodyDecoder::UntilClose(r) => r,
            BodyDecoder::Length(l) => l.into_inner(),
            BodyDecoder::Chunked(c) => (*c).into_inner(),
        }
    }
}

impl<R: BufRead> Read for BodyDecoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            BodyDecoder::Empty(_) => Ok(0),
            BodyDecoder::Length(l) => l.read(buf),
            BodyDecoder::Chunked(c) => c.read(buf),
            BodyDecoder::UntilClose(r) => r.read(buf),
        }
    }
}

impl<R: BufRead> BufRead for BodyDecoder<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            BodyDecoder::Empty(_) => Ok(&[]),
            BodyDecoder::Length(l) => l.fill_buf(),
            BodyDecoder::Chunked(c) => c.fill_buf(),
            BodyDecoder::UntilClose(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amt: usize) {
        match self {
            BodyDecoder::Empty(_) => {}
            BodyDecoder::Length(l) => l.consume(amt),
            BodyDecoder::Chunked(c) => c.consume(amt),
            BodyDecoder::UntilClose(r) => r.consume(amt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(wire: &[u8], framing: BodyFraming) -> (io::Result<Vec<u8>>, usize) {
        let mut body = BodyDecoder::new(wire, framing);
        let mut out = Vec::new();
        let r = body.read_to_end(&mut out).map(|_| out);
        (r, body.into_inner().len())
    }

    #[test]
    fn each_framing_reads_its_body_and_leaves_the_rest() {
        let (body, left) = read_all(b"abcdef", BodyFraming::Length(4));
        assert_eq!((body.unwrap(), left), (b"abcd".to_vec(), 2));
        let (body, left) = read_all(b"3\r\nabc\r\n0\r\n\r\nnext", BodyFraming::Chunked);
        assert_eq!((body.unwrap(), left), (b"abc".to_vec(), 4));
        let (body, left) = read_all(b"rest", BodyFraming::UntilClose);
        assert_eq!((body.unwrap(), left), (b"rest".to_vec(), 0));
        let (body, left) = read_all(b"next", BodyFraming::None);
        assert_eq!((body.unwrap(), left), (Vec::new(), 4));
    }

    #[test]
    fn faults_are_classified_alike_for_both_roles() {
        let (short, _) = read_all(b"ab", BodyFraming::Length(4));
        assert_eq!(BodyFault::of(&short.unwrap_err()), BodyFault::Truncated);
        let (bad, _) = read_all(b"zz\r\n", BodyFraming::Chunked);
        assert!(matches!(
            BodyFault::of(&bad.unwrap_err()),
            BodyFault::BadChunk(_)
        ));
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(BodyFault::of(&reset), BodyFault::Transport);
    }
}
