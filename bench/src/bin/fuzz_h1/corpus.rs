//! The seeds the mutator starts from: valid requests, the classic smuggling and parser-confusion
//! shapes, and chunked bodies, plus the dictionaries mutations draw from.

/// What a seed is fed to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The head scanner and parser (and the chunked decoder when the head says chunked).
    Request,
    /// The chunked decoder alone.
    Chunked,
}

/// Whole requests: valid ones first, then hostile ones.
pub const REQUESTS: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
    b"GET /search?q=a%20b&x=%2F HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nUser-Agent: fuzz/1.0\r\n\r\n",
    b"POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world",
    b"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=\"q\\\"x\"\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n",
    b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
    b"HEAD /z HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
    b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    b"GET http://example.com/a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n",
    b"\r\n\r\nGET /lf HTTP/1.1\nHost: h\n\n",
    b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    b"DELETE /items/42 HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: keep-alive, close\r\nCookie: a=b; c=d\r\n\r\n",
    b"PATCH /caf%C3%A9 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nX-Obs: \x80\xff\r\nX-Empty:\r\n\r\n",
    b"POST /cl-te HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST /te-te HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
    b"POST /te-list HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    b"POST /cl-cl HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    b"POST /cl-list HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\nhello",
    b"POST /huge HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    b"GET /fold HTTP/1.1\r\nHost: h\r\nX-A: one\r\n two\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    b"GET / HTTP/1.1\rHost: h\r\n\r\n",
    b"GET /%00/../%2e%2e/etc/passwd HTTP/1.1\r\nHost: h\r\n\r\n",
    b"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
    b"GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost : h\r\n\r\n",
    b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST /big-chunk HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nab\r\n0\r\n\r\n",
    b"POST /lf-chunk HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n",
    b"GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nExpect: 100-continue\r\n\r\n",
];

/// Chunked bodies on their own (what follows a head that says chunked).
pub const CHUNKED: &[&[u8]] = &[
    b"5\r\nhello\r\n0\r\n\r\n",
    b"1\r\na\r\n1;x\r\nb\r\n0;last\r\nT: v\r\nU:\r\n\r\nNEXT",
    b"000\r\n\r\n",
    b"5 ; a = \"b\\\"c\" ; d\r\nhello\r\n0\r\n\r\n",
    b"4\r\nwxyz\r\n0\r\nTrailer: a\r\n\tfold\r\n\r\n",
    b"ffffffffffffffff\r\nab",
    b"10000000000000000\r\n\r\n",
    b"2\r\nab\r\n0\r\n",
    b"3\r\nabc0\r\n\r\n",
    b"0x5\r\nhello\r\n0\r\n\r\n",
    b"A\r\n0123456789\r\n0\r\nX-Sum: \x80\r\n\r\n",
];

/// Whole header lines, inserted after the request line (repeats make duplicates).
pub const HEADER_LINES: &[&[u8]] = &[
    b"Host: example.com",
    b"Host: a b",
    b"Content-Length: 5",
    b"Content-Length: 5, 5",
    b"Content-Length: 5, 6",
    b"Content-Length: 18446744073709551616",
    b"Transfer-Encoding: chunked",
    b"Transfer-Encoding: gzip, chunked",
    b"Transfer-Encoding: chunked, gzip",
    b"Transfer-Encoding: chunked, chunked",
    b"Transfer-Encoding:\tchunked\t",
    b"Transfer-Encoding : chunked",
    b" folded",
    b"Expect: 100-continue",
    b"Expect: 200-ok",
    b"Connection: close",
    b"Connection: keep-alive, Upgrade",
    b"X: \x00",
    b"X: \x7f",
    b"X: caf\xc3\xa9",
    b"X:",
    b":",
    b"Bad Name: v",
];

/// Numbers that stress length and size parsing, swapped in for digit runs.
pub const NUMBERS: &[&[u8]] = &[
    b"0",
    b"00000000000000000000001",
    b"-1",
    b"+1",
    b"0x10",
    b"4294967296",
    b"18446744073709551615",
    b"18446744073709551616",
    b"99999999999999999999999",
    b"ffffffffffffffff",
    b"10000000000000000",
    b"1e3",
    b" 5",
    b"5 ",
    b"1,1",
    b"1, 2",
];

/// Tokens written over the input at random places.
pub const TOKENS: &[&[u8]] = &[
    b"chunked",
    b"Transfer-Encoding",
    b"Content-Length",
    b"Host",
    b": ",
    b"\r\n",
    b"\r\n\r\n",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"%",
    b"%00",
    b"%zz",
    b"%C3%A9",
    b"://",
    b"*",
    b"?",
    b";",
    b"=\"",
    b"\\",
    b",",
];

/// Single bytes that sit on the grammar's edges.
pub const EDGE_BYTES: &[u8] = &[
    b'\r', b'\n', b' ', b'\t', b':', b',', b';', b'"', b'\\', b'%', b'?', b'/', b'0', b'f', 0x00,
    0x7f, 0x80, 0xff,
];
