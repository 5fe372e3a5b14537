//! Protocol limits and timeouts: every default is a named constant, every one can be overridden
//! through [`crate::ServerBuilder`], and each breach maps to one status in
//! one function (`Failure::status`, listed in the README).

use std::time::Duration;

/// Longest request line accepted, line ending excluded (nginx: 8 KiB). Breach: 414.
pub const DEFAULT_MAX_REQUEST_LINE: usize = 8 * 1024;
/// Largest request head (request line + header fields + empty line) (hyper: ~400 KiB,
/// nginx: 4 × 8 KiB). Breach: 431.
pub const DEFAULT_MAX_HEAD: usize = 64 * 1024;
/// Most header fields in one request (hyper: 100). Breach: 431.
pub const DEFAULT_MAX_HEADERS: usize = 100;
/// Largest request body, declared or chunked (nginx `client_max_body_size`: 1 MiB). Breach: 413.
pub const DEFAULT_MAX_BODY: u64 = 1024 * 1024;
/// Most bytes of an unread request body drained so the connection can be reused; above it the
/// connection is closed after the response instead.
pub const DEFAULT_MAX_DRAIN: u64 = 256 * 1024;
/// Empty lines (CRLF) tolerated before a request line (RFC 9112 §2.2 asks for at least one).
/// Breach: 400.
pub const MAX_LEADING_EMPTY_LINES: usize = 4;
/// Time allowed for a whole request head to arrive once its first byte is in (slowloris guard;
/// nginx `client_header_timeout`: 60 s). Breach: 408 and close.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the next piece of a request body (nginx `client_body_timeout`: 60 s).
/// Breach: 408 and close.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest an idle keep-alive connection waits for its next request (nginx: 75 s). Breach:
/// silent close.
pub const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a connection that has answered everything waits in its fiber for the next
/// request before parking (no fiber, no buffers) until bytes arrive. A client that sends its
/// next request within this time (a load generator, a page pulling its assets) is served
/// without a fiber start per request; one that goes quiet costs almost nothing. Zero parks at
/// once.
pub const DEFAULT_PARK_AFTER: Duration = Duration::from_millis(20);
/// Longest a response write may wait for the peer to take bytes (nginx `send_timeout`: 60 s).
/// Breach: close.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Most connections served at once; beyond the cap a client is answered 503 and closed.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// How long a graceful shutdown waits for in-flight requests before it gives up on them.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Most byte ranges served in one multipart/byteranges answer after merging. Breach: 416.
pub const DEFAULT_MAX_RANGES: usize = 16;

/// The request-side limits one connection enforces, copied from the server configuration.
#[derive(Debug, Clone)]
pub struct Limits {
    /// See [`DEFAULT_MAX_REQUEST_LINE`].
    pub max_request_line: usize,
    /// See [`DEFAULT_MAX_HEAD`].
    pub max_head: usize,
    /// See [`DEFAULT_MAX_HEADERS`].
    pub max_headers: usize,
    /// See [`DEFAULT_MAX_BODY`].
    pub max_body: u64,
    /// See [`DEFAULT_MAX_DRAIN`].
    pub max_drain: u64,
    /// See [`DEFAULT_HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// See [`DEFAULT_BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// See [`DEFAULT_KEEP_ALIVE_TIMEOUT`].
    pub keep_alive_timeout: Duration,
    /// See [`DEFAULT_WRITE_TIMEOUT`].
    pub write_timeout: Duration,
    /// See [`DEFAULT_PARK_AFTER`].
    pub park_after: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request_line: DEFAULT_MAX_REQUEST_LINE,
            max_head: DEFAULT_MAX_HEAD,
            max_headers: DEFAULT_MAX_HEADERS,
            max_body: DEFAULT_MAX_BODY,
            max_drain: DEFAULT_MAX_DRAIN,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            keep_alive_timeout: DEFAULT_KEEP_ALIVE_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            park_after: DEFAULT_PARK_AFTER,
        }
    }
}
