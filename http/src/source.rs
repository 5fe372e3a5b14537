//! The bytes a streamed response reads from ([`Source`]: a file or any seekable reader) and the
//! multipart/byteranges body written from one ([`Ranges`]), below both `response` (which holds
//! a `Ranges` body) and `stream` (which builds one).

use std::io::{self, Read, Seek, SeekFrom};

use moria_streams::File;

use crate::transport::Transport;

/// Anything readable and seekable.
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// The bytes `respond_stream` serves: a file (sent with `sendfile` on plain TCP) or any
/// seekable reader.
pub enum Source {
    /// A file; ranges are sent without copying through user space where the transport allows.
    File(File),
    /// Any seekable reader.
    Seekable(Box<dyn ReadSeek>),
}

impl From<File> for Source {
    fn from(f: File) -> Source {
        Source::File(f)
    }
}

impl Source {
    /// Wraps any seekable reader.
    pub fn seekable(r: impl ReadSeek + 'static) -> Source {
        Source::Seekable(Box::new(r))
    }
}

/// A multipart/byteranges body.
pub(crate) struct Ranges {
    /// Where every part's bytes come from.
    pub(crate) source: Source,
    /// Each part: its part head, then the first and last byte offsets (inclusive).
    pub(crate) parts: Vec<(Vec<u8>, u64, u64)>,
    /// The closing delimiter.
    pub(crate) trailer: Vec<u8>,
}

impl Ranges {
    /// Total body length.
    pub(crate) fn len(&self) -> u64 {
        self.parts
            .iter()
            .map(|(h, a, b)| h.len() as u64 + (b - a + 1))
            .sum::<u64>()
            + self.trailer.len() as u64
    }

    /// Writes every part to the transport (out of line: its copy buffer would make any caller's
    /// frame large).
    #[inline(never)]
    pub(crate) fn write_to(self, out: &mut dyn Transport) -> io::Result<()> {
        let Ranges {
            mut source,
            parts,
            trailer,
        } = self;
        for (head, a, b) in parts {
            out.write_all(&head)?;
            let len = b - a + 1;
            match &mut source {
                Source::File(f) => out.send_file(f, a, len)?,
                Source::Seekable(r) => {
                    r.seek(SeekFrom::Start(a))?;
                    let copied = io::copy(&mut r.take(len), &mut *out)?;
                    if copied != len {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "source shorter than its size",
                        ));
                    }
                }
            }
        }
        out.write_all(&trailer)
    }
}
