//! Body framing (RFC 9112 §6.3) for both roles: the framing and connection fields gathered
//! while a head is parsed, the rules both roles apply to them (3 to 6, numbered as in the RFC),
//! and the framing types. Each role adds only its own rules: a request's 7 and its size limit
//! (`request.rs`), a response's 1 and 8 (`response.rs`).

use super::failure::Failure;
use super::fields::{list, name_is, parse_content_length};
use crate::method::Version;

/// How a request body is delimited: the request side of `BodyFraming` (a request never runs
/// until the close, rule 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (RFC 9112 §6.3 rule 7).
    Empty,
    /// Exactly this many bytes (rule 6).
    Length(u64),
    /// Chunked transfer coding (rule 4).
    Chunked,
}

/// How a message body of either role is delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    /// No body (rule 1 for responses, rule 7 for requests).
    None,
    /// Exactly this many bytes (rule 6).
    Length(u64),
    /// Chunked transfer coding (rule 4).
    Chunked,
    /// Everything until the peer closes (rule 8, responses only).
    UntilClose,
}

impl From<Framing> for BodyFraming {
    fn from(f: Framing) -> BodyFraming {
        match f {
            Framing::Empty => BodyFraming::None,
            Framing::Length(n) => BodyFraming::Length(n),
            Framing::Chunked => BodyFraming::Chunked,
        }
    }
}

/// What the framing fields declare once rules 3 to 6 hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    /// `Transfer-Encoding` ending in a single `chunked`.
    Chunked,
    /// A valid `Content-Length`.
    Length(u64),
    /// Neither field: the role decides (rule 7 or 8).
    Nothing,
}

/// Transfer codings seen across all Transfer-Encoding lines.
#[derive(Debug, Default)]
struct TeState {
    /// Whether any Transfer-Encoding line was seen.
    seen: bool,
    /// How many times `chunked` was listed.
    chunked: u32,
    /// Whether `chunked` was the last coding listed.
    chunked_last: bool,
    /// Whether a coding other than `chunked` was listed.
    other: bool,
}

impl TeState {
    /// Records the codings of one Transfer-Encoding field value.
    fn add(&mut self, v: &[u8]) {
        self.seen = true;
        for coding in list(v) {
            if coding.eq_ignore_ascii_case(b"chunked") {
                self.chunked += 1;
                self.chunked_last = true;
            } else {
                self.other = true;
                self.chunked_last = false;
            }
        }
    }
}

/// The Content-Length, Transfer-Encoding and Connection fields of one head, gathered line by
/// line.
#[derive(Debug, Default)]
pub(crate) struct FramingFields {
    /// The agreed Content-Length so far (rule 5).
    content_length: Option<u64>,
    /// The transfer codings.
    te: TeState,
    /// Whether `Connection: close` was listed.
    close: bool,
    /// Whether `Connection: keep-alive` was listed.
    keep_alive: bool,
}

impl FramingFields {
    /// Records the field `name: value` when it is one of the three; ignores any other. `name`
    /// is a token (as the field grammar returns it).
    #[inline]
    pub(crate) fn note(&mut self, name: &[u8], value: &[u8]) -> Result<(), Failure> {
        match name.len() {
            10 if name_is(name, b"connection") => {
                for t in list(value) {
                    self.close |= t.eq_ignore_ascii_case(b"close");
                    self.keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            14 if name_is(name, b"content-length") => {
                self.content_length = Some(parse_content_length(value, self.content_length)?);
            }
            17 if name_is(name, b"transfer-encoding") => self.te.add(value),
            _ => {}
        }
        Ok(())
    }

    /// Whether a Transfer-Encoding field was seen.
    pub(crate) fn has_transfer_encoding(&self) -> bool {
        self.te.seen
    }

    /// Whether the connection persists after this message (RFC 9112 §9.3): by default in
    /// HTTP/1.1 unless `close` is listed, in HTTP/1.0 only when `keep-alive` is.
    pub(crate) fn persistent(&self, version: Version) -> bool {
        match version {
            Version::Http11 | Version::Http2 => !self.close,
            Version::Http10 => self.keep_alive && !self.close,
        }
    }

    /// Rules 3 to 6: what the fields declare, or why they cannot frame a body.
    pub(crate) fn declared(&self) -> Result<Declared, Failure> {
        if self.te.seen {
            // Rule 3: Content-Length with Transfer-Encoding is how messages are smuggled;
            // refuse it, never guess.
            if self.content_length.is_some() {
                return Err(Failure::ContentLengthWithTransferEncoding);
            }
            // Rule 4: chunked must be the final coding (and, being non-repeatable, appear once).
            let te = &self.te;
            if te.chunked > 1 || (te.chunked == 1 && !te.chunked_last) {
                return Err(Failure::ChunkedNotFinal);
            }
            // §6.1: a coding this codec does not implement cannot be decoded.
            if te.other || te.chunked == 0 {
                return Err(Failure::UnsupportedTransferCoding);
            }
            return Ok(Declared::Chunked);
        }
        // Rules 5 and 6 (conflicting values were refused as the fields were read).
        Ok(match self.content_length {
            Some(n) => Declared::Length(n),
            None => Declared::Nothing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(lines: &[(&str, &str)]) -> FramingFields {
        let mut f = FramingFields::default();
        for (n, v) in lines {
            f.note(n.as_bytes(), v.as_bytes()).unwrap();
        }
        f
    }

    #[test]
    fn rules_three_to_six_for_either_role() {
        assert_eq!(fields(&[]).declared(), Ok(Declared::Nothing));
        assert_eq!(
            fields(&[("Content-Length", "5, 5")]).declared(),
            Ok(Declared::Length(5))
        );
        assert_eq!(
            fields(&[("Transfer-Encoding", "gzip, chunked")]).declared(),
            Err(Failure::UnsupportedTransferCoding)
        );
        assert_eq!(
            fields(&[("Transfer-Encoding", "chunked")]).declared(),
            Ok(Declared::Chunked)
        );
        assert_eq!(
            fields(&[("Transfer-Encoding", "chunked, gzip")]).declared(),
            Err(Failure::ChunkedNotFinal)
        );
        assert_eq!(
            fields(&[("Content-Length", "1"), ("Transfer-Encoding", "chunked")]).declared(),
            Err(Failure::ContentLengthWithTransferEncoding)
        );
    }

    #[test]
    fn persistence_by_version_and_connection_tokens() {
        assert!(fields(&[]).persistent(Version::Http11));
        assert!(!fields(&[]).persistent(Version::Http10));
        assert!(fields(&[("Connection", "Keep-Alive")]).persistent(Version::Http10));
        assert!(!fields(&[("Connection", "keep-alive, close")]).persistent(Version::Http11));
    }
}
