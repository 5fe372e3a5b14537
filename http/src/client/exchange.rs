//! One request on one connection: head and body out, interim responses skipped, the final head
//! in; and the single retry on a fresh connection when a reused one turns out to be dead.

use std::io::{self, BufRead, Read, Write};

use moria_streams::ChunkedWriter;

use super::conn::{self, Link, Timing};
use super::decode::{format_of, Content};
use super::error::{Error, Phase, Result, Violation};
use super::pool::{Checkout, Pooled};
use super::response::{Headers, Response};
use super::url::Url;
use super::wire::Wire;
use super::Inner;
use crate::h1::client::encode::encode_request;
use crate::h1::client::parse::{parse_response, BodyFraming, ResponseHead};
use crate::h1::encode::Length;
use crate::h1::scan::HeadScan;

/// Copy buffer for streamed request bodies; also the largest body sent in one write with its
/// head.
const COPY_BUFFER: usize = 16 * 1024;

/// What a request sends after its head.
pub(crate) enum RequestBody {
    /// Nothing.
    Empty,
    /// These bytes (replayable: redirects and retries can send them again).
    Bytes(Vec<u8>),
    /// A reader, sent once: with its length as Content-Length, or chunked when unknown.
    Reader {
        /// The source.
        reader: Box<dyn Read + Send>,
        /// Its length, if known.
        len: Option<u64>,
    },
}

impl RequestBody {
    /// Whether the body can be sent again.
    pub(crate) fn replayable(&self) -> bool {
        !matches!(self, RequestBody::Reader { .. })
    }
}

/// One request as it goes out.
pub(crate) struct Outgoing<'a> {
    pub method: &'a str,
    pub url: &'a Url,
    pub fields: &'a [(String, String)],
    pub body: &'a mut RequestBody,
    /// Whether the client asked for compression itself (and so decodes it).
    pub decode: bool,
}

/// An attempt's failure, and whether it happened on a connection the server had already
/// closed (nothing of the response arrived), which makes a retry safe for idempotent methods.
struct Failed {
    error: Error,
    stale: bool,
}

/// Methods whose repetition is harmless (RFC 9110 §9.2.2).
fn idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS" | "TRACE"
    )
}

/// Sends `req` and returns the response head with its body, retrying once on a fresh
/// connection when a reused one was dead.
pub(crate) fn perform(client: &Inner, mut req: Outgoing<'_>, timing: &Timing) -> Result<Response> {
    let host = client.pool.host(req.url);
    let mut fresh = false;
    loop {
        let wait = timing
            .within(client.config.pool_timeout)
            .map_err(|phase| timeout(req.url, phase))?;
        let pooled = match host.checkout(fresh, wait) {
            None => {
                let phase = match timing.next_wait() {
                    Err(phase) => phase,
                    Ok(_) => Phase::Pool,
                };
                return Err(timeout(req.url, phase));
            }
            Some(Checkout::Idle(p)) => p,
            Some(Checkout::Fresh(slot)) => Pooled {
                link: conn::open(req.url, client.config.connect_timeout, timing, &client.tls)?,
                slot,
                reused: false,
            },
        };
        let reused = pooled.reused;
        match attempt(client, pooled, &mut req, timing) {
            Ok(r) => return Ok(r),
            Err(f) if f.stale && reused && idempotent(req.method) && req.body.replayable() => {
                log::debug!(
                    "{}: reused connection was closed; retrying on a new one",
                    req.url
                );
                fresh = true;
            }
            Err(f) => return Err(f.error),
        }
    }
}

fn timeout(url: &Url, phase: Phase) -> Error {
    Error::Timeout {
        url: url.to_string(),
        phase,
    }
}

/// Whether an I/O error means the peer had closed the connection.
fn closed_by_peer(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::UnexpectedEof
    )
}

/// The client error for a socket error, and whether it counts as stale.
fn socket_failure(url: &Url, timing: &Timing, e: io::Error, nothing_received: bool) -> Failed {
    if matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) {
        return Failed {
            error: timeout(url, timing.expired_phase()),
            stale: false,
        };
    }
    Failed {
        stale: nothing_received && closed_by_peer(&e),
        error: Error::Io {
            url: url.to_string(),
            source: e,
        },
    }
}

fn attempt(
    client: &Inner,
    mut conn: Pooled,
    req: &mut Outgoing<'_>,
    timing: &Timing,
) -> std::result::Result<Response, Failed> {
    let url = req.url;
    let length = match &req.body {
        RequestBody::Empty if matches!(req.method, "POST" | "PUT" | "PATCH") => Length::Known(0),
        RequestBody::Empty => Length::Bodyless,
        RequestBody::Bytes(b) => Length::Known(b.len() as u64),
        RequestBody::Reader { len: Some(n), .. } => Length::Known(*n),
        RequestBody::Reader { len: None, .. } => Length::Chunked,
    };
    let mut head = Vec::with_capacity(256);
    encode_request(
        &mut head,
        req.method,
        url.target(),
        &url.authority(),
        req.fields,
        length,
    );
    conn.link
        .arm(timing)
        .map_err(|e| socket_failure(url, timing, e, true))?;
    send(conn.link.writer(), &head, req.body).map_err(|e| match e {
        SendError::Socket(e) => socket_failure(url, timing, e, true),
        SendError::Source(source) => Failed {
            error: Error::RequestBody {
                url: url.to_string(),
                source,
            },
            stale: false,
        },
    })?;
    let mut buf = Vec::new();
    let head = loop {
        let head = read_head(client, &mut conn.link, timing, req, &mut buf)?;
        // Interim responses (RFC 9110 §15.2) precede the final one; 101 would be final but is
        // never asked for.
        if !(100..200).contains(&head.status) || head.status == 101 {
            break head;
        }
    };
    let url_text = url.to_string();
    let coding = head
        .fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-encoding"))
        .and_then(|(_, v)| format_of(v));
    let has_body = !matches!(head.framing, BodyFraming::None | BodyFraming::Length(0));
    let wire = Wire::new(
        conn,
        head.framing,
        head.keep_alive,
        *timing,
        url_text.clone(),
    );
    let body = match coding {
        Some(format) if req.decode && has_body => {
            Content::decoded(wire, format, client.config.bomb, url_text)
        }
        _ => Content::Identity(Box::new(wire)),
    };
    Ok(Response {
        status: head.status,
        reason: head.reason,
        version: head.version,
        headers: Headers::new(head.fields),
        url: url.clone(),
        body,
        max_body: client.config.max_body,
    })
}

enum SendError {
    /// Writing to the connection failed.
    Socket(io::Error),
    /// Reading the caller's body failed.
    Source(io::Error),
}

/// Writes the head and the body (Content-Length or chunked, as the head declared).
fn send(
    w: &mut impl Write,
    head: &[u8],
    body: &mut RequestBody,
) -> std::result::Result<(), SendError> {
    match body {
        RequestBody::Empty => w.write_all(head).map_err(SendError::Socket)?,
        RequestBody::Bytes(b) if b.len() <= COPY_BUFFER => {
            let mut out = Vec::with_capacity(head.len() + b.len());
            out.extend_from_slice(head);
            out.extend_from_slice(b);
            w.write_all(&out).map_err(SendError::Socket)?;
        }
        RequestBody::Bytes(b) => {
            w.write_all(head).map_err(SendError::Socket)?;
            w.write_all(b).map_err(SendError::Socket)?;
        }
        RequestBody::Reader {
            reader,
            len: Some(n),
        } => {
            w.write_all(head).map_err(SendError::Socket)?;
            let sent = copy(&mut reader.take(*n), w)?;
            if sent < *n {
                return Err(SendError::Source(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("body ended after {sent} of its {n} declared bytes"),
                )));
            }
        }
        RequestBody::Reader { reader, len: None } => {
            w.write_all(head).map_err(SendError::Socket)?;
            let mut chunked = ChunkedWriter::new(&mut *w);
            copy(reader, &mut chunked)?;
            chunked.finish().map_err(SendError::Socket)?;
        }
    }
    w.flush().map_err(SendError::Socket)
}

/// Copies `r` into `w`, telling the source's errors from the connection's.
fn copy(r: &mut impl Read, w: &mut impl Write) -> std::result::Result<u64, SendError> {
    let mut buf = vec![0u8; COPY_BUFFER];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(SendError::Source(e)),
        };
        w.write_all(&buf[..n]).map_err(SendError::Socket)?;
        total += n as u64;
    }
}

/// Reads one response head into `buf` and parses it.
fn read_head(
    client: &Inner,
    link: &mut Link,
    timing: &Timing,
    req: &Outgoing<'_>,
    buf: &mut Vec<u8>,
) -> std::result::Result<ResponseHead, Failed> {
    let url = req.url;
    let protocol = |violation| Failed {
        error: Error::Protocol {
            url: url.to_string(),
            violation,
        },
        stale: false,
    };
    buf.clear();
    let mut scan = HeadScan::default();
    let bounds = loop {
        link.arm(timing)
            .map_err(|e| socket_failure(url, timing, e, buf.is_empty()))?;
        let available = link
            .fill_buf()
            .map_err(|e| socket_failure(url, timing, e, buf.is_empty()))?;
        if available.is_empty() {
            if buf.is_empty() {
                return Err(Failed {
                    error: Error::Io {
                        url: url.to_string(),
                        source: io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "connection closed before any response byte",
                        ),
                    },
                    stale: true,
                });
            }
            return Err(protocol(Violation::TruncatedHead));
        }
        let old = buf.len();
        let n = available.len();
        buf.extend_from_slice(available);
        match scan.scan(buf, &client.config.head_limits) {
            Ok(Some(bounds)) => {
                link.consume(bounds.end - old);
                buf.truncate(bounds.end);
                break bounds;
            }
            Ok(None) => link.consume(n),
            Err(f) => return Err(protocol(Violation::from_failure(f))),
        }
    };
    parse_response(
        buf,
        bounds.start,
        client.config.head_limits.max_headers,
        req.method == "HEAD",
    )
    .map_err(protocol)
}
