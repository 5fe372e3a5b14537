//! HPACK's Huffman code (RFC 7541 §5.2, Appendix B), both ways. The code is canonical (codes of
//! one length are consecutive, in symbol order, and every shorter code sorts before every longer
//! one), so the bit length of each symbol is the whole table: the encoder's codes and the
//! decoder's per-length first codes are computed from it at compile time. A symbol is decoded by
//! comparing the next `len` bits with the first code of each length, shortest first (5 to 8 bits
//! for the characters of a typical header: a few comparisons per byte, no allocation).
//! `loona-hpack` builds a hash map of the 257 codes for every string it decodes, which cost
//! HTTP/2 about 16 µs per request, and keeps its encoding table private.

/// Bit length of each symbol's code, RFC 7541 Appendix B (symbol 256 is EOS).
const LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5,
    5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6,
    6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
    23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22,
    21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20,
    22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19,
    21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22,
    22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];

/// The longest code.
const MAX_LEN: usize = 30;
/// The shortest code.
const MIN_LEN: usize = 5;
/// The end-of-string symbol: an error inside a string (§5.2).
const EOS: u16 = 256;

/// The canonical code's shape: per length, its first code, how many codes, and where its
/// symbols start in `symbols` (sorted by length, then symbol).
struct Canonical {
    first: [u32; MAX_LEN + 1],
    count: [u32; MAX_LEN + 1],
    offset: [u16; MAX_LEN + 1],
    symbols: [u16; 257],
}

const fn canonical() -> Canonical {
    let mut t = Canonical {
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        offset: [0; MAX_LEN + 1],
        symbols: [0; 257],
    };
    let mut s = 0;
    while s < 257 {
        t.count[LENGTHS[s] as usize] += 1;
        s += 1;
    }
    let (mut code, mut at, mut len) = (0u32, 0u16, 1);
    while len <= MAX_LEN {
        t.first[len] = code;
        t.offset[len] = at;
        code = (code + t.count[len]) << 1;
        at += t.count[len] as u16;
        len += 1;
    }
    let mut next = t.offset;
    s = 0;
    while s < 257 {
        let l = LENGTHS[s] as usize;
        t.symbols[next[l] as usize] = s as u16;
        next[l] += 1;
        s += 1;
    }
    t
}

const TABLE: Canonical = canonical();

/// Why a Huffman string is invalid (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BadHuffman;

/// Appends the decoding of Huffman-coded `src` to `out`.
pub(super) fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    let t = &TABLE;
    // The next `bits` bits of input are the low bits of `acc` (higher ones are stale).
    let (mut acc, mut bits, mut i) = (0u64, 0usize, 0);
    loop {
        while bits <= 56 && i < src.len() {
            acc = (acc << 8) | u64::from(src[i]);
            bits += 8;
            i += 1;
        }
        let mut symbol = None;
        let mut len = MIN_LEN;
        while len <= bits.min(MAX_LEN) {
            let code = ((acc >> (bits - len)) & ((1 << len) - 1)) as u32;
            let k = code.wrapping_sub(t.first[len]);
            if k < t.count[len] {
                symbol = Some(t.symbols[t.offset[len] as usize + k as usize]);
                break;
            }
            len += 1;
        }
        match symbol {
            Some(EOS) => return Err(BadHuffman),
            Some(s) => {
                out.push(s as u8);
                bits -= len;
            }
            // What is left must be padding: under 8 bits, all ones (the start of EOS).
            None => {
                let ones = (1u64 << bits) - 1;
                return if i == src.len() && bits < 8 && acc & ones == ones {
                    Ok(())
                } else {
                    Err(BadHuffman)
                };
            }
        }
    }
}

/// (code, bit length) of each byte, from the canonical shape (EOS, symbol 256, is never
/// written: padding is its most significant bits, all ones).
const fn codes() -> [(u32, u8); 256] {
    let mut out = [(0u32, 0u8); 256];
    let mut len = MIN_LEN;
    while len <= MAX_LEN {
        let mut k = 0;
        while k < TABLE.count[len] as usize {
            let s = TABLE.symbols[TABLE.offset[len] as usize + k] as usize;
            if s < 256 {
                out[s] = (TABLE.first[len] + k as u32, len as u8);
            }
            k += 1;
        }
        len += 1;
    }
    out
}

static CODES: [(u32, u8); 256] = codes();

/// The length in bytes of `s` Huffman-encoded.
pub(crate) fn encoded_len(s: &[u8]) -> usize {
    let bits: usize = s
        .iter()
        .map(|&b| usize::from(CODES[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// Appends `s` Huffman-encoded, padded with ones to a byte boundary.
pub(crate) fn encode(s: &[u8], out: &mut Vec<u8>) {
    // At most 7 pending bits plus one code of at most 30 bits: fits in 64.
    let mut acc = 0u64;
    let mut pending = 0u32;
    for &b in s {
        let (code, len) = CODES[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        pending += u32::from(len);
        while pending >= 8 {
            pending -= 8;
            out.push((acc >> pending) as u8);
        }
    }
    if pending > 0 {
        out.push(((acc << (8 - pending)) as u8) | (0xff >> pending));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        super::encode(s, &mut out);
        assert_eq!(out.len(), encoded_len(s));
        out
    }

    fn decoded(src: &[u8]) -> Result<Vec<u8>, BadHuffman> {
        let mut out = Vec::new();
        decode(src, &mut out).map(|()| out)
    }

    #[test]
    fn rfc7541_appendix_c4_strings() {
        // www.example.com, no-cache, custom-key, custom-value (C.4.1–C.4.3).
        let cases: [(&[u8], &[u8]); 4] = [
            (
                &[
                    0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
                ],
                b"www.example.com",
            ),
            (&[0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf], b"no-cache"),
            (
                &[0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f],
                b"custom-key",
            ),
            (
                &[0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf],
                b"custom-value",
            ),
        ];
        for (wire, text) in cases {
            assert_eq!(decoded(wire).unwrap(), text);
            assert_eq!(encoded(text), wire);
        }
    }

    #[test]
    fn rfc7541_appendix_c6_response_strings() {
        // "Mon, 21 Oct 2013 20:13:21 GMT" and "https://www.example.com" (C.6.1).
        let date = [
            0xd0, 0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b,
            0x81, 0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff,
        ];
        assert_eq!(decoded(&date).unwrap(), b"Mon, 21 Oct 2013 20:13:21 GMT");
        let url = [
            0x9d, 0x29, 0xad, 0x17, 0x18, 0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82,
            0xae, 0x43, 0xd3,
        ];
        assert_eq!(decoded(&url).unwrap(), b"https://www.example.com");
    }

    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decoded(&encoded(&all)).unwrap(), all);
        for b in 0..=255u8 {
            assert_eq!(decoded(&encoded(&[b, b'a', b])).unwrap(), [b, b'a', b]);
        }
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        // Eight bits of padding, padding that is not ones, a whole EOS.
        assert_eq!(decoded(&[0xff]), Err(BadHuffman));
        assert_eq!(decoded(&[0x06]), Err(BadHuffman));
        assert_eq!(decoded(&[0xff, 0xff, 0xff, 0xfc]), Err(BadHuffman));
        assert_eq!(decoded(&[]).unwrap(), b"");
    }

    #[test]
    fn agrees_with_loona_on_random_input() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 12) as usize;
            let bytes: Vec<u8> = (0..len).map(|i| (x >> (i * 5)) as u8 | 0x80).collect();
            let theirs = loona_hpack::huffman::HuffmanDecoder::new().decode(&bytes);
            assert_eq!(decoded(&bytes).ok(), theirs.ok(), "{bytes:02x?}");
        }
    }

    #[test]
    fn every_byte_in_every_bit_position_round_trips_through_loona() {
        for shift in 0..8 {
            let mut s: Vec<u8> = b"a".repeat(shift);
            s.extend(0..=255u8);
            let out = encoded(&s);
            let theirs = loona_hpack::huffman::HuffmanDecoder::new().decode(&out);
            assert_eq!(theirs.unwrap(), s, "shift {shift}");
            assert_eq!(decoded(&out).unwrap(), s, "shift {shift}");
        }
    }
}
