//! The request body as a `Read`: length-limited or chunk-decoded (moria-streams), with the body
//! size limit, `Expect: 100-continue`, and the drain that keeps an unread body from ever being
//! parsed as the next request.

use std::io::{self, BufRead, Read};

use crate::h1::{BodyDecoder, BodyFault, BodyFraming, Failure, Framing, Input};

/// The interim response sent when a handler first reads a body the client is holding back.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
/// Scratch size for draining an unread body.
const DRAIN_CHUNK: usize = 4096;

/// Where `Expect: 100-continue` stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Continue {
    NotExpected,
    Pending,
    Sent,
}

/// What became of the body once the handler returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyOutcome {
    /// Fully read (by the handler or the drain): the connection can carry another request.
    Complete,
    /// Not fully read and not drainable: answer, then close.
    MustClose,
    /// Reading it broke a rule or a limit: answer with the failure's status, then close.
    Failed(Failure),
}

/// A request body: `Read` (and `BufRead`) over exactly the bytes of this request's body.
pub struct RequestBody<'a> {
    decoder: BodyDecoder<Input<'a>>,
    expect: Continue,
    max: u64,
    received: u64,
    failure: Option<Failure>,
}

impl<'a> RequestBody<'a> {
    pub(crate) fn new(input: Input<'a>, framing: Framing, expect_continue: bool, max: u64) -> Self {
        Self::with_framing(input, framing.into(), expect_continue, max)
    }

    /// A body framed as `framing` (HTTP/2 adds "until the stream ends", `UntilClose`).
    pub(crate) fn with_framing(
        input: Input<'a>,
        framing: BodyFraming,
        expect_continue: bool,
        max: u64,
    ) -> Self {
        let decoder = BodyDecoder::new(input, framing);
        let expect = if expect_continue && framing != BodyFraming::None {
            Continue::Pending
        } else {
            Continue::NotExpected
        };
        RequestBody {
            decoder,
            expect,
            max,
            received: 0,
            failure: None,
        }
    }

    /// The declared length, when the body has a Content-Length.
    pub fn content_length(&self) -> Option<u64> {
        match &self.decoder {
            BodyDecoder::Empty(_) => Some(0),
            BodyDecoder::Length(l) => Some(l.remaining() + self.received),
            BodyDecoder::Chunked(_) | BodyDecoder::UntilClose(_) => None,
        }
    }

    /// Whether the body is chunk-encoded on the wire.
    pub fn is_chunked(&self) -> bool {
        matches!(self.decoder, BodyDecoder::Chunked(_))
    }

    /// Bytes of body read so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The rule or limit a read broke, if one did.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.failure
    }

    /// Sends `100 Continue` the first time the body is wanted, unless bytes already arrived.
    fn send_continue(&mut self) -> io::Result<()> {
        if self.expect == Continue::Pending {
            self.expect = Continue::Sent;
            let input = self.decoder.get_mut();
            if input.is_drained() {
                let io = input.transport();
                io.write_all(CONTINUE)?;
                io.flush()?;
            }
        }
        Ok(())
    }

    fn check(&mut self, r: io::Result<usize>) -> io::Result<usize> {
        match r {
            Ok(n) => {
                self.received += n as u64;
                if self.received > self.max {
                    self.failure = Some(Failure::BodyTooLarge);
                    return Err(failure_error(Failure::BodyTooLarge));
                }
                Ok(n)
            }
            Err(e) => {
                self.failure = Some(classify(&e));
                Err(e)
            }
        }
    }

    /// Ends the body: drains up to `max_drain` unread bytes and says where the input's
    /// unconsumed bytes lie (`(pos, filled)` in its buffer). In place: moving the body out
    /// copied the whole decoder for every request.
    pub(crate) fn finish(&mut self, max_drain: u64) -> ((usize, usize), BodyOutcome) {
        let outcome = self.drain(max_drain);
        (self.decoder.get_mut().position(), outcome)
    }

    fn drain(&mut self, max_drain: u64) -> BodyOutcome {
        if let Some(f) = self.failure {
            return BodyOutcome::Failed(f);
        }
        if self.decoder.is_complete() {
            return BodyOutcome::Complete;
        }
        // The client is still waiting for 100 Continue: it may never send the body.
        if self.expect == Continue::Pending {
            return BodyOutcome::MustClose;
        }
        if let BodyDecoder::Length(l) = &self.decoder {
            if l.remaining() > max_drain {
                return BodyOutcome::MustClose;
            }
        }
        self.drain_unread(max_drain)
    }

    /// Reads and drops what the handler left unread, up to `max_drain` bytes. Out of line: the
    /// scratch buffer is a page, and a frame that size is probed on every call, so inlined
    /// into `finish` it would touch a stack page for every request, bodyless ones too.
    #[inline(never)]
    fn drain_unread(&mut self, max_drain: u64) -> BodyOutcome {
        let mut scratch = [0u8; DRAIN_CHUNK];
        let mut drained = 0u64;
        loop {
            match self.decoder.read(&mut scratch) {
                Ok(0) => return BodyOutcome::Complete,
                Ok(n) => {
                    drained += n as u64;
                    if drained > max_drain {
                        return BodyOutcome::MustClose;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return BodyOutcome::MustClose,
            }
        }
    }
}

/// Maps an error met while reading a body to the failure it reveals.
fn classify(e: &io::Error) -> Failure {
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<Failure>()) {
        return *inner;
    }
    match BodyFault::of(e) {
        BodyFault::Truncated => Failure::TruncatedBody,
        BodyFault::BadChunk(_) => Failure::BadChunk,
        BodyFault::Transport => match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Failure::BodyTimeout,
            _ => Failure::TruncatedBody,
        },
    }
}

fn failure_error(f: Failure) -> io::Error {
    let kind = match f.status() {
        408 => io::ErrorKind::TimedOut,
        _ => io::ErrorKind::InvalidData,
    };
    io::Error::new(kind, f)
}

impl Read for RequestBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(f) = self.failure {
            return Err(failure_error(f));
        }
        if buf.is_empty() {
            return Ok(0);
        }
        self.send_continue()?;
        let r = self.decoder.read(buf);
        self.check(r)
    }
}

impl BufRead for RequestBody<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if let Some(f) = self.failure {
            return Err(failure_error(f));
        }
        self.send_continue()?;
        match self.decoder.fill_buf() {
            Ok(b) => {
                if self.received + b.len() as u64 > self.max {
                    self.failure = Some(Failure::BodyTooLarge);
                    return Err(failure_error(Failure::BodyTooLarge));
                }
                Ok(b)
            }
            Err(e) => {
                self.failure = Some(classify(&e));
                Err(e)
            }
        }
    }

    fn consume(&mut self, amt: usize) {
        self.received += amt as u64;
        self.decoder.consume(amt);
    }
}
