//! The response body as it arrives: delimited by length, chunked, or the close (RFC 9112
//! §6.3), with the request's timeouts on every read; the connection goes back to the pool the
//! moment its body is complete.

use std::io::{self, BufRead, Read};

use moria_streams::chunked::TrailerField;

use super::error::{Error, Violation};
use super::pool::Pooled;
use super::timing::Timing;
use crate::h1::{BodyDecoder, BodyFault, BodyFraming};

/// A response body on its connection.
pub(crate) struct BodyReader {
    /// The body being read (one that runs until the close is never reused); `None` once
    /// complete or failed, the connection back in the pool or closed.
    body: Option<BodyDecoder<Pooled>>,
    keep_alive: bool,
    timing: Timing,
    url: String,
    trailers: Vec<TrailerField>,
}

impl BodyReader {
    /// The body of a response framed by `framing` on `conn`.
    pub(crate) fn new(
        conn: Pooled,
        framing: BodyFraming,
        keep_alive: bool,
        timing: Timing,
        url: String,
    ) -> BodyReader {
        let body = match framing {
            BodyFraming::None | BodyFraming::Length(0) => {
                if keep_alive {
                    conn.release();
                }
                None
            }
            framing => Some(BodyDecoder::new(conn, framing)),
        };
        BodyReader {
            body,
            keep_alive,
            timing,
            url,
            trailers: Vec::new(),
        }
    }

    /// The trailer fields of a chunked body, once it has been read to the end.
    pub(crate) fn trailers(&self) -> &[TrailerField] {
        &self.trailers
    }

    fn conn(&mut self) -> Option<&mut Pooled> {
        self.body.as_mut().map(BodyDecoder::get_mut)
    }

    /// Whether the body is complete; ends it (handing the connection back) if so.
    fn settle(&mut self) {
        if let Some(body) = self.body.take_if(|b| b.is_complete()) {
            self.trailers = body.trailers().to_vec();
            let conn = body.into_inner();
            if self.keep_alive {
                conn.release();
            }
        }
    }

    /// The client error for a failed read.
    fn classify(&self, e: io::Error) -> io::Error {
        if Error::from_io(&e).is_some() {
            return e;
        }
        let url = self.url.clone();
        let violation = match BodyFault::of(&e) {
            BodyFault::Truncated => Violation::TruncatedBody,
            BodyFault::Transport => {
                return match e.kind() {
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Error::Timeout {
                        url,
                        phase: self.timing.expired_phase(),
                    }
                    .into_io(),
                    io::ErrorKind::UnexpectedEof => Error::Protocol {
                        url,
                        violation: Violation::TruncatedBody,
                    }
                    .into_io(),
                    _ => Error::Io { url, source: e }.into_io(),
                }
            }
            BodyFault::BadChunk(why) => Violation::BadChunk(why),
        };
        Error::Protocol { url, violation }.into_io()
    }

    fn fail(&mut self, e: io::Error) -> io::Error {
        let e = self.classify(e);
        self.body = None;
        e
    }
}

impl BufRead for BodyReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let timing = self.timing;
        if let Some(conn) = self.conn() {
            if let Err(e) = conn.connection.arm(&timing) {
                return Err(self.fail(e));
            }
        }
        let failed = self.body.as_mut().and_then(|b| b.fill_buf().err());
        if let Some(e) = failed {
            return Err(self.fail(e));
        }
        self.settle();
        match &mut self.body {
            Some(b) => b.fill_buf(),
            None => Ok(&[]),
        }
    }

    fn consume(&mut self, amt: usize) {
        if let Some(b) = &mut self.body {
            b.consume(amt);
        }
        self.settle();
    }
}

impl Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Pooled {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.connection.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.connection.consume(amt)
    }
}

impl Read for Pooled {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.connection.read(buf)
    }
}
