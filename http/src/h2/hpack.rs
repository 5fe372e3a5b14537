//! HPACK (RFC 7541) for the server: the decoder is ours (`hpack_decode.rs`: static and bounded
//! dynamic table, Huffman decoding without allocation), wrapped to bound the decoded header
//! list; the encoder is ours: static-table indexes and literals
//! *without indexing*, each string Huffman-coded when that is shorter (as nghttp2 and hyper's h2
//! do; `huffman.rs`). It keeps no dynamic table: it never has to follow the peer's
//! SETTINGS_HEADER_TABLE_SIZE or keep state per connection, and a response's fields (a date, a
//! length, an ETag) mostly change from one response to the next; a table would save the
//! repeated `server` and `content-type` values, a few bytes per response. (The CPU of encoding
//! the same lines again is saved without one: `fields.rs` keeps each worker's encodings.)

use loona_hpack::encoder::encode_integer_into;

use super::hpack_decode::FieldDecoder;
use super::huffman;
use super::settings::HEADER_TABLE_SIZE;

/// Why a header block could not be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockError {
    /// The block is not valid HPACK: a connection error (COMPRESSION_ERROR).
    Compression,
    /// The decoded list is larger than allowed: the stream is refused (431); the decoder
    /// state stays in step.
    TooLarge,
}

/// The connection's header block decoder.
pub(crate) struct Decoder {
    inner: FieldDecoder,
}

impl Decoder {
    /// A decoder whose dynamic table never grows past the protocol default.
    pub(crate) fn new() -> Decoder {
        Decoder::with_table_size(HEADER_TABLE_SIZE)
    }

    /// A decoder whose dynamic table never grows past `max` bytes (what our
    /// SETTINGS_HEADER_TABLE_SIZE allows).
    pub(crate) fn with_table_size(max: usize) -> Decoder {
        Decoder {
            inner: FieldDecoder::new(max),
        }
    }

    /// Decodes `block`, calling `field` for each field while the list stays within
    /// `max_list` bytes (RFC 9113 §6.5.2's size: name, value and 32 per field). Past it, the
    /// rest is decoded (to keep the table in step) without being handed out, and the answer is
    /// `TooLarge`: decoding costs time linear in the block, whatever a field refers to.
    pub(crate) fn decode(
        &mut self,
        block: &[u8],
        max_list: usize,
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), BlockError> {
        let mut size = 0usize;
        self.inner
            .decode(block, |n, v| {
                size = size.saturating_add(n.len() + v.len() + 32);
                if size <= max_list {
                    field(n, v);
                }
            })
            .map_err(|_| BlockError::Compression)?;
        if size > max_list {
            return Err(BlockError::TooLarge);
        }
        Ok(())
    }
}

/// Names of the static table (RFC 7541 Appendix A), index 1 first.
pub(super) const STATIC_NAMES: [&str; 61] = [
    ":authority",
    ":method",
    ":method",
    ":path",
    ":path",
    ":scheme",
    ":scheme",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
];

/// Appends `:status` (an index for the seven the static table holds).
pub(crate) fn encode_status(status: u16, out: &mut Vec<u8>) {
    let index = match status {
        200 => 8,
        204 => 9,
        206 => 10,
        304 => 11,
        400 => 12,
        404 => 13,
        500 => 14,
        _ => {
            let mut digits = itoa::Buffer::new();
            literal(8, b":status", digits.format(status).as_bytes(), out);
            return;
        }
    };
    int(index, 7, 0x80, out);
}

/// Appends a field as a literal without indexing; `name` must be lowercase.
pub(crate) fn encode_field(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    let index = STATIC_NAMES
        .iter()
        .position(|n| n.as_bytes() == name)
        .map_or(0, |i| i + 1);
    literal(index, name, value, out);
}

fn literal(name_index: usize, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    int(name_index, 4, 0x00, out);
    if name_index == 0 {
        string(name, out);
    }
    string(value, out);
}

/// A string literal (§5.2): Huffman-coded when that is shorter, else as it is.
fn string(s: &[u8], out: &mut Vec<u8>) {
    let coded = huffman::encoded_len(s);
    if coded < s.len() {
        int(coded, 7, 0x80, out);
        huffman::encode(s, out);
    } else {
        int(s.len(), 7, 0x00, out);
        out.extend_from_slice(s);
    }
}

fn int(v: usize, prefix: u8, bits: u8, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail.
    let _ = encode_integer_into(v, prefix, bits, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(fields: &[(&[u8], &[u8])]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut block = Vec::new();
        encode_status(200, &mut block);
        encode_status(418, &mut block);
        for (n, v) in fields {
            encode_field(n, v, &mut block);
        }
        let mut got = Vec::new();
        Decoder::new()
            .decode(&block, 1 << 20, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        got
    }

    #[test]
    fn what_the_encoder_writes_the_decoder_reads() {
        let long = vec![b'x'; 300];
        // Bytes whose codes are longer than 8 bits: written as they are.
        let raw = vec![0u8, 1, 2, 255];
        let got = round_trip(&[
            (b"content-type", b"text/plain"),
            (b"x-long", &long),
            (b"x-raw", &raw),
        ]);
        assert_eq!(got[0], (b":status".to_vec(), b"200".to_vec()));
        assert_eq!(got[1], (b":status".to_vec(), b"418".to_vec()));
        assert_eq!(got[2], (b"content-type".to_vec(), b"text/plain".to_vec()));
        assert_eq!(got[3], (b"x-long".to_vec(), long));
        assert_eq!(got[4], (b"x-raw".to_vec(), raw));
    }

    #[test]
    fn strings_are_huffman_coded_when_shorter() {
        let mut block = Vec::new();
        encode_field(b"content-type", b"text/plain", &mut block);
        // content-type is static index 31; "text/plain" is 7 bytes Huffman-coded.
        assert_eq!(&block[..2], &[0x0f, 31 - 15]);
        assert_eq!(block[2], 0x80 | 7);
        assert_eq!(block.len(), 3 + 7);
        block.clear();
        // "x" is 7 bits coded (no shorter), NUL 13 bits (longer): both as they are.
        encode_field(b"x", b"\0", &mut block);
        assert_eq!(block, [0x00, 1, b'x', 1, 0]);
    }

    #[test]
    fn rfc7541_c4_huffman_requests_decode() {
        // RFC 7541 C.4.1: the first request with Huffman coding.
        let block = [
            0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab,
            0x90, 0xf4, 0xff,
        ];
        let mut got = Vec::new();
        Decoder::new()
            .decode(&block, 1 << 20, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        assert_eq!(
            got[3],
            (b":authority".to_vec(), b"www.example.com".to_vec())
        );
    }

    #[test]
    fn a_bomb_of_indexed_fields_stops_at_the_list_limit() {
        let mut block = vec![0x40, 1, b'a', 100];
        block.extend_from_slice(&[b'v'; 100]);
        block.extend_from_slice(&[0x80 | 62; 1000]);
        let mut handed = 0;
        let r = Decoder::new().decode(&block, 16 * 1024, |_, _| handed += 1);
        assert_eq!(r, Err(BlockError::TooLarge));
        assert!(handed < 130, "{handed}");
        assert_eq!(
            Decoder::new().decode(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 100, |_, _| {}),
            Err(BlockError::Compression)
        );
    }
}
