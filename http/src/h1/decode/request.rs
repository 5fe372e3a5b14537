//! Strict request-head parser (RFC 9112 §2–§6) over a complete head in `&[u8]`.
//!
//! It records byte spans instead of borrowing, so the connection can keep one reusable [`Head`]
//! per connection and hand out views without a lifetime-bound header array. The framing rules
//! of RFC 9112 §6.3 are applied here, numbered as in the RFC.

use memchr::memchr;
use moria_streams::http_grammar::{alnum_plus, trim_ows, FIELD_VALUE, TCHAR};

use super::failure::Failure;
use crate::limits::Limits;
use crate::method::{Method, Version};

/// A byte range inside the head buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The bytes this span covers in `buf`.
    #[inline]
    pub(crate) fn get<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        &buf[self.start as usize..self.end as usize]
    }
}

/// How the request body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (RFC 9112 §6.3 rule 7).
    Empty,
    /// Exactly this many bytes (rule 6).
    Length(u64),
    /// Chunked transfer coding (rule 4).
    Chunked,
}

/// One parsed request head, reused across the requests of a connection.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    /// The method.
    pub method: Method,
    /// The method's text.
    pub method_span: Span,
    /// The raw request target.
    pub target: Span,
    /// The path part of the target (still percent-encoded).
    pub path: Span,
    /// The query after `?`, if any.
    pub query: Option<Span>,
    /// Whether the path holds a `%` escape (and needs decoding).
    pub path_escaped: bool,
    /// The version.
    pub version: Version,
    /// Field lines: name and trimmed value.
    pub fields: Vec<(Span, Span)>,
    /// Body framing.
    pub framing: Framing,
    /// Whether the client allows the connection to stay open.
    pub keep_alive: bool,
    /// Whether the client waits for `100 Continue` before sending the body.
    pub expect_continue: bool,
}

impl Default for Head {
    fn default() -> Self {
        Head {
            method: Method::Get,
            method_span: Span::default(),
            target: Span::default(),
            path: Span::default(),
            query: None,
            path_escaped: false,
            version: Version::Http11,
            fields: Vec::with_capacity(16),
            framing: Framing::Empty,
            keep_alive: true,
            expect_continue: false,
        }
    }
}

/// Bytes allowed in a request target: visible ASCII (non-ASCII must be percent-encoded).
static TARGET: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0x21;
    while i < 0x7f {
        t[i] = true;
        i += 1;
    }
    t
};

/// Characters an authority (Host) may hold: unreserved, sub-delims, ':', '[', ']', '%'.
static HOST: [bool; 256] = alnum_plus(b"-._~!$&'()*+,;=:[]%");

/// Parses the complete head `buf[start..]` (the scanner found its end) into `head`.
pub(crate) fn parse_head(
    buf: &[u8],
    start: usize,
    limits: &Limits,
    head: &mut Head,
) -> Result<(), Failure> {
    head.fields.clear();
    head.query = None;
    head.expect_continue = false;
    let mut pos = parse_request_line(buf, start, limits, head)?;

    let mut content_length: Option<u64> = None;
    let mut te = TeState::default();
    let mut hosts = 0usize;
    let mut close = false;
    let mut keep_alive = false;
    loop {
        if line_end(buf, pos).is_some() {
            break;
        }
        let (name, value, next) = parse_field(buf, pos)?;
        pos = next;
        if head.fields.len() == limits.max_headers {
            return Err(Failure::TooManyHeaders);
        }
        head.fields.push((name, value));
        let n = name.get(buf);
        let v = value.get(buf);
        match n.len() {
            4 if n.eq_ignore_ascii_case(b"host") => {
                // RFC 9112 §3.2: exactly one Host, with a valid value.
                hosts += 1;
                if hosts > 1 {
                    return Err(Failure::DuplicateHost);
                }
                if !v.iter().all(|&c| HOST[c as usize]) {
                    return Err(Failure::BadHost);
                }
            }
            // RFC 9110 §10.1.1: only 100-continue is defined; HTTP/1.0 ignores Expect.
            6 if n.eq_ignore_ascii_case(b"expect") && head.version == Version::Http11 => {
                if v.eq_ignore_ascii_case(b"100-continue") {
                    head.expect_continue = true;
                } else {
                    return Err(Failure::UnknownExpectation);
                }
            }
            10 if n.eq_ignore_ascii_case(b"connection") => {
                for t in list(v) {
                    if t.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if t.eq_ignore_ascii_case(b"keep-alive") {
                        keep_alive = true;
                    }
                }
            }
            14 if n.eq_ignore_ascii_case(b"content-length") => {
                content_length = Some(parse_content_length(v, content_length)?);
            }
            17 if n.eq_ignore_ascii_case(b"transfer-encoding") => te.add(v),
            _ => {}
        }
    }

    if head.version == Version::Http11 && hosts == 0 {
        return Err(Failure::MissingHost);
    }
    head.keep_alive = match head.version {
        Version::Http11 => !close,
        Version::Http10 => keep_alive && !close,
    };
    head.framing = framing(head.version, content_length, &te, limits)?;
    Ok(())
}

/// The body framing of RFC 9112 §6.3 (rules 1 and 2 concern responses).
fn framing(
    version: Version,
    content_length: Option<u64>,
    te: &TeState,
    limits: &Limits,
) -> Result<Framing, Failure> {
    if te.seen {
        // §6.1: a Transfer-Encoding in HTTP/1.0 means the framing is faulty.
        if version == Version::Http10 {
            return Err(Failure::TransferEncodingOnHttp10);
        }
        // Rule 3: Content-Length with Transfer-Encoding is a smuggling attempt; refuse it.
        if content_length.is_some() {
            return Err(Failure::ContentLengthWithTransferEncoding);
        }
        // Rule 4: chunked must be the final coding (and, being non-repeatable, appear once).
        if te.chunked > 1 || (te.chunked == 1 && !te.chunked_last) {
            return Err(Failure::ChunkedNotFinal);
        }
        // §6.1: a coding we do not implement is 501.
        if te.other || te.chunked == 0 {
            return Err(Failure::UnsupportedTransferCoding);
        }
        return Ok(Framing::Chunked);
    }
    match content_length {
        // Rule 6: a valid Content-Length gives the length.
        Some(n) if n > limits.max_body => Err(Failure::BodyTooLarge),
        Some(0) => Ok(Framing::Empty),
        Some(n) => Ok(Framing::Length(n)),
        // Rule 7: a request with neither has no body.
        None => Ok(Framing::Empty),
    }
}

/// Transfer codings seen across all Transfer-Encoding lines.
#[derive(Default)]
pub(crate) struct TeState {
    /// Whether any Transfer-Encoding line was seen.
    pub seen: bool,
    /// How many times `chunked` was listed.
    pub chunked: u32,
    /// Whether `chunked` was the last coding listed.
    pub chunked_last: bool,
    /// Whether a coding other than `chunked` was listed.
    pub other: bool,
}

impl TeState {
    /// Records the codings of one Transfer-Encoding field value.
    pub(crate) fn add(&mut self, v: &[u8]) {
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

/// Rule 5: Content-Length is 1*DIGIT, or a list of identical values; every occurrence must
/// agree with the previous ones.
pub(crate) fn parse_content_length(v: &[u8], prev: Option<u64>) -> Result<u64, Failure> {
    let mut found = prev;
    let mut any = false;
    for item in v.split(|&c| c == b',') {
        let item = trim_ows(item);
        if item.is_empty() || !item.iter().all(u8::is_ascii_digit) {
            return Err(Failure::BadContentLength);
        }
        let mut n: u64 = 0;
        for &d in item {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or(Failure::BadContentLength)?;
        }
        match found {
            Some(f) if f != n => return Err(Failure::ConflictingContentLength),
            _ => found = Some(n),
        }
        any = true;
    }
    match (any, found) {
        (true, Some(n)) => Ok(n),
        _ => Err(Failure::BadContentLength),
    }
}

/// Non-empty, OWS-trimmed elements of a comma-separated list (RFC 9110 §5.6.1).
pub(crate) fn list(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v.split(|&c| c == b',')
        .map(trim_ows)
        .filter(|t| !t.is_empty())
}

/// The byte at `i`; past the end, LF (the scanner guarantees the head ends with an empty line,
/// and this keeps any other input from reading out of bounds).
#[inline]
fn at(buf: &[u8], i: usize) -> u8 {
    buf.get(i).copied().unwrap_or(b'\n')
}

/// The first index at or after `i` whose byte is not in `table` (`buf.len()` if none).
#[inline]
fn skip(buf: &[u8], i: usize, table: &[bool; 256]) -> usize {
    let rest = buf.get(i..).unwrap_or_default();
    i + rest
        .iter()
        .position(|&c| !table[c as usize])
        .unwrap_or(rest.len())
}

/// If a line ends at `i` (LF, or CR LF), the index after the line ending.
#[inline]
pub(crate) fn line_end(buf: &[u8], i: usize) -> Option<usize> {
    match at(buf, i) {
        b'\n' => Some(i + 1),
        b'\r' if at(buf, i + 1) == b'\n' => Some(i + 2),
        _ => None,
    }
}

/// The failure for an unexpected byte at `i`: a bare CR (§2.2), an early line end, or another.
fn unexpected(buf: &[u8], i: usize, early_end: Failure, other: Failure) -> Failure {
    match at(buf, i) {
        b'\r' if at(buf, i + 1) != b'\n' => Failure::BareCr,
        b'\r' | b'\n' => early_end,
        _ => other,
    }
}

/// The end of a non-empty run of `table` bytes from `from` that a single SP follows.
fn element(buf: &[u8], from: usize, table: &[bool; 256], bad: Failure) -> Result<usize, Failure> {
    let end = skip(buf, from, table);
    match at(buf, end) {
        b' ' if end > from => Ok(end),
        b' ' => Err(Failure::BadRequestLine),
        _ => Err(unexpected(buf, end, Failure::BadRequestLine, bad)),
    }
}

/// `method SP request-target SP HTTP-version` (RFC 9112 §3), single spaces only, validated in
/// one pass; returns where the field lines start.
fn parse_request_line(
    buf: &[u8],
    start: usize,
    limits: &Limits,
    head: &mut Head,
) -> Result<usize, Failure> {
    let method_end = element(buf, start, &TCHAR, Failure::BadMethod)?;
    let t0 = method_end + 1;
    let t_end = element(buf, t0, &TARGET, Failure::BadTarget)?;
    let v0 = t_end + 1;
    let nl = match memchr(b'\n', buf.get(v0..).unwrap_or_default()) {
        Some(k) => v0 + k,
        None => return Err(Failure::BadRequestLine),
    };
    let v_end = if nl > v0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    if v_end - start > limits.max_request_line {
        return Err(Failure::RequestLineTooLong);
    }
    head.version = parse_version(&buf[v0..v_end])?;
    head.method = Method::from_bytes(&buf[start..method_end]);
    head.method_span = Span::new(start, method_end);
    head.target = Span::new(t0, t_end);
    split_target(head.method, &buf[t0..t_end], t0, head)?;
    head.path_escaped = memchr(b'%', head.path.get(buf)).is_some();
    Ok(nl + 1)
}

/// Locates the path and query of the target's form (RFC 9112 §3.2).
fn split_target(method: Method, target: &[u8], t0: usize, head: &mut Head) -> Result<(), Failure> {
    let path_start = match target {
        // origin-form
        [b'/', ..] => 0,
        // asterisk-form, OPTIONS only
        b"*" if method == Method::Options => {
            head.path = Span::new(t0, t0 + 1);
            return Ok(());
        }
        // authority-form, CONNECT only: no path
        _ if method == Method::Connect => {
            head.path = Span::new(t0, t0);
            return Ok(());
        }
        // absolute-form: scheme "://" authority path-abempty
        _ => {
            let sep = memchr::memmem::find(target, b"://").ok_or(Failure::BadTarget)?;
            let scheme = &target[..sep];
            if !scheme.eq_ignore_ascii_case(b"http") && !scheme.eq_ignore_ascii_case(b"https") {
                return Err(Failure::BadTarget);
            }
            let auth = sep + 3;
            match target[auth..].iter().position(|&c| c == b'/' || c == b'?') {
                Some(i) => auth + i,
                None => target.len(),
            }
        }
    };
    let rest = &target[path_start..];
    match memchr(b'?', rest) {
        Some(q) => {
            head.path = Span::new(t0 + path_start, t0 + path_start + q);
            head.query = Some(Span::new(t0 + path_start + q + 1, t0 + target.len()));
        }
        None => head.path = Span::new(t0 + path_start, t0 + target.len()),
    }
    Ok(())
}

/// `HTTP/DIGIT.DIGIT`: 1.0 and 1.1 (and later 1.x, served as 1.1); other majors are 505.
fn parse_version(v: &[u8]) -> Result<Version, Failure> {
    match v {
        [b'H', b'T', b'T', b'P', b'/', maj, b'.', min]
            if maj.is_ascii_digit() && min.is_ascii_digit() =>
        {
            match (maj, min) {
                (b'1', b'0') => Ok(Version::Http10),
                (b'1', _) => Ok(Version::Http11),
                _ => Err(Failure::UnsupportedVersion),
            }
        }
        _ if v.contains(&b'\r') => Err(Failure::BareCr),
        _ if v.contains(&b' ') => Err(Failure::BadRequestLine),
        _ => Err(Failure::BadVersion),
    }
}

/// `field-name ":" OWS field-value OWS` (RFC 9112 §5) at `pos`, validated in one pass;
/// returns the name, the trimmed value and where the next line starts.
pub(crate) fn parse_field(buf: &[u8], pos: usize) -> Result<(Span, Span, usize), Failure> {
    // §5.2: obsolete line folding (a line starting with whitespace) is rejected.
    if matches!(at(buf, pos), b' ' | b'\t') {
        return Err(Failure::ObsFold);
    }
    let mut i = skip(buf, pos, &TCHAR);
    let name_end = i;
    match at(buf, i) {
        b':' if i > pos => {}
        // §5.1: no whitespace between the field name and the colon.
        b' ' | b'\t' => {
            while matches!(at(buf, i), b' ' | b'\t') {
                i += 1;
            }
            return Err(match at(buf, i) {
                b':' if name_end > pos => Failure::WhitespaceBeforeColon,
                _ => Failure::BadHeaderName,
            });
        }
        _ => {
            return Err(unexpected(
                buf,
                i,
                Failure::BadHeaderName,
                Failure::BadHeaderName,
            ))
        }
    }
    i += 1;
    while matches!(at(buf, i), b' ' | b'\t') {
        i += 1;
    }
    let v0 = i;
    // §2.2 and §5.5: no bare CR, no other control characters.
    i = skip(buf, v0, &FIELD_VALUE);
    let Some(next) = line_end(buf, i) else {
        return Err(unexpected(
            buf,
            i,
            Failure::BadHeaderValue,
            Failure::BadHeaderValue,
        ));
    };
    let mut v_end = i;
    while v_end > v0 && matches!(buf[v_end - 1], b' ' | b'\t') {
        v_end -= 1;
    }
    Ok((Span::new(pos, name_end), Span::new(v0, v_end), next))
}

#[cfg(test)]
mod tests;
