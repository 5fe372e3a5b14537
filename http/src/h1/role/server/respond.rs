//! Writing one response: compression, framing (length, chunked or close), the head, then the
//! body by kind (batched bytes, reader, file via sendfile, stream, ranges), and the access log.

use std::io::{self, BufWriter, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use moria_runtime::panic_message;
use moria_streams::ChunkedWriter;

use super::{Conn, ConnCtx, INLINE_BODY_MAX, STREAM_BUF, WRITE_FLUSH_AT};
use crate::access_log;
use crate::compress;
use crate::h1::decode::Head;
use crate::h1::encode::{encode_head, ConnHeader, Length};
use crate::method::Version;
use crate::response::{Kind, StreamFn};
use crate::server::Counters;
use crate::status::is_bodyless;
use crate::transport::Transport;

impl Conn {
    /// Encodes and sends (or batches) the response; returns whether the connection stays open.
    pub(super) fn write_response<T: Transport>(
        &mut self,
        io: &mut T,
        ctx: &ConnCtx<'_>,
        version: Version,
        is_head: bool,
        mut keep: bool,
        span: Option<(usize, usize)>,
    ) -> io::Result<bool> {
        if let (Some(c), Some((a, b))) = (&ctx.cfg.compression, span) {
            let accept = find_field(&self.rbuf[a..b], &self.head, "accept-encoding");
            compress::apply(c, accept, &mut self.res, &mut self.scratch)?;
        }
        let res = &mut self.res;
        let length = if is_bodyless(res.status) {
            Length::Bodyless
        } else {
            match &res.body {
                Kind::Reader(_, Some(n)) | Kind::File(_, _, n) => Length::Known(*n),
                Kind::Ranges(r) => Length::Known(r.len()),
                Kind::Reader(_, None) | Kind::Stream(_) if version == Version::Http11 => {
                    Length::Chunked
                }
                Kind::Reader(_, None) | Kind::Stream(_) => {
                    keep = false;
                    Length::Close
                }
                _ => Length::Known(res.memory_body().map_or(0, |b| b.len() as u64)),
            }
        };
        let conn = match (keep, version) {
            (false, _) => ConnHeader::Close,
            (true, Version::Http10) => ConnHeader::KeepAlive,
            (true, Version::Http11) => ConnHeader::None,
        };
        let date = self.date.get(self.now);
        encode_head(
            &mut self.wbuf,
            res,
            date,
            ctx.cfg.server_line.as_deref(),
            length,
            conn,
        );
        let status = res.status;
        let body = std::mem::replace(&mut res.body, Kind::Empty);
        if let Some((a, b)) = span.filter(|_| access_log::enabled()) {
            let bytes = match length {
                Length::Known(n) if !is_head => Some(n),
                _ => None,
            };
            self.log_access(ctx, a, b, status, bytes);
        }
        if is_head || length == Length::Bodyless {
            return self.after_write(io, keep);
        }
        let written = catch_unwind(AssertUnwindSafe(|| self.write_body(io, body, length)));
        match written {
            Ok(r) => r?,
            Err(payload) => {
                Counters::bump(&ctx.counters.body_panics);
                log::error!(
                    "{} {}: response body panicked: {}; closing the connection",
                    ctx.peer,
                    span.map_or_else(|| "-".to_string(), |(a, b)| self.route(a, b)),
                    panic_message(&*payload)
                );
                return Err(io::Error::other("response body panicked"));
            }
        }
        self.after_write(io, keep)
    }

    /// Sends `body` after the head, framed as `length` says.
    fn write_body<T: Transport>(
        &mut self,
        io: &mut T,
        body: Kind,
        length: Length,
    ) -> io::Result<()> {
        match body {
            Kind::Empty => {}
            Kind::Static(b) => self.write_memory(io, b)?,
            Kind::Bytes(v) => self.write_memory(io, &v)?,
            Kind::Buffer => {
                let buf = std::mem::take(&mut self.res.buf);
                let r = self.write_memory(io, &buf);
                self.res.buf = buf;
                r?;
            }
            Kind::File(mut f, offset, len) => {
                self.flush(io)?;
                io.send_file(&mut f, offset, len)?;
            }
            Kind::Reader(r, len) => {
                self.flush(io)?;
                copy_reader(io, r, len, length)?;
            }
            Kind::Stream(f) => {
                self.flush(io)?;
                write_stream(io, f, length)?;
            }
            Kind::Ranges(r) => {
                self.flush(io)?;
                r.write_to(io)?;
            }
        }
        Ok(())
    }

    fn after_write<T: Transport>(&mut self, io: &mut T, keep: bool) -> io::Result<bool> {
        if self.wbuf.len() >= WRITE_FLUSH_AT {
            self.flush(io)?;
        }
        Ok(keep)
    }

    fn write_memory<T: Transport>(&mut self, io: &mut T, body: &[u8]) -> io::Result<()> {
        if body.len() <= INLINE_BODY_MAX {
            self.wbuf.extend_from_slice(body);
            return Ok(());
        }
        self.flush(io)?;
        io.write_all(body)
    }

    fn log_access(&self, ctx: &ConnCtx<'_>, a: usize, b: usize, status: u16, bytes: Option<u64>) {
        let raw = &self.rbuf[a..b];
        let h = &self.head;
        let field = |name: &str| find_field(raw, h, name);
        access_log::log(&access_log::Entry {
            peer: ctx.peer,
            method: h.method_span.get(raw),
            target: h.target.get(raw),
            version: h.version.as_str(),
            status,
            bytes,
            referer: field("referer"),
            user_agent: field("user-agent"),
        });
    }
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
