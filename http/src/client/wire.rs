//! The response body as it arrives: delimited by length, chunked, or the close (RFC 9112
//! §6.3), with the request's timeouts on every read; the connection goes back to the pool the
//! moment its body is complete.

use std::io::{self, BufRead, Read};

use moria_streams::chunked::TrailerField;
use moria_streams::{ChunkedReader, Limited};

use super::conn::Timing;
use super::error::{Error, Violation};
use super::pool::Pooled;
use crate::h1::BodyFraming;

/// Where the body stands.
enum State {
    /// Exactly this many bytes remain.
    Length(Limited<Pooled>),
    /// Chunk-decoded.
    Chunked(ChunkedReader<Pooled>),
    /// Until the server closes (never reused).
    Close(Pooled),
    /// Complete (or failed): the connection is back in the pool or closed.
    Done,
}

/// A response body on its connection.
pub(crate) struct Wire {
    state: State,
    keep_alive: bool,
    timing: Timing,
    url: String,
    trailers: Vec<TrailerField>,
}

impl Wire {
    /// The body of a response framed by `framing` on `conn`.
    pub(crate) fn new(
        conn: Pooled,
        framing: BodyFraming,
        keep_alive: bool,
        timing: Timing,
        url: String,
    ) -> Wire {
        let state = match framing {
            BodyFraming::None | BodyFraming::Length(0) => {
                if keep_alive {
                    conn.release();
                }
                State::Done
            }
            BodyFraming::Length(n) => State::Length(Limited::exact(conn, n)),
            BodyFraming::Chunked => State::Chunked(ChunkedReader::new(conn)),
            BodyFraming::UntilClose => State::Close(conn),
        };
        Wire {
            state,
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
        match &mut self.state {
            State::Length(l) => Some(l.get_mut()),
            State::Chunked(c) => Some(c.get_mut()),
            State::Close(c) => Some(c),
            State::Done => None,
        }
    }

    /// Whether the body is complete; ends the state (handing the connection back) if so.
    fn settle(&mut self) {
        let complete = match &self.state {
            State::Length(l) => l.remaining() == 0,
            State::Chunked(c) => c.is_done(),
            State::Close(_) | State::Done => false,
        };
        if complete {
            let conn = match std::mem::replace(&mut self.state, State::Done) {
                State::Length(l) => l.into_inner(),
                State::Chunked(c) => {
                    self.trailers = c.trailers().to_vec();
                    c.into_inner()
                }
                _ => return,
            };
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
        let violation = match moria_streams::Error::from_io(&e) {
            Some(
                moria_streams::Error::ShortRead { .. } | moria_streams::Error::ChunkedTruncated(_),
            ) => Violation::TruncatedBody,
            Some(moria_streams::Error::Io(_)) | None => {
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
            Some(other) => Violation::BadChunk(other.to_string()),
        };
        Error::Protocol { url, violation }.into_io()
    }

    fn fail(&mut self, e: io::Error) -> io::Error {
        let e = self.classify(e);
        self.state = State::Done;
        e
    }
}

impl BufRead for Wire {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let timing = self.timing;
        if let Some(conn) = self.conn() {
            if let Err(e) = conn.link.arm(&timing) {
                return Err(self.fail(e));
            }
        }
        let failed = match &mut self.state {
            State::Length(l) => l.fill_buf().err(),
            State::Chunked(c) => c.fill_buf().err(),
            State::Close(c) => c.link.fill_buf().err(),
            State::Done => None,
        };
        if let Some(e) = failed {
            return Err(self.fail(e));
        }
        self.settle();
        match &mut self.state {
            State::Length(l) => l.fill_buf(),
            State::Chunked(c) => c.fill_buf(),
            State::Close(c) => c.link.fill_buf(),
            State::Done => Ok(&[]),
        }
    }

    fn consume(&mut self, amt: usize) {
        match &mut self.state {
            State::Length(l) => l.consume(amt),
            State::Chunked(c) => c.consume(amt),
            State::Close(c) => c.link.consume(amt),
            State::Done => {}
        }
        self.settle();
    }
}

impl Read for Wire {
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
        self.link.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.link.consume(amt)
    }
}

impl Read for Pooled {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.link.read(buf)
    }
}
