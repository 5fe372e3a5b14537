//! Response-head parser (RFC 9112 §4, §5, §6.3) over a complete head in `&[u8]`: the status
//! line and the rules only responses have; the field grammar (`fields.rs`) and framing rules 3
//! to 6 (`framing.rs`) are the ones the request parser uses.

use std::fmt;

use super::failure::Failure;
use super::fields::{line_end, parse_field};
use super::framing::{BodyFraming, Declared, FramingFields};
use crate::method::Version;

/// How a response deviates from HTTP/1.1 framing or syntax; the response is refused, never
/// guessed at.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The status line is not `HTTP/1.x SP 3DIGIT [SP reason]`.
    BadStatusLine,
    /// A well-formed version other than HTTP/1.x.
    UnsupportedVersion,
    /// The response head is larger than the client accepts.
    HeadTooLarge,
    /// More header fields than the client accepts.
    TooManyHeaders,
    /// A field line breaks the field grammar (RFC 9112 §5).
    BadHeader,
    /// A Content-Length that is not a decimal number.
    BadContentLength,
    /// Several Content-Length values that differ (RFC 9112 §6.3 rule 5).
    ConflictingContentLength,
    /// Content-Length together with Transfer-Encoding (RFC 9112 §6.3 rule 3).
    LengthWithChunked,
    /// A transfer coding other than a final `chunked` (RFC 9112 §6.1).
    UnsupportedTransferCoding,
    /// The connection ended inside the response head.
    TruncatedHead,
    /// The connection ended before the body was complete.
    TruncatedBody,
    /// A malformed chunked body (the decoder's reason).
    BadChunk(String),
    /// A malformed compressed body (the decoder's reason).
    BadContentCoding(String),
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::BadStatusLine => f.write_str("malformed status line"),
            Violation::UnsupportedVersion => f.write_str("HTTP version other than 1.x"),
            Violation::HeadTooLarge => f.write_str("response head too large"),
            Violation::TooManyHeaders => f.write_str("too many header fields"),
            Violation::BadHeader => f.write_str("malformed header field"),
            Violation::BadContentLength => f.write_str("malformed Content-Length"),
            Violation::ConflictingContentLength => f.write_str("conflicting Content-Length values"),
            Violation::LengthWithChunked => {
                f.write_str("Content-Length together with Transfer-Encoding")
            }
            Violation::UnsupportedTransferCoding => f.write_str("unsupported transfer coding"),
            Violation::TruncatedHead => f.write_str("connection closed inside the response head"),
            Violation::TruncatedBody => f.write_str("connection closed before the body ended"),
            Violation::BadChunk(why) => write!(f, "malformed chunked body: {why}"),
            Violation::BadContentCoding(why) => write!(f, "malformed compressed body: {why}"),
        }
    }
}

impl Violation {
    /// The violation a scanner or field-grammar failure stands for in a response.
    pub(crate) fn from_failure(f: Failure) -> Violation {
        match f {
            Failure::HeadTooLarge => Violation::HeadTooLarge,
            Failure::RequestLineTooLong | Failure::TooManyEmptyLines => Violation::BadStatusLine,
            Failure::TooManyHeaders => Violation::TooManyHeaders,
            Failure::BadContentLength => Violation::BadContentLength,
            Failure::ConflictingContentLength => Violation::ConflictingContentLength,
            Failure::ContentLengthWithTransferEncoding => Violation::LengthWithChunked,
            Failure::ChunkedNotFinal | Failure::UnsupportedTransferCoding => {
                Violation::UnsupportedTransferCoding
            }
            _ => Violation::BadHeader,
        }
    }
}

/// One parsed response head.
#[derive(Debug, Clone)]
pub(crate) struct ResponseHead {
    /// The version of the status line.
    pub version: Version,
    /// The status code.
    pub status: u16,
    /// The reason phrase (lossy UTF-8).
    pub reason: String,
    /// Field lines: name and OWS-trimmed value.
    pub fields: Vec<(String, Vec<u8>)>,
    /// Body framing.
    pub framing: BodyFraming,
    /// Whether the connection may carry another request after this response.
    pub keep_alive: bool,
}

/// Parses the complete head `buf[start..]`; `head_request` when the request was HEAD (its
/// response has no body whatever its fields say).
pub(crate) fn parse_response(
    buf: &[u8],
    start: usize,
    max_headers: usize,
    head_request: bool,
) -> Result<ResponseHead, Violation> {
    let (version, status, reason, mut pos) = parse_status_line(buf, start)?;
    let mut fields = Vec::new();
    let mut framing = FramingFields::default();
    while line_end(buf, pos).is_none() {
        let (name, value, next) = parse_field(buf, pos).map_err(Violation::from_failure)?;
        pos = next;
        if fields.len() == max_headers {
            return Err(Violation::TooManyHeaders);
        }
        let n = name.get(buf);
        let v = value.get(buf);
        framing.note(n, v).map_err(Violation::from_failure)?;
        fields.push((String::from_utf8_lossy(n).into_owned(), v.to_vec()));
    }
    let body = response_framing(status, head_request, &framing)?;
    // After 101 the connection speaks another protocol: never reuse it.
    let keep_alive =
        body != BodyFraming::UntilClose && status != 101 && framing.persistent(version);
    Ok(ResponseHead {
        version,
        status,
        reason,
        fields,
        framing: body,
        keep_alive,
    })
}

/// The response framing of RFC 9112 §6.3, rules numbered as there (rule 2, CONNECT, is the
/// caller's: it asks for no body with `head_request`).
fn response_framing(
    status: u16,
    head_request: bool,
    fields: &FramingFields,
) -> Result<BodyFraming, Violation> {
    // Rule 1: HEAD, 1xx, 204 and 304 responses end with their head.
    if head_request || status < 200 || status == 204 || status == 304 {
        return Ok(BodyFraming::None);
    }
    Ok(match fields.declared().map_err(Violation::from_failure)? {
        Declared::Chunked => BodyFraming::Chunked,
        Declared::Length(n) => BodyFraming::Length(n),
        // Rule 8: no framing at all, the body runs until the server closes.
        Declared::Nothing => BodyFraming::UntilClose,
    })
}

/// `HTTP-version SP status-code SP [reason-phrase]` (RFC 9112 §4); a missing SP after the
/// code is tolerated. Returns where the field lines start.
fn parse_status_line(buf: &[u8], start: usize) -> Result<(Version, u16, String, usize), Violation> {
    let rest = buf.get(start..).unwrap_or_default();
    let nl = memchr::memchr(b'\n', rest).ok_or(Violation::BadStatusLine)?;
    let line = rest[..nl].strip_suffix(b"\r").unwrap_or(&rest[..nl]);
    let version = match line.get(..8) {
        Some(b"HTTP/1.0") => Version::Http10,
        Some([b'H', b'T', b'T', b'P', b'/', b'1', b'.', d]) if d.is_ascii_digit() => {
            Version::Http11
        }
        Some([b'H', b'T', b'T', b'P', b'/', a, b'.', b])
            if a.is_ascii_digit() && b.is_ascii_digit() =>
        {
            return Err(Violation::UnsupportedVersion)
        }
        _ => return Err(Violation::BadStatusLine),
    };
    let status = match line.get(8..12) {
        Some([b' ', a, b, c]) if [a, b, c].iter().all(|d| d.is_ascii_digit()) && *a != b'0' => {
            u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0')
        }
        _ => return Err(Violation::BadStatusLine),
    };
    let reason = match line.get(12..) {
        None | Some([]) => &[][..],
        Some([b' ', reason @ ..]) => reason,
        Some(_) => return Err(Violation::BadStatusLine),
    };
    if reason
        .iter()
        .any(|&c| c != b'\t' && (c < 0x20 || c == 0x7f))
    {
        return Err(Violation::BadStatusLine);
    }
    let reason = String::from_utf8_lossy(reason).into_owned();
    Ok((version, status, reason, start + nl + 1))
}

#[cfg(test)]
mod tests;
