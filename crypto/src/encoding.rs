//! Text encodings, once for the workspace: lowercase hex, padded base64 (RFC 4648 §4) and
//! unpadded base64url (§5), both decoding only the canonical form.

const HEX: &[u8; 16] = b"0123456789abcdef";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// Bytes of a hex string (either case); `None` if it is not hex.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2)
        .map(|pair| Some((hex_value(pair[0])? << 4) | hex_value(pair[1])?))
        .collect()
}

fn hex_value(c: u8) -> Option<u8> {
    char::from(c).to_digit(16).map(|d| d as u8)
}

/// Padded base64 (RFC 4648 §4) of `bytes`, appended to `out`.
pub fn base64_into(bytes: &[u8], out: &mut Vec<u8>) {
    encode(bytes, B64, true, out);
}

/// Padded base64 (RFC 4648 §4) of `bytes`.
pub fn base64(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    encode(bytes, B64, true, &mut out);
    out.into_iter().map(char::from).collect()
}

/// Bytes of padded base64 text; `None` on any character outside the alphabet, missing or
/// misplaced padding, or non-zero bits after the last byte (only the canonical form decodes).
pub fn from_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    let data = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    let pad = text.len() - data.len();
    if !text.len().is_multiple_of(4) || (pad > 0 && data.len() % 4 + pad != 4) {
        return None;
    }
    decode(data, B64)
}

/// Unpadded base64url (RFC 4648 §5) of `bytes`, as JWS uses it.
pub fn base64url(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    encode(bytes, B64URL, false, &mut out);
    out.into_iter().map(char::from).collect()
}

/// Bytes of unpadded base64url text; `None` on any character outside the alphabet, padding,
/// an impossible length, or non-zero bits after the last byte.
pub fn from_base64url(text: &str) -> Option<Vec<u8>> {
    decode(text.as_bytes(), B64URL)
}

/// Encodes `bytes` with `alphabet`, padding the last group with `=` when `pad`.
fn encode(bytes: &[u8], alphabet: &[u8; 64], pad: bool, out: &mut Vec<u8>) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize]);
        }
        if pad {
            out.extend(std::iter::repeat_n(b'=', 3 - chunk.len()));
        }
    }
}

/// Decodes unpadded base64 in `alphabet`, canonical form only.
fn decode(text: &[u8], alphabet: &[u8; 64]) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(sextet(alphabet, c)?) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        let keep = chunk.len() - 1;
        // Bits below the last full byte must be zero (canonical encoding).
        if bytes[1 + keep..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&bytes[1..1 + keep]);
    }
    Some(out)
}

/// The value of base64 digit `c` in `alphabet` (the alphabets differ only in the last two).
fn sextet(alphabet: &[u8; 64], c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        _ if c == alphabet[62] => Some(62),
        _ if c == alphabet[63] => Some(63),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        assert_eq!(from_hex("00ABff"), Some(vec![0x00, 0xab, 0xff]));
        assert_eq!(from_hex("0"), None);
        assert_eq!(from_hex("zz"), None);
    }

    #[test]
    fn base64url_rfc4648_vectors() {
        // RFC 4648 §10, without padding.
        let cases = [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64url(plain.as_bytes()), encoded);
            assert_eq!(from_base64url(encoded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn base64url_uses_url_alphabet() {
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(from_base64url("-_8").unwrap(), vec![0xfb, 0xff]);
    }

    #[test]
    fn base64url_rejects_bad_input() {
        assert_eq!(from_base64url("Zg=="), None, "padding");
        assert_eq!(from_base64url("Z+8"), None, "standard alphabet");
        assert_eq!(from_base64url("Zm9vY"), None, "impossible length");
        assert_eq!(from_base64url("Zh"), None, "non-zero trailing bits");
    }

    #[test]
    fn base64_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
            assert_eq!(from_base64(encoded).unwrap(), plain.as_bytes());
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(from_base64(&base64(&all)).unwrap(), all);
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn base64_rejects_bad_input() {
        for bad in [
            "Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9*", "====", "Zm9v\n", "Zh==", "Zm9=", "-_8=",
        ] {
            assert_eq!(from_base64(bad), None, "{bad:?}");
        }
    }
}
