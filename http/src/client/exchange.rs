//! One request on one connection: head and body out (holding a large body back until the
//! server says `100 Continue`), interim responses skipped, the final head in; and the single
//! retry on a fresh connection when a reused one turns out to be dead.

use std::io;

use super::body_reader::BodyReader;
use super::conn::{self, Connection};
use super::decode::{coding_of, Content};
use super::error::{Error, Phase, Result, Violation};
use super::pool::{Checkout, Pooled};
use super::proxy::ProxyServer;
use super::response::{Headers, Response};
use super::send::{length_of, send, RequestBody, SendError};
use super::timing::Timing;
use super::url::Url;
use super::Inner;
use crate::h1::{encode_request, read_response_head, BodyFraming, HeadError, ResponseHead};

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
    let proxy = client.proxies.for_url(req.url);
    let host = client.pool.host(req.url, proxy);
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
                connection: conn::open(
                    req.url,
                    proxy,
                    client.config.connect_timeout,
                    timing,
                    &client.tls,
                )
                .inspect_err(|e| match e {
                    Error::Tls { .. } | Error::TlsVerify { .. } => host.figures.tls_errors.inc(),
                    _ => host.figures.connect_errors.inc(),
                })?,
                slot,
                reused: false,
            },
        };
        let reused = pooled.reused;
        // Plain HTTP through a proxy: absolute-form targets and the proxy's credentials.
        let forward = proxy.filter(|_| !req.url.is_https());
        match attempt(client, pooled, &mut req, forward, timing) {
            Ok(r) => {
                host.figures.response(r.status());
                return Ok(r);
            }
            Err(f) if f.stale && reused && idempotent(req.method) && req.body.replayable() => {
                host.figures.retries.inc();
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

/// Whether an I/O error is a socket timeout expiring.
fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// The client error for a socket error, and whether it counts as stale.
fn socket_failure(url: &Url, timing: &Timing, e: io::Error, nothing_received: bool) -> Failed {
    if is_timeout(&e) {
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
    forward: Option<&ProxyServer>,
    timing: &Timing,
) -> std::result::Result<Response, Failed> {
    let url = req.url;
    let length = length_of(req.method, req.body);
    let expect = expects_continue(req.body, client.config.expect_continue);
    let mut extra = Vec::new();
    if expect {
        extra.push(("Expect".to_owned(), "100-continue".to_owned()));
    }
    let target = match forward {
        Some(proxy) => {
            if let Some(auth) = &proxy.authorization {
                extra.push(("Proxy-Authorization".to_owned(), auth.clone()));
            }
            url.to_string()
        }
        None => url.target().to_owned(),
    };
    let with_extra;
    let fields = if extra.is_empty() {
        req.fields
    } else {
        with_extra = [req.fields, &extra].concat();
        &with_extra[..]
    };
    let mut head = Vec::with_capacity(256);
    encode_request(
        &mut head,
        req.method,
        &target,
        &url.authority(),
        fields,
        length,
    );
    conn.connection
        .arm(timing)
        .map_err(|e| socket_failure(url, timing, e, true))?;
    let sent = |e| match e {
        SendError::Socket(e) => socket_failure(url, timing, e, true),
        SendError::Source(source) => Failed {
            error: Error::RequestBody {
                url: url.to_string(),
                source,
            },
            stale: false,
        },
    };
    let mut buf = Vec::new();
    let early = if expect {
        send(conn.connection.writer(), &head, &mut RequestBody::Empty).map_err(sent)?;
        head.clear();
        wait_continue(client, &mut conn.connection, timing, req, &mut buf)?
    } else {
        None
    };
    let head = match early {
        // RFC 9110 §10.1.1: a client that does not send the body it announced must close.
        Some(mut final_head) => {
            final_head.keep_alive = false;
            final_head
        }
        None => match send(conn.connection.writer(), &head, req.body) {
            Ok(()) => loop {
                let head = read_head(client, &mut conn.connection, timing, req, &mut buf)?;
                // Interim responses (RFC 9110 §15.2) precede the final one; 101 would be final
                // but is never asked for.
                if !(100..200).contains(&head.status) || head.status == 101 {
                    break head;
                }
            },
            // A server may answer (413, 401) and close before taking the whole body: that
            // answer is the response; without one, the failure to send stands.
            Err(SendError::Socket(e)) if !is_timeout(&e) => {
                match read_head(client, &mut conn.connection, timing, req, &mut buf) {
                    Ok(mut answer) if answer.status >= 200 => {
                        answer.keep_alive = false;
                        answer
                    }
                    _ => return Err(socket_failure(url, timing, e, true)),
                }
            }
            Err(e) => return Err(sent(e)),
        },
    };
    let url_text = url.to_string();
    let tls_resumed = conn.connection.tls_resumed();
    let coding = head
        .fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-encoding"))
        .and_then(|(_, v)| coding_of(v));
    let has_body = !matches!(head.framing, BodyFraming::None | BodyFraming::Length(0));
    let body = BodyReader::new(
        conn,
        head.framing,
        head.keep_alive,
        *timing,
        url_text.clone(),
    );
    let mut fields = head.fields;
    let body = match coding {
        Some(coding) if req.decode && has_body => {
            // The headers describe the body the caller reads: decoded, of unknown length.
            fields.retain(|(n, _)| {
                !n.eq_ignore_ascii_case("content-encoding")
                    && !n.eq_ignore_ascii_case("content-length")
            });
            Content::decoded(body, coding, client.config.bomb, url_text)
        }
        _ => Content::Identity(Box::new(body)),
    };
    Ok(Response {
        status: head.status,
        reason: head.reason,
        version: head.version,
        headers: Headers::new(fields),
        url: url.clone(),
        body,
        max_body: client.config.max_body,
        tls_resumed,
    })
}

/// Whether `body` is held back until the server agrees: unknown lengths, and known ones of at
/// least `min` bytes (`None`: never).
fn expects_continue(body: &RequestBody, min: Option<u64>) -> bool {
    let Some(min) = min else {
        return false;
    };
    match body {
        RequestBody::Empty => false,
        RequestBody::Bytes(b) => b.len() as u64 >= min,
        RequestBody::Reader { len: Some(n), .. } | RequestBody::File { len: n, .. } => *n >= min,
        RequestBody::Reader { len: None, .. } => true,
    }
}

/// After a head with `Expect: 100-continue`: `None` to send the body (the server said 100, or
/// stayed silent for the continue timeout, RFC 9110 §10.1.1), or the final response the server
/// answered without wanting the body.
fn wait_continue(
    client: &Inner,
    connection: &mut Connection,
    timing: &Timing,
    req: &Outgoing<'_>,
    buf: &mut Vec<u8>,
) -> std::result::Result<Option<ResponseHead>, Failed> {
    let wait = Timing {
        deadline: timing.deadline,
        idle: client.config.continue_timeout.min(timing.idle),
    };
    loop {
        match read_head(client, connection, &wait, req, buf) {
            Ok(head) if head.status == 100 => return Ok(None),
            Ok(head) if (100..200).contains(&head.status) && head.status != 101 => {}
            Ok(head) => return Ok(Some(head)),
            Err(Failed {
                error: Error::Timeout {
                    phase: Phase::Read, ..
                },
                ..
            }) if buf.is_empty() => return Ok(None),
            Err(f) => return Err(f),
        }
    }
}

/// Reads one response head into `buf` and parses it.
fn read_head(
    client: &Inner,
    connection: &mut Connection,
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
    let head_request = req.method == "HEAD";
    let limits = &client.config.head_limits;
    read_response_head(connection, buf, limits, head_request, |c| c.arm(timing)).map_err(
        |e| match e {
            HeadError::Io(e) => socket_failure(url, timing, e, buf.is_empty()),
            HeadError::Closed if buf.is_empty() => Failed {
                error: Error::Io {
                    url: url.to_string(),
                    source: io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed before any response byte",
                    ),
                },
                stale: true,
            },
            HeadError::Closed => protocol(Violation::TruncatedHead),
            HeadError::Violation(v) => protocol(v),
        },
    )
}
