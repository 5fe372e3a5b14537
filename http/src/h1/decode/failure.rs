//! Every way a head or body can break the protocol or a limit, as the decoders report it. The
//! server answers each with one status (`role/server/status.rs`); the client turns the ones a
//! response can break into a `Violation` (`response.rs`).

use std::fmt;

/// A protocol violation or limit breach; the connection answers with `Failure::status` and
/// closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Request line longer than `max_request_line`.
    RequestLineTooLong,
    /// Request head larger than `max_head`.
    HeadTooLarge,
    /// More header fields than `max_headers`.
    TooManyHeaders,
    /// More empty lines before the request line than tolerated.
    TooManyEmptyLines,
    /// Request line not `method SP target SP version`.
    BadRequestLine,
    /// Method is not a token.
    BadMethod,
    /// Request target has a byte outside visible ASCII, or a form the method does not allow.
    BadTarget,
    /// Version is not `HTTP/DIGIT.DIGIT`.
    BadVersion,
    /// A well-formed version other than HTTP/1.x.
    UnsupportedVersion,
    /// A field line starting with whitespace (obsolete line folding, RFC 9112 §5.2).
    ObsFold,
    /// Field name empty, missing its colon, or not a token.
    BadHeaderName,
    /// Whitespace between a field name and its colon (RFC 9112 §5.1).
    WhitespaceBeforeColon,
    /// A control character in a field value.
    BadHeaderValue,
    /// A CR not followed by LF (RFC 9112 §2.2).
    BareCr,
    /// HTTP/1.1 request without Host (RFC 9112 §3.2).
    MissingHost,
    /// More than one Host field line (RFC 9112 §3.2).
    DuplicateHost,
    /// Host value with characters no authority can hold.
    BadHost,
    /// Content-Length that is not a list of equal decimal numbers.
    BadContentLength,
    /// Several Content-Length values that differ (RFC 9112 §6.3 rule 5).
    ConflictingContentLength,
    /// Content-Length and Transfer-Encoding together (RFC 9112 §6.3 rule 3).
    ContentLengthWithTransferEncoding,
    /// Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1).
    TransferEncodingOnHttp10,
    /// `chunked` present but not the final coding, or given twice (RFC 9112 §6.3 rule 4).
    ChunkedNotFinal,
    /// A transfer coding other than `chunked` (RFC 9112 §6.1).
    UnsupportedTransferCoding,
    /// An Expect value other than `100-continue` (RFC 9110 §10.1.1).
    UnknownExpectation,
    /// Body larger than `max_body`.
    BodyTooLarge,
    /// Malformed chunked body.
    BadChunk,
    /// The peer closed the connection before the body was complete.
    TruncatedBody,
    /// Path with bad percent-encoding, invalid UTF-8 or NUL once decoded.
    BadPath,
    /// The request head did not arrive within `header_timeout`.
    HeaderTimeout,
    /// The body stalled longer than `body_timeout`.
    BodyTimeout,
}

impl Failure {
    /// A short, fixed text for logs and error bodies (never input-derived).
    pub(crate) fn message(self) -> &'static str {
        use Failure::*;
        match self {
            RequestLineTooLong => "request line too long",
            HeadTooLarge => "request head too large",
            TooManyHeaders => "too many header fields",
            TooManyEmptyLines => "too many empty lines before the request line",
            BadRequestLine => "malformed request line",
            BadMethod => "malformed method",
            BadTarget => "malformed request target",
            BadVersion => "malformed HTTP version",
            UnsupportedVersion => "HTTP version not supported",
            ObsFold => "obsolete line folding",
            BadHeaderName => "malformed header field name",
            WhitespaceBeforeColon => "whitespace before header colon",
            BadHeaderValue => "control character in header field value",
            BareCr => "bare CR",
            MissingHost => "missing Host",
            DuplicateHost => "duplicate Host",
            BadHost => "malformed Host",
            BadContentLength => "malformed Content-Length",
            ConflictingContentLength => "conflicting Content-Length values",
            ContentLengthWithTransferEncoding => "Content-Length with Transfer-Encoding",
            TransferEncodingOnHttp10 => "Transfer-Encoding in an HTTP/1.0 request",
            ChunkedNotFinal => "chunked is not the final transfer coding",
            UnsupportedTransferCoding => "unsupported transfer coding",
            UnknownExpectation => "unsupported expectation",
            BodyTooLarge => "request body too large",
            BadChunk => "malformed chunked body",
            TruncatedBody => "request body truncated",
            BadPath => "malformed path",
            HeaderTimeout => "request head timed out",
            BodyTimeout => "request body timed out",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Failure {}
