//! Strict request-head parser (RFC 9112 §2–§6) over a complete head in `&[u8]`.
//!
//! It records byte spans instead of borrowing, so the connection can keep one reusable [`Head`]
//! per connection and hand out views without a lifetime-bound header array. The framing rules
//! of RFC 9112 §6.3 that only requests have are applied here (the shared ones are in
//! `framing.rs`), numbered as in the RFC; the field grammar is `fields.rs`, shared with the
//! response parser.

use memchr::memchr;
use moria_streams::http_grammar::{alnum_plus, TCHAR};

use super::failure::Failure;
use super::fields::{at, line_end, name_is, parse_field, skip, unexpected, Span};
use super::framing::{Declared, Framing, FramingFields};
use super::scan::{HeadBounds, HeadScan};
use crate::limits::Limits;
use crate::method::{Method, Version};

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

impl Head {
    /// `METHOD SP target` as one range of the request line (single spaces only), for log lines
    /// and the reclaimer.
    pub(crate) fn route(&self) -> std::ops::Range<usize> {
        self.method_span.start as usize..self.target.end as usize
    }
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

/// Whether every byte of `v` is in `table`, without a branch per byte (a Host value is short:
/// an early exit saves nothing).
#[inline(always)]
fn all_in(v: &[u8], table: &[bool; 256]) -> bool {
    v.iter().fold(true, |ok, &c| ok & table[usize::from(c)])
}

/// The request head at the start of `buf`, parsed into `head`: `Ok(Some)` with its bounds once
/// it is complete, `Ok(None)` while bytes are missing, `Err` with the failure to answer.
///
/// One pass over a head that arrived whole (the common case): the parser runs first, on
/// everything buffered, and its result stands when the head's empty line lies inside `buf` —
/// the parser's grammar lets no LF into a line before that line's end, so it stops where the
/// scanner would. Otherwise (bytes still missing, or a head the parser refuses) the scanner
/// finds the end, counting limits as the head grows, and the parser runs on exactly the head,
/// so every failure is the one the scanned path gives. The early parse runs once per head
/// (`scan` is no longer fresh after it), so a head trickling in still costs linear time.
///
/// The whole-head case runs the parser inlined here, request line and all (the calls were ~50
/// instructions of a pipelined request's ~1,300: saved registers, results through memory); the
/// scanned path stays out of line.
#[inline]
pub(crate) fn take_head(
    scan: &mut HeadScan,
    buf: &[u8],
    limits: &Limits,
    head: &mut Head,
) -> Result<Option<HeadBounds>, Failure> {
    // Tolerated empty lines before the request line are the scanner's to skip.
    let plain_start = !matches!(buf.first(), None | Some(b'\r' | b'\n'));
    if plain_start && scan.is_fresh() {
        if let Ok(end) = parse_head_inline(buf, 0, limits, head) {
            if end <= buf.len() && end <= limits.max_head {
                return Ok(Some(HeadBounds { start: 0, end }));
            }
        }
    }
    take_scanned(scan, buf, limits, head)
}

/// [`take_head`] once the one-pass parse did not stand: the scanner finds the head's end, then
/// the parser runs on exactly the head.
#[inline(never)]
fn take_scanned(
    scan: &mut HeadScan,
    buf: &[u8],
    limits: &Limits,
    head: &mut Head,
) -> Result<Option<HeadBounds>, Failure> {
    let Some(bounds) = scan.scan(buf, limits)? else {
        return Ok(None);
    };
    scan.reset();
    parse_head(&buf[..bounds.end], bounds.start, limits, head)?;
    Ok(Some(bounds))
}

/// Parses the head at `buf[start..]` into `head` and returns where it ends: the index after
/// its empty line. Past the end of `buf` the parser reads LF (see [`at`]), so on a buffer the
/// head does not fit in it returns an end beyond `buf.len()` (or a failure); on a complete
/// head, its exact end.
#[inline(never)]
pub(crate) fn parse_head(
    buf: &[u8],
    start: usize,
    limits: &Limits,
    head: &mut Head,
) -> Result<usize, Failure> {
    parse_head_inline(buf, start, limits, head)
}

/// [`parse_head`], for the call site that inlines it ([`take_head`]'s whole-head case).
#[inline(always)]
fn parse_head_inline(
    buf: &[u8],
    start: usize,
    limits: &Limits,
    head: &mut Head,
) -> Result<usize, Failure> {
    head.fields.clear();
    head.query = None;
    head.expect_continue = false;
    let mut pos = parse_request_line(buf, start, limits, head)?;

    let mut framing = FramingFields::default();
    let mut hosts = 0usize;
    let end = loop {
        if let Some(end) = line_end(buf, pos) {
            break end;
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
            4 if name_is(n, b"host") => {
                // RFC 9112 §3.2: exactly one Host, with a valid value.
                hosts += 1;
                if hosts > 1 {
                    return Err(Failure::DuplicateHost);
                }
                if !all_in(v, &HOST) {
                    return Err(Failure::BadHost);
                }
            }
            // RFC 9110 §10.1.1: only 100-continue is defined; HTTP/1.0 ignores Expect.
            6 if name_is(n, b"expect") && head.version == Version::Http11 => {
                if v.eq_ignore_ascii_case(b"100-continue") {
                    head.expect_continue = true;
                } else {
                    return Err(Failure::UnknownExpectation);
                }
            }
            _ => framing.note(n, v)?,
        }
    };

    if head.version == Version::Http11 && hosts == 0 {
        return Err(Failure::MissingHost);
    }
    head.keep_alive = framing.persistent(head.version);
    head.framing = request_framing(head.version, &framing, limits)?;
    Ok(end)
}

/// The request body framing of RFC 9112 §6.3 (rules 1 and 2 concern responses).
#[inline(always)]
fn request_framing(
    version: Version,
    fields: &FramingFields,
    limits: &Limits,
) -> Result<Framing, Failure> {
    // §6.1: a Transfer-Encoding in HTTP/1.0 means the framing is faulty.
    if version == Version::Http10 && fields.has_transfer_encoding() {
        return Err(Failure::TransferEncodingOnHttp10);
    }
    match fields.declared()? {
        Declared::Chunked => Ok(Framing::Chunked),
        // Rule 6: a valid Content-Length gives the length.
        Declared::Length(n) if n > limits.max_body => Err(Failure::BodyTooLarge),
        Declared::Length(0) => Ok(Framing::Empty),
        Declared::Length(n) => Ok(Framing::Length(n)),
        // Rule 7: a request with neither has no body.
        Declared::Nothing => Ok(Framing::Empty),
    }
}

/// The end of a non-empty run of `table` bytes from `from` that a single SP follows.
fn element(buf: &[u8], from: usize, table: &[bool; 256], bad: Failure) -> Result<usize, Failure> {
    sp_after(buf, from, skip(buf, from, table), bad)
}

/// `end` when the run `from..end` is non-empty and a single SP follows it; otherwise the
/// failure for what is there (`bad` for a byte the run's grammar does not allow).
fn sp_after(buf: &[u8], from: usize, end: usize, bad: Failure) -> Result<usize, Failure> {
    match at(buf, end) {
        b' ' if end > from => Ok(end),
        b' ' => Err(Failure::BadRequestLine),
        _ => Err(unexpected(buf, end, Failure::BadRequestLine, bad)),
    }
}

/// `method SP request-target SP HTTP-version` (RFC 9112 §3), single spaces only, validated in
/// one pass; returns where the field lines start. Inlined into the parser (a call returned
/// through memory and saved registers: ~25 instructions of a request).
#[inline(always)]
fn parse_request_line(
    buf: &[u8],
    start: usize,
    limits: &Limits,
    head: &mut Head,
) -> Result<usize, Failure> {
    let (method, method_end) = match common_method(buf, start) {
        Some(known) => known,
        None => {
            let end = element(buf, start, &TCHAR, Failure::BadMethod)?;
            (Method::from_bytes(&buf[start..end]), end)
        }
    };
    let t0 = method_end + 1;
    let target = scan_target(buf, t0)?;
    let t_end = target.end;
    let v0 = t_end + 1;
    // The line end, found by one comparison when the version is the usual `HTTP/1.1` CR LF.
    let (v_end, nl, usual) = match is_usual_version(buf, v0) {
        true => (v0 + VERSION_LEN, v0 + VERSION_LEN + 1, true),
        false => {
            let nl = match memchr(b'\n', buf.get(v0..).unwrap_or_default()) {
                Some(k) => v0 + k,
                None => return Err(Failure::BadRequestLine),
            };
            let v_end = if nl > v0 && buf[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            (v_end, nl, false)
        }
    };
    // The limit before the version: a long line is 414 whatever its version says.
    if v_end - start > limits.max_request_line {
        return Err(Failure::RequestLineTooLong);
    }
    head.version = match usual {
        true => Version::Http11,
        false => parse_version(&buf[v0..v_end])?,
    };
    head.method = method;
    head.method_span = Span::new(start, method_end);
    head.target = Span::new(t0, t_end);
    split_target(head.method, &buf[t0..t_end], t0, &target, head)?;
    head.path_escaped = match target.first_percent {
        // The first `%` lies at or after the path's start: in the path only if before its end.
        Some(p) if p >= head.path.start as usize => p < head.path.end as usize,
        // One in an absolute-form's authority says nothing about the path.
        Some(_) => memchr(b'%', head.path.get(buf)).is_some(),
        None => false,
    };
    Ok(nl + 1)
}

/// The four most common methods followed by their SP, recognised by their first bytes
/// without the token scan: `(method, end of the method)`. `None` for anything else, which the
/// general path ([`element`] and [`Method::from_bytes`]) then reads, with the same result.
#[inline]
fn common_method(buf: &[u8], start: usize) -> Option<(Method, usize)> {
    let four: [u8; 4] = buf.get(start..start + 4)?.try_into().ok()?;
    match &four {
        b"GET " => Some((Method::Get, start + 3)),
        b"PUT " => Some((Method::Put, start + 3)),
        b"POST" if at(buf, start + 4) == b' ' => Some((Method::Post, start + 4)),
        b"HEAD" if at(buf, start + 4) == b' ' => Some((Method::Head, start + 4)),
        _ => None,
    }
}

/// Length of `HTTP/x.y`.
const VERSION_LEN: usize = 8;

/// Whether `HTTP/1.1` CR LF starts at `v0`: two loads and two comparisons (a slice comparison
/// compiled to ten byte comparisons).
#[inline(always)]
fn is_usual_version(buf: &[u8], v0: usize) -> bool {
    let Some(v) = buf.get(v0..v0 + VERSION_LEN + 2) else {
        return false;
    };
    let (word, crlf) = v.split_at(VERSION_LEN);
    let word: [u8; VERSION_LEN] = word.try_into().unwrap_or_default();
    let crlf: [u8; 2] = crlf.try_into().unwrap_or_default();
    u64::from_ne_bytes(word) == u64::from_ne_bytes(*b"HTTP/1.1")
        && u16::from_ne_bytes(crlf) == u16::from_ne_bytes(*b"\r\n")
}

/// A request target found by [`scan_target`]: where it ends, and the first `?` and `%` in it
/// (absolute indices), noted on the way so the path's split needs no second pass.
struct TargetScan {
    end: usize,
    first_query: Option<usize>,
    first_percent: Option<usize>,
}

/// The request target from `t0`: a non-empty run of [`TARGET`] bytes that a single SP follows
/// (as [`element`] checks), in one pass that also notes the first `?` and `%`.
fn scan_target(buf: &[u8], t0: usize) -> Result<TargetScan, Failure> {
    let rest = buf.get(t0..).unwrap_or_default();
    let mut first_query = None;
    let mut first_percent = None;
    let mut len = rest.len();
    for (i, &c) in rest.iter().enumerate() {
        if !TARGET[usize::from(c)] {
            len = i;
            break;
        }
        match c {
            b'?' if first_query.is_none() => first_query = Some(t0 + i),
            b'%' if first_percent.is_none() => first_percent = Some(t0 + i),
            _ => {}
        }
    }
    Ok(TargetScan {
        end: sp_after(buf, t0, t0 + len, Failure::BadTarget)?,
        first_query,
        first_percent,
    })
}

/// Locates the path and query of the target's form (RFC 9112 §3.2); `scan` is the target's
/// [`scan_target`].
#[inline(always)]
fn split_target(
    method: Method,
    target: &[u8],
    t0: usize,
    scan: &TargetScan,
    head: &mut Head,
) -> Result<(), Failure> {
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
    // The first `?` of the target starts the query: neither origin-form's path nor
    // absolute-form's scheme and authority (which end at it) can hold one before it.
    let (p0, t_end) = (t0 + path_start, t0 + target.len());
    match scan.first_query {
        Some(q) if q >= p0 => {
            head.path = Span::new(p0, q);
            head.query = Some(Span::new(q + 1, t_end));
        }
        Some(_) => return Err(Failure::BadTarget),
        None => head.path = Span::new(p0, t_end),
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

#[cfg(test)]
mod tests;
