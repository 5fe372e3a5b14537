//! The request going out: its body (bytes; a file, by `sendfile` on plain TCP; or a reader
//! sent with Content-Length or chunked) and the writes of head and body, telling the caller's
//! read errors from the connection's.

use std::io::{self, Read, Write};

use moria_streams::{ChunkedWriter, File, TransferExt};

use super::conn::Transport;

use crate::h1::Length;

/// Copy buffer for streamed request bodies; also the largest body sent in one write with its
/// head.
const COPY_BUFFER: usize = 16 * 1024;

/// What a request sends after its head.
pub(crate) enum RequestBody {
    /// Nothing.
    Empty,
    /// These bytes (replayable: redirects and retries can send them again).
    Bytes(Vec<u8>),
    /// A file from its current position, `len` bytes: `sendfile` on plain TCP. Sent once.
    File {
        /// The file.
        file: File,
        /// Bytes to send.
        len: u64,
    },
    /// A reader, sent once: with its length as Content-Length, or chunked when unknown.
    Reader {
        /// The source.
        reader: Box<dyn Read + Send>,
        /// Its length, if known.
        len: Option<u64>,
    },
}

impl RequestBody {
    /// Whether the body can be sent again.
    pub(crate) fn replayable(&self) -> bool {
        matches!(self, RequestBody::Empty | RequestBody::Bytes(_))
    }
}

/// How the head frames `body` for `method`: POST, PUT and PATCH always declare a length.
pub(crate) fn length_of(method: &str, body: &RequestBody) -> Length {
    match body {
        RequestBody::Empty if matches!(method, "POST" | "PUT" | "PATCH") => Length::Known(0),
        RequestBody::Empty => Length::Bodyless,
        RequestBody::Bytes(b) => Length::Known(b.len() as u64),
        RequestBody::Reader { len: Some(n), .. } | RequestBody::File { len: n, .. } => {
            Length::Known(*n)
        }
        RequestBody::Reader { len: None, .. } => Length::Chunked,
    }
}

/// Why sending failed.
pub(crate) enum SendError {
    /// Writing to the connection failed.
    Socket(io::Error),
    /// Reading the caller's body failed.
    Source(io::Error),
}

/// Writes the head and the body (Content-Length or chunked, as the head declared).
pub(crate) fn send(
    w: &mut Transport,
    head: &[u8],
    body: &mut RequestBody,
) -> std::result::Result<(), SendError> {
    match body {
        RequestBody::Empty => w.write_all(head).map_err(SendError::Socket)?,
        RequestBody::Bytes(b) if b.len() <= COPY_BUFFER => {
            let mut out = Vec::with_capacity(head.len() + b.len());
            out.extend_from_slice(head);
            out.extend_from_slice(b);
            w.write_all(&out).map_err(SendError::Socket)?;
        }
        RequestBody::Bytes(b) => {
            w.write_all(head).map_err(SendError::Socket)?;
            w.write_all(b).map_err(SendError::Socket)?;
        }
        RequestBody::Reader {
            reader,
            len: Some(n),
        } => {
            w.write_all(head).map_err(SendError::Socket)?;
            let sent = copy(&mut reader.take(*n), w)?;
            if sent < *n {
                return Err(SendError::Source(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("body ended after {sent} of its {n} declared bytes"),
                )));
            }
        }
        RequestBody::File { file, len } => {
            w.write_all(head).map_err(SendError::Socket)?;
            // A failed sendfile cannot say which side failed: it counts as the connection's.
            let sent = file.transfer_to(w, Some(*len)).map_err(SendError::Socket)?;
            if sent < *len {
                return Err(SendError::Source(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("file ended after {sent} of its {len} bytes"),
                )));
            }
        }
        RequestBody::Reader { reader, len: None } => {
            w.write_all(head).map_err(SendError::Socket)?;
            let mut chunked = ChunkedWriter::new(&mut *w);
            copy(reader, &mut chunked)?;
            chunked.finish().map_err(SendError::Socket)?;
        }
    }
    w.flush().map_err(SendError::Socket)
}

/// Copies `r` into `w`, telling the source's errors from the connection's.
fn copy(r: &mut impl Read, w: &mut impl Write) -> std::result::Result<u64, SendError> {
    let mut buf = vec![0u8; COPY_BUFFER];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(SendError::Source(e)),
        };
        w.write_all(&buf[..n]).map_err(SendError::Socket)?;
        total += n as u64;
    }
}
