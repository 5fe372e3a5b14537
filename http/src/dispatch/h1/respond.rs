//! Writing one HTTP/1.1 response: compression, framing (length, chunked or close), the head
//! through the codec's encoder, then the body by kind (batched bytes, reader, file via
//! sendfile, stream, ranges), and the access log.

use std::io::{self, BufWriter, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use moria_runtime::panic_message;
use moria_streams::ChunkedWriter;

use super::{ConnCtx, Exchange};
use crate::access_log;
use crate::compress;
use crate::counters::Counters;
use crate::h1::{Conn, ConnHeader, Head, Length, WRITE_FLUSH_AT};
use crate::method::Version;
use crate::metrics::RouteStat;
use crate::response::{BodyKind, StreamFn};
use crate::status::is_bodyless;
use crate::transport::Transport;

/// In-memory bodies up to this size are copied into the batched write; larger ones are
/// written straight from where they are.
const INLINE_BODY_MAX: usize = 16 * 1024;
/// Buffer size between a streamed body and the chunked encoder (one chunk per flush).
const STREAM_BUF: usize = 16 * 1024;

impl ConnCtx<'_> {
    /// Encodes and sends (or batches) the response; returns whether the connection stays open.
    /// Inlined into the request's dispatch: the usual answer (a small body in memory) is
    /// batched here, the others are sent by [`Self::send_body`], out of line.
    #[inline(always)]
    pub(super) fn write_response<T: Transport>(
        &self,
        conn: &mut Conn<Exchange>,
        io: &mut T,
        version: Version,
        is_head: bool,
        mut keep: bool,
        span: Option<(usize, usize)>,
    ) -> io::Result<bool> {
        if let (Some(c), Some((a, b))) = (&self.cfg.compression, span) {
            let accept = find_field(&conn.rbuf[a..b], &conn.head, "accept-encoding");
            compress::apply(c, accept, &mut conn.app.res, &mut conn.app.scratch)?;
        }
        // The body's bytes when they lie in memory, looked up once for the length and the copy.
        let res = &conn.app.res;
        let memory = res.memory_body();
        let length = if is_bodyless(res.head.status) {
            Length::Bodyless
        } else {
            match &res.body {
                BodyKind::Reader(_, Some(n)) | BodyKind::File(_, _, n) => Length::Known(*n),
                BodyKind::Ranges(r) => Length::Known(r.len()),
                BodyKind::Reader(_, None) | BodyKind::Stream(_) if version == Version::Http11 => {
                    Length::Chunked
                }
                BodyKind::Reader(_, None) | BodyKind::Stream(_) => {
                    keep = false;
                    Length::Close
                }
                _ => Length::Known(memory.map_or(0, |b| b.len() as u64)),
            }
        };
        let conn_header = match (keep, version) {
            (false, _) => ConnHeader::Close,
            (true, Version::Http10) => ConnHeader::KeepAlive,
            (true, Version::Http11 | Version::Http2) => ConnHeader::None,
        };
        // A static body the encoder may send with the head (it keeps small ones rendered).
        let static_body = match res.body {
            BodyKind::Static(b) if !is_head && length != Length::Bodyless => Some(b),
            _ => None,
        };
        let date = conn.date.get(conn.now);
        let body_sent = conn.encoder.encode(
            &mut conn.wbuf,
            &res.head,
            conn.now,
            date,
            self.cfg.server_line.as_deref(),
            length,
            conn_header,
            static_body,
        );
        let status = res.head.status;
        if let Some((a, b)) = span.filter(|_| access_log::enabled()) {
            let bytes = match length {
                Length::Known(n) if !is_head => Some(n),
                _ => None,
            };
            self.log_access(conn, a, b, status, bytes);
        }
        if let Some(b) = memory.filter(|b| b.len() <= INLINE_BODY_MAX) {
            // The usual small answer: batched where it lies (the reset before the next
            // request drops it), without moving the body out.
            if !is_head && length != Length::Bodyless && !body_sent {
                conn.wbuf.extend_from_slice(b);
            }
            return after_write(conn, io, keep);
        }
        self.send_body(conn, io, is_head, length, keep, span)
    }

    /// Sends a body that is not a small one in memory (a large one, a reader, a file, a
    /// stream, ranges) after the batched head; returns `keep`.
    #[inline(never)]
    fn send_body<T: Transport>(
        &self,
        conn: &mut Conn<Exchange>,
        io: &mut T,
        is_head: bool,
        length: Length,
        keep: bool,
        span: Option<(usize, usize)>,
    ) -> io::Result<bool> {
        let body = std::mem::replace(&mut conn.app.res.body, BodyKind::Empty);
        if is_head || length == Length::Bodyless {
            return after_write(conn, io, keep);
        }
        let written = catch_unwind(AssertUnwindSafe(|| write_body(conn, io, body, length)));
        match written {
            Ok(r) => r?,
            Err(payload) => {
                Counters::bump(&self.dispatcher.counters.body_panics);
                log::error!(
                    "{} {}: response body panicked: {}; closing the connection",
                    self.dispatcher.peer,
                    span.map_or_else(|| "-".to_string(), |(a, b)| conn.route(a, b)),
                    panic_message(&*payload)
                );
                return Err(io::Error::other("response body panicked"));
            }
        }
        after_write(conn, io, keep)
    }

    #[inline(never)]
    fn log_access(
        &self,
        conn: &Conn<Exchange>,
        a: usize,
        b: usize,
        status: u16,
        bytes: Option<u64>,
    ) {
        let raw = &conn.rbuf[a..b];
        let h = &conn.head;
        let field = |name: &str| find_field(raw, h, name);
        let app = &conn.app;
        access_log::log(&access_log::Entry {
            peer: self.dispatcher.peer,
            method: h.method_span.get(raw),
            target: h.target.get(raw),
            version: h.version.as_str(),
            status,
            bytes,
            referer: field("referer"),
            user_agent: field("user-agent"),
            route: app.params.route.as_deref().map(RouteStat::pattern),
            request_id: app
                .res
                .get_header("x-request-id")
                .or_else(|| field("x-request-id")),
            duration: app.started.map(|t| t.elapsed()),
        });
    }
}

/// Sends `body` after the head, framed as `length` says.
fn write_body<T: Transport>(
    conn: &mut Conn<Exchange>,
    io: &mut T,
    body: BodyKind,
    length: Length,
) -> io::Result<()> {
    match body {
        BodyKind::Empty => {}
        BodyKind::Static(b) => write_memory(conn, io, b)?,
        BodyKind::Bytes(v) => write_memory(conn, io, &v)?,
        BodyKind::Buffer => {
            let buf = std::mem::take(&mut conn.app.res.buf);
            let r = write_memory(conn, io, &buf);
            conn.app.res.buf = buf;
            r?;
        }
        BodyKind::File(mut f, offset, len) => {
            conn.flush(io)?;
            io.send_file(&mut f, offset, len)?;
        }
        BodyKind::Reader(r, len) => {
            conn.flush(io)?;
            copy_reader(io, r, len, length)?;
        }
        BodyKind::Stream(f) => {
            conn.flush(io)?;
            write_stream(io, f, length)?;
        }
        BodyKind::Ranges(r) => {
            conn.flush(io)?;
            r.write_to(io)?;
        }
    }
    Ok(())
}

/// Flushes the batched answers once they pass [`WRITE_FLUSH_AT`]; returns `keep`.
fn after_write<T: Transport>(
    conn: &mut Conn<Exchange>,
    io: &mut T,
    keep: bool,
) -> io::Result<bool> {
    if conn.wbuf.len() >= WRITE_FLUSH_AT {
        conn.flush(io)?;
    }
    Ok(keep)
}

/// Batches a small in-memory body; writes a large one straight after what is batched.
fn write_memory<T: Transport>(
    conn: &mut Conn<Exchange>,
    io: &mut T,
    body: &[u8],
) -> io::Result<()> {
    if body.len() <= INLINE_BODY_MAX {
        conn.wbuf.extend_from_slice(body);
        return Ok(());
    }
    conn.flush(io)?;
    io.write_all(body)
}

/// Copies a reader's body, framed as `length` says. Kept out of line, like [`write_stream`]:
/// the copy buffer lives in this frame, and a frame over a page is probed page by page on every
/// call, so inlined into the response path it would touch those stack pages for every response.
#[inline(never)]
fn copy_reader<T: Transport>(
    io: &mut T,
    mut r: Box<dyn Read + Send>,
    len: Option<u64>,
    length: Length,
) -> io::Result<()> {
    match len {
        Some(n) => {
            let copied = io::copy(&mut r.take(n), io)?;
            if copied != n {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "body reader shorter than its length",
                ));
            }
        }
        None if length == Length::Chunked => {
            let mut w = ChunkedWriter::new(&mut *io);
            io::copy(&mut r, &mut w)?;
            w.finish()?;
        }
        None => {
            io::copy(&mut r, io)?;
        }
    }
    Ok(())
}

/// Runs a streaming body's closure over a buffered writer, framed as `length` says (out of
/// line: see [`copy_reader`]).
#[inline(never)]
fn write_stream<T: Transport>(io: &mut T, f: StreamFn, length: Length) -> io::Result<()> {
    if length == Length::Chunked {
        let mut w = BufWriter::with_capacity(STREAM_BUF, ChunkedWriter::new(&mut *io));
        f(&mut w)?;
        w.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .finish()
            .map(drop)
    } else {
        let mut w = BufWriter::with_capacity(STREAM_BUF, &mut *io);
        f(&mut w)?;
        w.flush()
    }
}

/// The first value of header `name` in a parsed head.
fn find_field<'a>(raw: &'a [u8], head: &Head, name: &str) -> Option<&'a [u8]> {
    head.fields
        .iter()
        .find(|(n, _)| n.get(raw).eq_ignore_ascii_case(name.as_bytes()))
        .map(|(_, v)| v.get(raw))
}
