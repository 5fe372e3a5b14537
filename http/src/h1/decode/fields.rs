//! The field-line grammar both head parsers share (RFC 9112 §2.2, §5; RFC 9110 §5.6.1): byte
//! spans, line ends, one field line, comma-separated lists, and the bounds-safe cursor helpers
//! the request line parser also uses. Each rule is written once, here.

use moria_streams::http_grammar::{trim_ows, FIELD_VALUE, TCHAR};

use super::failure::Failure;

/// A byte range inside the head buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub(crate) fn new(start: usize, end: usize) -> Span {
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
pub(crate) fn at(buf: &[u8], i: usize) -> u8 {
    buf.get(i).copied().unwrap_or(b'\n')
}

/// The first index at or after `i` whose byte is not in `table` (`buf.len()` if none).
#[inline]
pub(crate) fn skip(buf: &[u8], i: usize, table: &[bool; 256]) -> usize {
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
pub(crate) fn unexpected(buf: &[u8], i: usize, early_end: Failure, other: Failure) -> Failure {
    match at(buf, i) {
        b'\r' if at(buf, i + 1) != b'\n' => Failure::BareCr,
        b'\r' | b'\n' => early_end,
        _ => other,
    }
}

/// `field-name ":" OWS field-value OWS` (RFC 9112 §5) at `pos`, validated in one pass;
/// returns the name, the trimmed value and where the next line starts. Inlined into the head
/// loops: a call returned its three results through memory, a third of its cost for a short
/// line.
#[inline(always)]
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
