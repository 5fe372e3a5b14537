//! The RFC 9110 field grammar, once for the workspace: the chunked decoder and encoder here and
//! moria-http's head parsers and the checks on every field it sends use these tables (lookups,
//! so a parser can skip a run of bytes with one table).

/// A byte table holding ASCII letters and digits plus `extra`, for building grammar tables.
pub const fn alnum_plus(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).is_ascii_alphanumeric();
        i += 1;
    }
    let mut k = 0;
    while k < extra.len() {
        t[extra[k] as usize] = true;
        k += 1;
    }
    t
}

/// `tchar` (RFC 9110 §5.6.2), indexed by byte: the bytes of a token (method, field name).
pub static TCHAR: [bool; 256] = alnum_plus(b"!#$%&'*+-.^_`|~");

/// Field-value bytes (RFC 9110 §5.5), indexed by byte: VCHAR, obs-text, SP and HTAB.
pub static FIELD_VALUE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i == 0x09 || (i >= 0x20 && i != 0x7f);
        i += 1;
    }
    t
};

/// Whether `b` is a `tchar`.
#[inline]
pub fn is_tchar(b: u8) -> bool {
    TCHAR[usize::from(b)]
}

/// Whether `b` may appear in a field value.
#[inline]
pub fn is_field_value_byte(b: u8) -> bool {
    FIELD_VALUE[usize::from(b)]
}

/// Whether `s` is a token (RFC 9110 §5.6.2): what a method or a field name must be.
pub fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| is_tchar(b))
}

/// Whether `s` may be sent as a field value: no CR, LF or other control byte (RFC 9110 §5.5).
pub fn is_field_value(s: &[u8]) -> bool {
    s.iter().all(|&b| is_field_value_byte(b))
}

/// Whether `b` is optional whitespace (`OWS`/`BWS`): SP or HTAB.
#[inline]
pub fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `s` without leading and trailing `OWS`.
pub fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_the_rfc_definitions() {
        for b in 0..=255u8 {
            let tchar = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            assert_eq!(is_tchar(b), tchar, "tchar {b:#04x}");
            let vchar = (0x21..=0x7e).contains(&b);
            let value = vchar || b >= 0x80 || b == b' ' || b == b'\t';
            assert_eq!(is_field_value_byte(b), value, "field-value {b:#04x}");
        }
    }

    #[test]
    fn names_and_values_are_checked() {
        assert!(is_token(b"X-Ok"));
        assert!(!is_token(b"Bad Name"));
        assert!(!is_token(b""));
        assert!(is_field_value(b"a b\tc"));
        assert!(!is_field_value(b"a\r\nInjected: 1"));
    }

    #[test]
    fn trims_only_sp_and_htab() {
        assert_eq!(trim_ows(b" \t a b \t "), b"a b");
        assert_eq!(trim_ows(b"\r a \n"), b"\r a \n");
        assert_eq!(trim_ows(b" \t "), b"");
    }
}
