//! The pure part of chunked decoding: one size line or one trailer line, as bytes, checked
//! against the RFC 9110/9112 grammar. No I/O, so every rule is unit-tested on byte strings.

use crate::http_grammar::{is_field_value_byte, is_ows, is_tchar, trim_ows};
use crate::Error;

fn skip_ows(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_ows(s[i]) {
        i += 1;
    }
    i
}

fn skip_token(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_tchar(s[i]) {
        i += 1;
    }
    i
}

/// Index just past a quoted-string starting at `s[i] == '"'`.
fn skip_quoted(s: &[u8], mut i: usize) -> Result<usize, Error> {
    i += 1;
    while i < s.len() {
        match s[i] {
            b'"' => return Ok(i + 1),
            b'\\' => {
                match s.get(i + 1) {
                    Some(&c) if is_field_value_byte(c) => i += 2,
                    _ => return Err(Error::InvalidChunkSize("bad escape in quoted extension")),
                }
                continue;
            }
            c if is_field_value_byte(c) => i += 1,
            _ => return Err(Error::InvalidChunkSize("bad byte in quoted extension")),
        }
    }
    Err(Error::InvalidChunkSize("unterminated quoted extension"))
}

/// Strips the CRLF that must end a line (the line ends with LF when this is called).
pub(crate) fn strip_crlf(line: &[u8]) -> Option<&[u8]> {
    line.strip_suffix(b"\r\n")
}

/// Parses a chunk-size line without its CRLF: returns the size and the extension bytes.
///
/// Whitespace after the size is tolerated before `;` or the line end (BWS), as hyper does.
pub(crate) fn parse_size_line(line: &[u8]) -> Result<(u64, usize), Error> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return Err(Error::InvalidChunkSize("no hex digits"));
    }
    let mut size: u64 = 0;
    for &b in &line[..digits] {
        let v = char::from(b).to_digit(16).map_or(0, u64::from);
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(v))
            .ok_or(Error::ChunkSizeOverflow)?;
    }
    let ext = &line[digits..];
    let mut i = skip_ows(ext, 0);
    while i < ext.len() {
        if ext[i] != b';' {
            return Err(Error::InvalidChunkSize("unexpected byte after chunk size"));
        }
        i = skip_ows(ext, i + 1);
        let name_end = skip_token(ext, i);
        if name_end == i {
            return Err(Error::InvalidChunkSize("chunk extension without a name"));
        }
        i = skip_ows(ext, name_end);
        if ext.get(i) == Some(&b'=') {
            i = skip_ows(ext, i + 1);
            i = match ext.get(i) {
                Some(b'"') => skip_quoted(ext, i)?,
                _ => {
                    let value_end = skip_token(ext, i);
                    if value_end == i {
                        return Err(Error::InvalidChunkSize("chunk extension without a value"));
                    }
                    value_end
                }
            };
            i = skip_ows(ext, i);
        }
    }
    Ok((size, ext.len()))
}

/// Parses a trailer field line without its CRLF into a name and a trimmed value.
pub(crate) fn parse_trailer_line(line: &[u8]) -> Result<(String, Vec<u8>), Error> {
    if line.first().is_some_and(|&b| is_ows(b)) {
        return Err(Error::InvalidTrailer("obsolete line folding"));
    }
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or(Error::InvalidTrailer("missing colon"))?;
    let name = &line[..colon];
    if name.is_empty() {
        return Err(Error::InvalidTrailer("empty field name"));
    }
    if !name.iter().all(|&b| is_tchar(b)) {
        return Err(Error::InvalidTrailer("invalid byte in field name"));
    }
    let value = trim_ows(&line[colon + 1..]);
    if !value.iter().all(|&b| is_field_value_byte(b)) {
        return Err(Error::InvalidTrailer("invalid byte in field value"));
    }
    let name = String::from_utf8_lossy(name).into_owned();
    Ok((name, value.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(line: &[u8]) -> Result<u64, Error> {
        parse_size_line(line).map(|(s, _)| s)
    }

    #[test]
    fn plain_hex_sizes() {
        assert_eq!(size(b"0").unwrap(), 0);
        assert_eq!(size(b"1a").unwrap(), 26);
        assert_eq!(size(b"FF").unwrap(), 255);
        assert_eq!(size(b"000000000000000000010").unwrap(), 16);
        assert_eq!(size(b"ffffffffffffffff").unwrap(), u64::MAX);
    }

    #[test]
    fn overflow_is_detected() {
        assert!(matches!(
            size(b"10000000000000000"),
            Err(Error::ChunkSizeOverflow)
        ));
    }

    #[test]
    fn signs_prefixes_and_empty_sizes_are_rejected() {
        for line in [&b""[..], b"+5", b"-5", b"0x5", b" 5", b";a=b", b"5 x", b"g"] {
            assert!(
                matches!(size(line), Err(Error::InvalidChunkSize(_))),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn extensions_follow_the_grammar() {
        assert_eq!(parse_size_line(b"5;a").unwrap(), (5, 2));
        assert_eq!(parse_size_line(b"5 ; a = b ;c").unwrap().0, 5);
        assert_eq!(parse_size_line(b"5;a=\"q \\\" s\"").unwrap().0, 5);
        assert_eq!(parse_size_line(b"5 \t").unwrap().0, 5);
        for line in [
            &b"5;"[..],
            b"5;=b",
            b"5;a=",
            b"5;a=\"open",
            b"5;a=b c",
            b"5;a\rb",
            b"5;a=\"\x01\"",
        ] {
            assert!(
                matches!(parse_size_line(line), Err(Error::InvalidChunkSize(_))),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn trailer_lines() {
        assert_eq!(
            parse_trailer_line(b"Expires: \t never \t").unwrap(),
            ("Expires".to_string(), b"never".to_vec())
        );
        assert_eq!(
            parse_trailer_line(b"X-Empty:").unwrap(),
            ("X-Empty".to_string(), Vec::new())
        );
        for line in [
            &b" folded"[..],
            b"no colon",
            b": value",
            b"Bad Name: v",
            b"Name : v",
            b"Name: a\x00b",
            b"Name: a\rb",
        ] {
            assert!(
                matches!(parse_trailer_line(line), Err(Error::InvalidTrailer(_))),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn crlf_is_required() {
        assert_eq!(strip_crlf(b"5\r\n"), Some(&b"5"[..]));
        assert_eq!(strip_crlf(b"5\n"), None);
    }
}
