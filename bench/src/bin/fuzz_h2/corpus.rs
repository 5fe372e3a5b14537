//! Seeds: client frame sequences (after the preface) that reach every frame type and the
//! HPACK paths (static and dynamic indexes, literals, Huffman, table size updates), each a
//! plausible connection that the mutations then break.

/// A frame: 9-byte header, then `payload`.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = len.to_be_bytes()[1..].to_vec();
    f.extend_from_slice(&[kind, flags]);
    f.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    f.extend_from_slice(payload);
    f
}

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const PRIORITY: u8 = 2;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY_FLAG: u8 = 0x20;

/// `GET /` (static indexes, `:authority` as a literal with incremental indexing).
const GET: &[u8] = &[
    0x82, 0x86, 0x84, 0x41, 0x09, b'l', b'o', b'c', b'a', b'l', b'h', b'o', b's', b't',
];
/// RFC 7541 C.4.1: the same request, Huffman-coded.
const GET_HUFFMAN: &[u8] = &[
    0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4,
    0xff,
];
/// `GET /` referring to the dynamic table entry the first block added (index 62).
const GET_DYNAMIC: &[u8] = &[0x82, 0x86, 0x84, 0xbe];
/// `POST /up` with a content-length of 5, after a dynamic table size update to 0.
const POST: &[u8] = &[
    0x20, 0x83, 0x86, 0x04, 0x03, b'/', b'u', b'p', 0x01, 0x09, b'l', b'o', b'c', b'a', b'l', b'h',
    b'o', b's', b't', 0x0f, 0x0d, 0x01, b'5',
];

/// Every seed, built once.
pub fn seeds() -> Vec<Vec<u8>> {
    let settings = frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0x40, 0, 0, 5, 0, 0, 0x40, 0]);
    let ack = frame(SETTINGS, 1, 0, &[]);
    let mut seeds = Vec::new();
    let with = |frames: &[Vec<u8>]| -> Vec<u8> {
        let mut s = frame(SETTINGS, 0, 0, &[]);
        s.extend(frames.iter().flatten());
        s
    };
    seeds.push(with(&[frame(HEADERS, END_HEADERS | END_STREAM, 1, GET)]));
    seeds.push(with(&[
        settings.clone(),
        ack.clone(),
        frame(HEADERS, END_HEADERS | END_STREAM, 1, GET),
        frame(HEADERS, END_HEADERS | END_STREAM, 3, GET_DYNAMIC),
        frame(HEADERS, END_HEADERS | END_STREAM, 5, GET_HUFFMAN),
    ]));
    seeds.push(with(&[
        frame(HEADERS, END_HEADERS, 1, POST),
        frame(DATA, 0, 1, b"ab"),
        frame(WINDOW_UPDATE, 0, 0, &1000u32.to_be_bytes()),
        frame(DATA, END_STREAM | PADDED, 1, &[2, b'c', b'd', b'e', 0, 0]),
    ]));
    seeds.push(with(&[
        frame(
            HEADERS,
            PRIORITY_FLAG,
            1,
            &[&[0, 0, 0, 0, 16][..], &GET[..4]].concat(),
        ),
        frame(CONTINUATION, END_HEADERS, 1, &GET[4..]),
        frame(DATA, END_STREAM, 1, b""),
        frame(PRIORITY, 0, 3, &[0, 0, 0, 1, 8]),
    ]));
    seeds.push(with(&[
        frame(PING, 0, 0, &[1, 2, 3, 4, 5, 6, 7, 8]),
        frame(HEADERS, END_HEADERS, 1, GET),
        frame(RST_STREAM, 0, 1, &8u32.to_be_bytes()),
        frame(WINDOW_UPDATE, 0, 3, &1u32.to_be_bytes()),
        frame(GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 0]),
    ]));
    // A zero initial window: the answer waits for WINDOW_UPDATEs.
    seeds.push(with(&[
        frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0, 0]),
        frame(HEADERS, END_HEADERS | END_STREAM, 1, GET),
        frame(WINDOW_UPDATE, 0, 1, &1u32.to_be_bytes()),
        frame(WINDOW_UPDATE, 0, 1, &100u32.to_be_bytes()),
    ]));
    seeds
}
