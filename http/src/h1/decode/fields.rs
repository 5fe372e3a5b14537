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

/// Ones in the high bit of every byte.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// Every byte `b`.
const fn bytes(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// High bits flagging the bytes of `w` (little-endian order) outside `lo..=0x7e`; the lowest
/// flagged byte is exactly the first such byte (a borrow can flag a byte only above a flagged
/// one). `lo` is at most 0x80.
#[inline(always)]
fn outside_visible(w: u64, lo: u8) -> u64 {
    let below = w.wrapping_sub(bytes(lo)) & !w & HIGH;
    let x = w ^ bytes(0x7f);
    let del = x.wrapping_sub(bytes(1)) & !x & HIGH;
    below | del | (w & HIGH)
}

/// The eight bytes at `i`, little-endian, if `buf` holds them.
#[inline(always)]
fn word_at(buf: &[u8], i: usize) -> Option<u64> {
    let chunk: [u8; 8] = buf.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// The first index at or after `i` whose byte is not a field-value byte (`buf.len()` if
/// none): eight bytes at a time while they are SP or VCHAR (the bytes of nearly every value),
/// byte by byte through [`FIELD_VALUE`] from the first other one when that is HTAB or
/// obs-text (any other, CR at a line's end above all, ends the value there).
#[inline(always)]
fn skip_field_value(buf: &[u8], mut i: usize) -> usize {
    while let Some(w) = word_at(buf, i) {
        let m = outside_visible(w, b' ');
        if m != 0 {
            let k = m.trailing_zeros() / 8;
            let c = (w >> (8 * k)) as u8;
            let j = i + k as usize;
            // Of the bytes `outside_visible` flags, only HTAB and obs-text are field-value
            // bytes.
            return match c == b'\t' || c >= 0x80 {
                true => skip(buf, j, &FIELD_VALUE),
                false => j,
            };
        }
        i += 8;
    }
    skip(buf, i, &FIELD_VALUE)
}

/// Whether the field name `name` is `lower` in any case. `name` must be a token (as
/// [`parse_field`] returns it) and `lower` lowercase letters and `-`: among token bytes only
/// a letter's two cases set to `l` by OR-ing 0x20 (`-` stays `-`; only CR would also become
/// it), so one OR per byte replaces the case folding.
#[inline(always)]
pub(crate) fn name_is(name: &[u8], lower: &[u8]) -> bool {
    name.len() == lower.len() && name.iter().zip(lower).all(|(&b, &l)| b | 0x20 == l)
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
    i = skip_field_value(buf, v0);
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
mod tests {
    use super::*;

    #[test]
    fn name_is_folds_case_like_the_standard_comparison_for_tokens() {
        let names: [&[u8]; 5] = [
            b"host",
            b"expect",
            b"connection",
            b"content-length",
            b"transfer-encoding",
        ];
        for lower in names {
            for at in 0..lower.len() {
                for b in 0..=255u8 {
                    if !TCHAR[usize::from(b)] {
                        continue;
                    }
                    let mut name = lower.to_vec();
                    name[at] = b;
                    assert_eq!(
                        name_is(&name, lower),
                        name.eq_ignore_ascii_case(lower),
                        "{name:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn value_scan_stops_where_the_table_does() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for b in 0..=255u8 {
            for at in 0..12 {
                let mut v = b"abcdefghijklmnopq".to_vec();
                v[at] = b;
                cases.push(v.clone());
                v.truncate(at + 1);
                cases.push(v);
            }
        }
        for v in &cases {
            for from in 0..v.len() {
                assert_eq!(
                    skip_field_value(v, from),
                    skip(v, from, &FIELD_VALUE),
                    "{v:?} from {from}"
                );
            }
        }
    }

    #[test]
    fn word_masks_flag_the_first_byte_exactly() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut w = [b'x'; 8];
                w[at] = b;
                // A byte after it that borrows must not hide it.
                if at < 7 {
                    w[at + 1] = 0;
                }
                let w = u64::from_le_bytes(w);
                let first = |m: u64| (m != 0).then(|| m.trailing_zeros() / 8);
                let outside = !(0x20..=0x7e).contains(&b);
                let expect = if outside {
                    Some(at as u32)
                } else if at < 7 {
                    Some(at as u32 + 1)
                } else {
                    None
                };
                assert_eq!(
                    first(outside_visible(w, b' ')),
                    expect,
                    "byte {b:#x} at {at}"
                );
            }
        }
    }
}
