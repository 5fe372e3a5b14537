//! A response head as a HEADERS frame, each field line encoded once per worker thread: the
//! encoder writes literals without indexing (`hpack.rs`), the same bytes for the same line on
//! every connection, so each worker keeps the encodings of the last [`ENTRIES`] lines it sent
//! (keyed by the line as the response holds it, `Name: value`) and copies them instead of
//! lowercasing the name, looking it up in the static table and Huffman-coding the strings
//! again. A file answered again (a date that changes once a second, the same ETag, type and
//! length) costs a hash and a copy per line: callgrind counted 8,600 of the 30,900
//! instructions of an h2c `-m1` file request in that encoding before. The cache is per worker,
//! not per connection, so it stays in the core's cache at hundreds of connections and costs
//! an idle connection nothing. What goes on the wire is unchanged (no dynamic table: nothing
//! the client keeps).

use std::sync::{Mutex, OnceLock};

use moria_runtime::sync::PerWorker;

use super::frame::{flag, kind, put_header, put_header_block, HEADER_LEN};
use super::hpack::{encode_field, encode_status};

/// Lines whose encoding a worker keeps (the least recently used one makes room).
const ENTRIES: usize = 32;
/// Longest line kept (longer ones are encoded every time): with [`ENTRIES`], bounds what a
/// worker holds to about 32 KiB.
const MAX_LINE: usize = 512;

/// The `content-length` line a known length becomes, and room for it (20 digits at most).
const LENGTH_NAME: &[u8] = b"content-length: ";
/// See [`LENGTH_NAME`].
const LENGTH_LINE: usize = 40;

/// Fields that HTTP/2 forbids (RFC 9113 §8.2.2), left out of a response head.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "proxy-connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
];

/// The process's encoded lines, one set per worker thread. Plain locks, only ever tried: a
/// fiber that finds its worker's set busy (it moved threads meanwhile) encodes without it.
static LINES: OnceLock<PerWorker<Mutex<Lines>>> = OnceLock::new();

/// One worker's encoded lines.
#[derive(Default)]
struct Lines {
    entries: Vec<Entry>,
    clock: u64,
}

/// A line and its encoding (empty for a line HTTP/2 leaves out), in one buffer.
struct Entry {
    hash: u64,
    used: u64,
    line_len: usize,
    bytes: Vec<u8>,
}

/// A response head to send: status and `Name: value\r\n` lines.
pub(crate) struct ResponseHead<'a> {
    /// The status code.
    pub status: u16,
    /// Field lines as HTTP/1.1 writes them.
    pub lines: &'a [u8],
    /// A `content-length` to add, if known.
    pub length: Option<u64>,
}

/// Appends `head` as the HEADERS frame of stream `id` (with CONTINUATIONs past `max_frame`),
/// ending the stream if `end_stream`.
pub(crate) fn put_head(
    out: &mut Vec<u8>,
    id: u32,
    head: &ResponseHead<'_>,
    end_stream: bool,
    max_frame: usize,
) {
    let at = out.len();
    put_header(out, 0, kind::HEADERS, 0, id);
    encode_head(head, out);
    let len = out.len() - at - HEADER_LEN;
    if len > max_frame {
        let block = out.split_off(at + HEADER_LEN);
        out.truncate(at);
        put_header_block(out, id, &block, end_stream, max_frame);
        return;
    }
    // The placeholder's length and flags, now known (its type and stream stand).
    let flags = flag::END_HEADERS | if end_stream { flag::END_STREAM } else { 0 };
    out[at..at + 3].copy_from_slice(&(len as u32).to_be_bytes()[1..]);
    out[at + 4] = flags;
}

/// Appends the header block of `head`: `:status`, each line (names lowercased,
/// connection-specific fields dropped), and a `content-length` if the length is known.
fn encode_head(head: &ResponseHead<'_>, out: &mut Vec<u8>) {
    encode_status(head.status, out);
    let lines = LINES.get_or_init(PerWorker::default);
    let mut kept = lines.get().try_lock().ok();
    let mut line_out = |line: &[u8], out: &mut Vec<u8>| match kept.as_deref_mut() {
        Some(kept) => kept.field(line, out),
        None => encode_line(line, out),
    };
    for line in head.lines.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.is_empty() {
            line_out(line, out);
        }
    }
    if let Some(n) = head.length {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(n).as_bytes();
        let mut line = [0u8; LENGTH_LINE];
        line[..LENGTH_NAME.len()].copy_from_slice(LENGTH_NAME);
        let end = LENGTH_NAME.len() + digits.len();
        line[LENGTH_NAME.len()..end].copy_from_slice(digits);
        line_out(&line[..end], out);
    }
}

impl Lines {
    /// Appends the encoding of `line`, kept or encoded now and kept.
    fn field(&mut self, line: &[u8], out: &mut Vec<u8>) {
        self.clock += 1;
        let now = self.clock;
        let hash = hash(line);
        let found = self
            .entries
            .iter_mut()
            .find(|e| e.hash == hash && &e.bytes[..e.line_len] == line);
        if let Some(e) = found {
            e.used = now;
            out.extend_from_slice(&e.bytes[e.line_len..]);
            return;
        }
        let start = out.len();
        encode_line(line, out);
        if line.len() > MAX_LINE {
            return;
        }
        let encoded = &out[start..];
        let e = if self.entries.len() < ENTRIES {
            self.entries.push(Entry {
                hash,
                used: now,
                line_len: 0,
                bytes: Vec::with_capacity(line.len() + encoded.len()),
            });
            self.entries.last_mut()
        } else {
            self.entries.iter_mut().min_by_key(|e| e.used)
        };
        if let Some(e) = e {
            e.hash = hash;
            e.used = now;
            e.line_len = line.len();
            e.bytes.clear();
            e.bytes.extend_from_slice(line);
            e.bytes.extend_from_slice(encoded);
        }
    }
}

/// A 64-bit hash of a line (FNV-1a over 8-byte words: the lines are short and not chosen
/// against the cache, whose worst case is a few more comparisons).
fn hash(line: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ line.len() as u64;
    let mut words = line.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    (h ^ u64::from_le_bytes(last)).wrapping_mul(0x0000_0100_0000_01b3)
}

/// Appends one `Name: value` line as a literal field (nothing for a line without a colon or a
/// connection-specific field).
fn encode_line(line: &[u8], out: &mut Vec<u8>) {
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return;
    };
    let name = line[..colon].to_ascii_lowercase();
    if CONNECTION_SPECIFIC.iter().any(|c| c.as_bytes() == name) {
        return;
    }
    encode_field(&name, line[colon + 1..].trim_ascii(), out);
}

#[cfg(test)]
mod tests {
    use super::super::frame::FrameHeader;
    use super::super::hpack::Decoder;
    use super::*;

    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        let mut got = Vec::new();
        Decoder::new()
            .decode(block, 1 << 20, |n, v| {
                got.push((
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ))
            })
            .unwrap();
        got
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn block(status: u16, lines: &[u8], length: Option<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        let head = ResponseHead {
            status,
            lines,
            length,
        };
        encode_head(&head, &mut out);
        out
    }

    #[test]
    fn a_head_encodes_the_same_whether_its_lines_were_kept_or_not() {
        let lines = b"Content-Type: text/plain\r\nConnection: close\r\nX-Any:  v \r\nno colon\r\n";
        let mut uncached = Vec::new();
        encode_status(200, &mut uncached);
        for line in [
            &b"Content-Type: text/plain"[..],
            b"Connection: close",
            b"X-Any:  v ",
        ] {
            encode_line(line, &mut uncached);
        }
        encode_field(b"content-length", b"12", &mut uncached);
        assert_eq!(block(200, lines, Some(12)), uncached);
        assert_eq!(block(200, lines, Some(12)), uncached);
        assert_eq!(
            decoded(&uncached),
            pairs(&[
                (":status", "200"),
                ("content-type", "text/plain"),
                ("x-any", "v"),
                ("content-length", "12"),
            ])
        );
    }

    #[test]
    fn the_least_recently_used_line_makes_room() {
        let mut kept = Lines::default();
        for i in 0..ENTRIES * 3 {
            let mut out = Vec::new();
            kept.field(b"server: moria", &mut out);
            kept.field(format!("etag: \"{i}\"").as_bytes(), &mut out);
            assert_eq!(
                decoded(&out),
                pairs(&[("server", "moria"), ("etag", &format!("\"{i}\""))])
            );
            assert!(kept.entries.len() <= ENTRIES);
        }
        assert!(kept
            .entries
            .iter()
            .any(|e| &e.bytes[..e.line_len] == b"server: moria"));
    }

    #[test]
    fn long_lines_are_encoded_but_not_kept() {
        let mut kept = Lines::default();
        let long = format!("x-long: {}", "v".repeat(MAX_LINE));
        let mut out = Vec::new();
        kept.field(long.as_bytes(), &mut out);
        assert_eq!(decoded(&out), pairs(&[("x-long", &"v".repeat(MAX_LINE))]));
        assert!(kept.entries.is_empty());
    }

    #[test]
    fn a_head_past_the_frame_size_continues() {
        let long = format!("x-long: {}\r\n", "v".repeat(300));
        for (max_frame, frames) in [(16_384, 1), (100, 3)] {
            let mut out = Vec::new();
            let head = ResponseHead {
                status: 200,
                lines: long.as_bytes(),
                length: None,
            };
            put_head(&mut out, 5, &head, true, max_frame);
            let mut blocks = Vec::new();
            let mut rest = &out[..];
            let mut n = 0;
            while !rest.is_empty() {
                let h = FrameHeader::parse(rest[..HEADER_LEN].try_into().unwrap());
                assert_eq!(h.stream, 5);
                assert_eq!(
                    h.kind,
                    if n == 0 {
                        kind::HEADERS
                    } else {
                        kind::CONTINUATION
                    }
                );
                assert!(h.len <= max_frame);
                blocks.extend_from_slice(&rest[HEADER_LEN..HEADER_LEN + h.len]);
                rest = &rest[HEADER_LEN + h.len..];
                n += 1;
                assert_eq!(h.has(flag::END_HEADERS), rest.is_empty());
                if n == 1 {
                    assert!(h.has(flag::END_STREAM));
                }
            }
            assert_eq!(n, frames);
            assert_eq!(
                decoded(&blocks),
                pairs(&[(":status", "200"), ("x-long", &"v".repeat(300))])
            );
        }
    }
}
