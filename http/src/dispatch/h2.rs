//! HTTP/2 dispatch: each request stream, in its fiber, becomes the same [`Request`] an h1
//! request does (its head rewritten as HTTP/1.1 by the codec and parsed by the h1 parser, so
//! the grammar, the limits and the `Request` view are the h1 ones; the body through the h1
//! body reader over the stream's DATA), runs through the [`Dispatcher`], and its [`Response`]
//! goes back as HEADERS and DATA. Files are copied through the stream (DATA frames cannot be
//! `sendfile`d past the frame headers and the windows): HTTP/2 costs the static-file path a
//! buffered copy where h1 has zero-copy, read no faster than the client's windows open. `Request::version` says `Http2`; `Request::tls().alpn`
//! says `h2` on HTTPS.

use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::time::{Duration, Instant};

use super::h1::ConnConfig;
use super::Dispatcher;
use crate::access_log;
use crate::app::Extensions;
use crate::body::{BodyOutcome, RequestBody};
use crate::compress;
use crate::h1::{current_date, take_head, BodyFraming, Failure, Framing, Head, HeadScan, Input};
use crate::h2::{Call, ResponseHead, Service, StreamBody, StreamSender};
use crate::method::{Method, Version};
use crate::metrics::{unrouted, RouteStat};
use crate::percent::decode_path_into;
use crate::request::{Params, Request};
use crate::response::{respond_error, BodyKind, Response};
use crate::status::is_bodyless;
use crate::transport::{check_len, Transport};
use moria_streams::File;

/// Buffer between a streamed body and the DATA frames.
const STREAM_BUF: usize = 16 * 1024;
/// Buffer the request body reader refills from the stream.
const BODY_BUF: usize = 8 * 1024;

/// One HTTP/2 connection's application side: the `h2::Service` its streams call.
pub(crate) struct H2Service<'c> {
    pub cfg: &'c ConnConfig,
    pub dispatcher: Dispatcher<'c>,
}

impl Service for H2Service<'_> {
    fn serve(&self, call: Call<'_>) {
        let Call {
            head,
            bodyless,
            body,
            send,
        } = call;
        if let Err(e) = self.answer(&head, bodyless, body, &send) {
            log::debug!("{}: HTTP/2 stream ended: {e}", self.dispatcher.peer);
            send.reset();
        }
    }
}

impl H2Service<'_> {
    fn answer(
        &self,
        raw: &[u8],
        bodyless: bool,
        mut body: StreamBody<'_>,
        send: &StreamSender<'_>,
    ) -> io::Result<()> {
        let limits = &self.cfg.limits;
        let mut head = Head::default();
        let parsed = take_head(&mut HeadScan::default(), raw, limits, &mut head);
        if !matches!(parsed, Ok(Some(_))) {
            let status = parsed.err().map_or(400, Failure::status);
            return self.refuse(send, status);
        }
        head.version = Version::Http2;
        let mut path_buf = String::new();
        let raw_path = head.path.get(raw);
        let path: &str = if head.path_escaped {
            if !decode_path_into(raw_path, &mut path_buf) {
                return self.refuse(send, Failure::BadPath.status());
            }
            &path_buf
        } else if raw_path.is_empty() {
            "/"
        } else {
            std::str::from_utf8(raw_path).unwrap_or("/")
        };
        let framing = match head.framing {
            _ if bodyless => BodyFraming::None,
            Framing::Length(n) => BodyFraming::Length(n),
            _ => BodyFraming::UntilClose,
        };
        let started = (self.cfg.metrics || access_log::enabled()).then(Instant::now);
        let mut params = Params::default();
        let mut ext = Extensions::default();
        let mut res = Response::new();
        // A bodyless request never reads: no buffer.
        let mut buf = if bodyless {
            Vec::new()
        } else {
            vec![0; BODY_BUF]
        };
        let mut req = Request {
            raw,
            head: &head,
            path,
            peer: self.dispatcher.peer,
            tls: self.dispatcher.tls,
            params: &mut params,
            ext: &mut ext,
            body: RequestBody::with_framing(
                Input::new(&mut buf, 0, &mut body),
                framing,
                head.expect_continue,
                limits.max_body,
            ),
        };
        let route = &raw[head.route()];
        let log_route = || String::from_utf8_lossy(route).into_owned();
        self.dispatcher
            .call(route, true, &mut req, &mut res, log_route);
        let (_, outcome) = req.body.finish(limits.max_drain);
        if let BodyOutcome::Failed(f) = outcome {
            respond_error(&mut res, f.status());
        }
        if res.upgrade.is_some() {
            // No upgrades over HTTP/2 (RFC 9113 §8.6).
            respond_error(&mut res, 500);
        }
        if let Some(c) = &self.cfg.compression {
            let accept = req_field(raw, &head, b"accept-encoding");
            compress::apply(c, accept, &mut res, &mut Vec::new())?;
        }
        self.dispatcher.state.responding();
        let status = res.status_code();
        if access_log::enabled() {
            self.log_access(raw, &head, &params, &res, started);
        }
        let r = self.write(send, &mut res, head.method == Method::Head);
        self.dispatcher.state.between();
        if self.cfg.metrics {
            self.dispatcher.counters.request(head.method, status);
            let took = started.map_or(Duration::ZERO, |t| t.elapsed());
            match params.route.take() {
                Some(route) => route.observe(took),
                None => unrouted(head.method).observe(took),
            }
        }
        r
    }

    /// Logs the request (version `HTTP/2.0`); the byte count is the declared length.
    fn log_access(
        &self,
        raw: &[u8],
        head: &Head,
        params: &Params,
        res: &Response,
        started: Option<Instant>,
    ) {
        let bytes = body_length(&res.body, &res.buf);
        access_log::log(&access_log::Entry {
            peer: self.dispatcher.peer,
            method: head.method_span.get(raw),
            target: head.target.get(raw),
            version: "HTTP/2.0",
            status: res.status_code(),
            bytes,
            referer: req_field(raw, head, b"referer"),
            user_agent: req_field(raw, head, b"user-agent"),
            route: params.route.as_deref().map(RouteStat::pattern),
            request_id: res
                .get_header("x-request-id")
                .or_else(|| req_field(raw, head, b"x-request-id")),
            duration: started.map(|t| t.elapsed()),
        });
    }

    /// Answers a request the parser refused.
    fn refuse(&self, send: &StreamSender<'_>, status: u16) -> io::Result<()> {
        let mut res = Response::new();
        respond_error(&mut res, status);
        self.write(send, &mut res, false)
    }

    /// Sends the response's head and body.
    fn write(&self, send: &StreamSender<'_>, res: &mut Response, is_head: bool) -> io::Result<()> {
        let mut lines = std::mem::take(&mut res.head.fields);
        let date = current_date();
        lines.extend_from_slice(b"date: ");
        lines.extend_from_slice(&date);
        lines.extend_from_slice(b"\r\n");
        if let Some(server) = &self.cfg.server_line {
            lines.extend_from_slice(server);
        }
        let status = res.head.status;
        let body = std::mem::replace(&mut res.body, BodyKind::Empty);
        let length = if is_bodyless(status) {
            None
        } else {
            body_length(&body, &res.buf)
        };
        let head = ResponseHead {
            status,
            lines: &lines,
            length,
        };
        if is_head || is_bodyless(status) {
            return send.respond(&head, b"", true);
        }
        match body {
            BodyKind::Empty => send.respond(&head, b"", true),
            BodyKind::Static(b) => send.respond(&head, b, true),
            BodyKind::Bytes(v) => send.respond(&head, &v, true),
            BodyKind::Buffer => send.respond(&head, &res.buf, true),
            BodyKind::File(mut f, offset, len) => {
                send.respond(&head, b"", false)?;
                Frames(send).send_file(&mut f, offset, len)?;
                send.data(b"", true)
            }
            BodyKind::Reader(mut r, len) => {
                send.respond(&head, b"", false)?;
                let copied = io::copy(
                    &mut (&mut r).take(len.unwrap_or(u64::MAX)),
                    &mut Frames(send),
                )?;
                if len.is_some_and(|n| n != copied) {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "body reader shorter than its length",
                    ));
                }
                send.data(b"", true)
            }
            BodyKind::Stream(f) => {
                send.respond(&head, b"", false)?;
                let mut w = BufWriter::with_capacity(STREAM_BUF, Frames(send));
                f(&mut w)?;
                w.flush()?;
                drop(w);
                send.data(b"", true)
            }
            BodyKind::Ranges(r) => {
                send.respond(&head, b"", false)?;
                r.write_to(&mut Frames(send))?;
                send.data(b"", true)
            }
        }
    }
}

/// The length a body declares (`None`: streamed, unknown until its end).
fn body_length(body: &BodyKind, buf: &[u8]) -> Option<u64> {
    match body {
        BodyKind::Reader(_, n) => *n,
        BodyKind::File(_, _, n) => Some(*n),
        BodyKind::Ranges(r) => Some(r.len()),
        BodyKind::Stream(_) => None,
        BodyKind::Empty => Some(0),
        BodyKind::Static(b) => Some(b.len() as u64),
        BodyKind::Bytes(v) => Some(v.len() as u64),
        BodyKind::Buffer => Some(buf.len() as u64),
    }
}

/// The first value of field `name` in a parsed head.
fn req_field<'a>(raw: &'a [u8], head: &Head, name: &[u8]) -> Option<&'a [u8]> {
    head.fields
        .iter()
        .find(|(n, _)| n.get(raw).eq_ignore_ascii_case(name))
        .map(|(_, v)| v.get(raw))
}

/// A stream's DATA frames as the `Transport` the response body writers take (write-only).
struct Frames<'s, 'c>(&'s StreamSender<'c>);

impl Read for Frames<'_, '_> {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Ok(0)
    }
}

impl Write for Frames<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.data(buf, false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transport for Frames<'_, '_> {
    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn read_within(&mut self, _: &mut [u8], _: Duration) -> io::Result<Option<usize>> {
        Ok(Some(0))
    }

    /// Reads the file as the windows open, no more than they allow: a stream whose client
    /// holds its window shut holds no copy buffer.
    fn send_file(&mut self, file: &mut File, offset: u64, len: u64) -> io::Result<()> {
        file.seek(SeekFrom::Start(offset))?;
        check_len(self.0.copy_from(file, len)?, len)
    }
}
