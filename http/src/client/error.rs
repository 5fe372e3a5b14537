//! The client's error type: every variant names the URL and what failed.

use std::fmt;
use std::io;

pub use crate::h1::Violation;

/// Which wait ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Opening the TCP connection (the builder's `connect_timeout`).
    Connect,
    /// Waiting for a pooled connection slot (the builder's `pool_timeout`).
    Pool,
    /// The whole request, redirects and body included (the builder's or request's `timeout`).
    Deadline,
    /// No byte arrived for the idle read time (the builder's `read_timeout`).
    Read,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Connect => "connect",
            Phase::Pool => "waiting for a connection slot",
            Phase::Deadline => "request deadline",
            Phase::Read => "idle read",
        })
    }
}

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL cannot be requested (syntax, scheme, host).
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A client setting that cannot work.
    #[error("invalid client configuration: {0}")]
    Config(&'static str),
    /// The TLS settings (extra roots) could not be loaded.
    #[error("cannot set up TLS: {0}")]
    TlsSetup(moria_crypto::Error),
    /// A header name or value that cannot be sent.
    #[error("invalid request header {name:?} for {url}: {reason}")]
    InvalidHeader {
        /// The URL.
        url: String,
        /// The header name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The host name did not resolve.
    #[error("cannot resolve the host of {url}: {source}")]
    Dns {
        /// The URL.
        url: String,
        /// Why.
        source: io::Error,
    },
    /// No TCP connection could be opened.
    #[error("cannot connect to {url}: {source}")]
    Connect {
        /// The URL.
        url: String,
        /// The last address's error.
        source: io::Error,
    },
    /// The server's certificate did not verify (untrusted, expired, wrong host).
    #[error("TLS certificate of {url} rejected: {reason}")]
    TlsVerify {
        /// The URL.
        url: String,
        /// OpenSSL's verdict.
        reason: String,
    },
    /// The TLS handshake failed for another reason.
    #[error("TLS handshake with {url} failed: {source}")]
    Tls {
        /// The URL.
        url: String,
        /// Why.
        source: moria_crypto::Error,
    },
    /// The proxy refused to open a tunnel (`CONNECT`), e.g. 407 for missing credentials.
    #[error("proxy refused the tunnel to {url}: status {status}")]
    Proxy {
        /// The URL the tunnel was for.
        url: String,
        /// The proxy's status code.
        status: u16,
    },
    /// A timeout expired.
    #[error("{url}: {phase} timed out")]
    Timeout {
        /// The URL.
        url: String,
        /// Which wait.
        phase: Phase,
    },
    /// The server broke HTTP/1.1 syntax or framing.
    #[error("{url}: protocol error: {violation}")]
    Protocol {
        /// The URL.
        url: String,
        /// What was wrong.
        violation: Violation,
    },
    /// The connection failed while sending or receiving.
    #[error("{url}: connection failed: {source}")]
    Io {
        /// The URL.
        url: String,
        /// Why.
        source: io::Error,
    },
    /// Reading the request body given to the builder failed.
    #[error("{url}: reading the request body failed: {source}")]
    RequestBody {
        /// The URL.
        url: String,
        /// Why.
        source: io::Error,
    },
    /// More redirects than the limit.
    #[error("{url}: more than {limit} redirects")]
    TooManyRedirects {
        /// The last URL redirected from.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// A redirect led back to a URL already visited with the same method.
    #[error("{url}: redirect loop")]
    RedirectLoop {
        /// The URL seen twice.
        url: String,
    },
    /// A buffered body (`text`, `bytes`, `json`) was larger than allowed.
    #[error("{url}: body larger than {limit} bytes")]
    BodyTooLarge {
        /// The URL.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// A compressed body expanded beyond the decompression guard.
    #[error("{url}: decompression bomb refused ({decoded} bytes from {compressed})")]
    DecompressionBomb {
        /// The URL.
        url: String,
        /// Bytes decoded when it was refused.
        decoded: u64,
        /// Compressed bytes read by then.
        compressed: u64,
    },
    /// The body is not the JSON (or UTF-8) expected.
    #[error("{url}: cannot decode the body: {reason}")]
    Decode {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The request body could not be encoded as JSON.
    #[error("cannot encode the JSON body: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// The client error carried inside an `io::Error` from a response body, if any.
    pub fn from_io(err: &io::Error) -> Option<&Error> {
        err.get_ref().and_then(|e| e.downcast_ref::<Error>())
    }

    /// The client error an `io::Error` from a response body stands for (the carried one, or
    /// `Io` naming `url`).
    pub(crate) fn take_io(err: io::Error, url: &str) -> Error {
        if Error::from_io(&err).is_none() {
            return Error::Io {
                url: url.to_owned(),
                source: err,
            };
        }
        match err.into_inner().map(|e| e.downcast::<Error>()) {
            Some(Ok(e)) => *e,
            _ => Error::Io {
                url: url.to_owned(),
                source: io::Error::other("client error lost in transit"),
            },
        }
    }

    /// This error as an `io::Error` of a fitting kind, to travel through `Read`.
    pub(crate) fn into_io(self) -> io::Error {
        let kind = match &self {
            Error::Timeout { .. } => io::ErrorKind::TimedOut,
            Error::Protocol {
                violation: Violation::TruncatedBody,
                ..
            } => io::ErrorKind::UnexpectedEof,
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, self)
    }
}

/// `Result` with the client's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
