//! The known HTTP/2 attacks, each from a hostile client writing raw frames: each ends with the
//! connection closed by a GOAWAY with the right code, or the stream refused, and the server
//! still answers another connection. Rapid reset (CVE-2023-44487), CONTINUATION flood
//! (CVE-2024-27316), HPACK bomb, a dynamic table grown past our setting, SETTINGS and PING
//! floods, a send window held shut (the streams parked on it, stream's or connection's, capped
//! server-wide; a connection that keeps stalling streams closed), stream ids reused or going
//! backwards, too many concurrent streams, a window overflow.

use std::io::Read;
use std::time::Duration;

use moria_http::{Request, Response, Server, StaticFiles};

use crate::common::curl::require_curl;
use crate::common::files::tree;
use crate::common::h2::{curl_h2c, nghttp, require_nghttp, stdout};
use crate::common::h2raw::*;
use crate::common::{start, stop};

/// A server whose handler reads the whole body (so a stream without END_STREAM stays open)
/// and answers `size` bytes.
fn server_with(builder: moria_http::ServerBuilder) -> Server {
    let handler = |req: &mut Request<'_>, res: &mut Response| {
        let mut body = Vec::new();
        req.body().read_to_end(&mut body)?;
        let size: usize = req
            .query_param("size")
            .map_or(5, |s| s.parse().unwrap_or(5));
        res.body(vec![b'x'; size]);
        Ok(())
    };
    start(builder, handler)
}

/// Another connection is served as usual.
fn still_serves(server: &Server) {
    require_curl();
    let out = stdout(&curl_h2c(server.local_addr(), "/", &[]));
    assert_eq!(out, "xxxxx");
}

#[test]
fn rapid_reset_ends_with_enhance_your_calm() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    let mut id = 1;
    for _ in 0..1000 {
        c.get(id, "/", false, &[]);
        c.frame(RST_STREAM, 0, id, &CANCEL.to_be_bytes());
        id += 2;
    }
    let (_, code) = c.goaway();
    assert_eq!(code, ENHANCE_YOUR_CALM);
    still_serves(&server);
    stop(&server);
}

#[test]
fn continuation_flood_ends_with_enhance_your_calm() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    let block = request_block("GET", "/", &[]);
    c.frame(HEADERS, 0, 1, &block);
    let junk = [0x40u8; 16_384];
    for _ in 0..100 {
        c.frame(CONTINUATION, 0, 1, &junk);
    }
    let (_, code) = c.goaway();
    assert_eq!(code, ENHANCE_YOUR_CALM);
    still_serves(&server);
    stop(&server);
}

#[test]
fn hpack_bomb_is_answered_431_and_the_connection_goes_on() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    // One 4000-byte field into the dynamic table, then referenced 3000 times: 12 MB decoded
    // from a 7 KB block.
    let mut block = request_block("GET", "/", &[]);
    block.push(0x40);
    string(&mut block, b"bomb");
    string(&mut block, &[b'b'; 4000]);
    block.extend(std::iter::repeat_n(0x80 | 62, 3000));
    c.frame(HEADERS, END_HEADERS | END_STREAM, 1, &block);
    let answer = c.response_block(1);
    assert_eq!(&answer[..5], &[0x08, 3, b'4', b'3', b'1'], "{answer:?}");
    // The decoder stayed in step: the next request on the same connection is answered.
    c.get(3, "/", true, &[]);
    let answer = c.response_block(3);
    assert_eq!(answer[0], 0x80 | 8, "200: {answer:?}");
    stop(&server);
}

#[test]
fn a_dynamic_table_grown_past_our_setting_is_a_compression_error() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    // A dynamic table size update (§6.3) to 8,192 bytes: past our SETTINGS_HEADER_TABLE_SIZE
    // (the default 4,096), so the block cannot be decoded.
    let mut block = Vec::new();
    int(&mut block, 8192, 5, 0x20);
    block.extend_from_slice(&request_block("GET", "/", &[]));
    c.frame(HEADERS, END_HEADERS | END_STREAM, 1, &block);
    assert_eq!(c.goaway().1, 0x9, "COMPRESSION_ERROR");
    still_serves(&server);
    stop(&server);
}

#[test]
fn settings_and_ping_floods_end_with_enhance_your_calm() {
    let server = server_with(Server::builder());
    for kind in [SETTINGS, PING] {
        let mut c = H2Raw::connect(server.local_addr());
        let payload: &[u8] = if kind == PING { &[7; 8] } else { &[] };
        let mut burst = Vec::new();
        for _ in 0..2000 {
            burst.extend_from_slice(&frame_bytes(kind, 0, 0, payload));
        }
        c.raw(&burst);
        let (_, code) = c.goaway();
        assert_eq!(code, ENHANCE_YOUR_CALM, "flood of frame type {kind}");
    }
    still_serves(&server);
    stop(&server);
}

#[test]
fn a_window_held_shut_resets_the_stream_and_frees_its_fiber() {
    let server = server_with(Server::builder().write_timeout(Duration::from_millis(300)));
    // INITIAL_WINDOW_SIZE 0: the server may send no DATA until a WINDOW_UPDATE that never
    // comes.
    let mut c = H2Raw::with_settings(server.local_addr(), &[(0x4, 0)]);
    c.get(1, "/?size=100000", true, &[]);
    assert_eq!(c.rst(1), CANCEL);
    c.get(3, "/?size=0", true, &[]);
    c.response_block(3);
    still_serves(&server);
    stop(&server);
}

#[test]
fn streams_parked_on_a_zero_window_are_capped_server_wide() {
    // A cap of 20 parked streams; a long write timeout: no parked stream gives up while the
    // test runs (dropping the connections ends them).
    let builder = Server::builder()
        .h2_max_parked(20)
        .write_timeout(Duration::from_secs(60));
    let server = server_with(builder);
    // 30 streams with their window at 0: 20 park, the 10 past the cap are reset.
    let mut a = H2Raw::with_settings(server.local_addr(), &[(0x4, 0)]);
    for i in 0..30 {
        a.get(1 + 2 * i, "/?size=100000", true, &[]);
    }
    let calmed = calm_resets(&mut a, 10);
    // The cap is the server's: every stream of another connection that would park is reset.
    let mut b = H2Raw::with_settings(server.local_addr(), &[(0x4, 0)]);
    for i in 0..5 {
        b.get(1 + 2 * i, "/?size=100000", true, &[]);
    }
    assert_eq!(calm_resets(&mut b, 5), [1, 3, 5, 7, 9]);
    // A parked stream still gets its whole body once its window opens.
    let parked = (0..30).map(|i| 1 + 2 * i).find(|id| !calmed.contains(id));
    let parked = parked.expect("a parked stream");
    a.frame(WINDOW_UPDATE, 0, 0, &200_000u32.to_be_bytes());
    a.frame(WINDOW_UPDATE, 0, parked, &200_000u32.to_be_bytes());
    let mut got = 0;
    loop {
        let f = a.read().expect("the parked stream's body");
        assert_ne!(f.kind, RST_STREAM, "{f:?}");
        if f.kind == DATA && f.stream == parked {
            got += f.payload.len();
            if f.flags & END_STREAM != 0 {
                break;
            }
        }
    }
    assert_eq!(got, 100_000);
    drop((a, b));
    still_serves(&server);
    stop(&server);
}

#[test]
fn streams_parked_on_the_connection_window_count_in_the_same_cap() {
    // The streams' windows are open (the default 65,535) but the client never opens the
    // connection's: the first stream takes all of it, then every stream waits on it.
    let builder = Server::builder()
        .h2_max_parked(20)
        .write_timeout(Duration::from_secs(60));
    let server = server_with(builder);
    let mut a = H2Raw::connect(server.local_addr());
    for i in 0..30 {
        a.get(1 + 2 * i, "/?size=100000", true, &[]);
    }
    let calmed = calm_resets_among_answers(&mut a, 10);
    // The cap is the server's: every stream of another connection is reset once it waits on
    // that connection's window (shut by its first stream's 65,535 bytes).
    let mut b = H2Raw::connect(server.local_addr());
    for i in 0..5 {
        b.get(1 + 2 * i, "/?size=100000", true, &[]);
    }
    let mut calmed_b = calm_resets_among_answers(&mut b, 5);
    calmed_b.sort_unstable();
    assert_eq!(calmed_b, [1, 3, 5, 7, 9]);
    // A parked stream still gets its whole body once the connection window opens.
    let parked = (0..30).map(|i| 1 + 2 * i).find(|id| !calmed.contains(id));
    let parked = parked.expect("a parked stream");
    a.frame(WINDOW_UPDATE, 0, 0, &10_000_000u32.to_be_bytes());
    a.frame(WINDOW_UPDATE, 0, parked, &200_000u32.to_be_bytes());
    a.until_end(parked);
    drop((a, b));
    still_serves(&server);
    stop(&server);
}

#[test]
fn a_connection_that_keeps_stalling_streams_ends_with_enhance_your_calm() {
    // No stream may park: each one the client never lets us answer (its window at 0) is
    // reset at once; past 32 of them the connection ends.
    let server = server_with(Server::builder().h2_max_parked(0));
    let mut c = H2Raw::with_settings(server.local_addr(), &[(0x4, 0)]);
    let mut resets = 0;
    let mut id = 1;
    let goaway = loop {
        if id < 2 * 40 {
            c.get(id, "/?size=100000", true, &[]);
            id += 2;
        }
        let f = c.read().expect("resets, then a GOAWAY");
        match f.kind {
            RST_STREAM => {
                assert_eq!(be32(&f.payload), ENHANCE_YOUR_CALM, "{f:?}");
                resets += 1;
            }
            GOAWAY => break (be32(&f.payload[..4]), be32(&f.payload[4..8])),
            _ => assert_eq!(f.stream, 0, "only resets: {f:?}"),
        }
    };
    assert_eq!(goaway.1, ENHANCE_YOUR_CALM);
    assert!(resets > 32, "{resets} streams reset before the GOAWAY");
    // The connection is closed after the GOAWAY.
    while let Some(f) = c.read() {
        assert_ne!(f.kind, HEADERS, "nothing answered after the GOAWAY: {f:?}");
    }
    still_serves(&server);
    stop(&server);
}

#[test]
fn a_client_opening_small_windows_slowly_gets_whole_files() {
    // nghttp with 1 KiB stream windows and a 4 KiB connection window, 5 downloads of a
    // 300,000-byte file at once: every file copy waits on the windows many times, reading no
    // more than they allow.
    require_nghttp();
    let t = tree();
    let server = start(
        Server::builder(),
        StaticFiles::builder(t.root()).build().unwrap(),
    );
    let args = ["-v", "-w", "10", "-W", "12", "-m", "5"];
    let out = stdout(&nghttp(server.local_addr(), "/big.txt", &args));
    assert!(!out.contains("RST_STREAM"), "{out}");
    let received: usize = out
        .lines()
        .filter(|l| l.contains("recv DATA frame"))
        .filter_map(|l| {
            l.split("length=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert_eq!(received, 5 * 300_000);
    stop(&server);
}

/// Reads `n` RST_STREAM(ENHANCE_YOUR_CALM), and nothing else but connection frames; returns
/// the streams reset, in order.
fn calm_resets(c: &mut H2Raw, n: usize) -> Vec<u32> {
    let mut calmed = Vec::new();
    while calmed.len() < n {
        let f = c.read().expect("the resets past the cap");
        if f.stream == 0 {
            continue;
        }
        assert_eq!(
            f.kind, RST_STREAM,
            "only resets while the windows are shut: {f:?}"
        );
        let code = u32::from_be_bytes(f.payload[..4].try_into().unwrap());
        assert_eq!(code, ENHANCE_YOUR_CALM);
        calmed.push(f.stream);
    }
    calmed.sort_unstable();
    calmed
}

/// Reads until `n` RST_STREAM(ENHANCE_YOUR_CALM), skipping the answers (HEADERS, DATA) of
/// the streams that got some window; returns the streams reset.
fn calm_resets_among_answers(c: &mut H2Raw, n: usize) -> Vec<u32> {
    let mut calmed = Vec::new();
    while calmed.len() < n {
        let f = c.read().expect("the resets past the cap");
        if f.kind != RST_STREAM {
            assert!(
                matches!(f.kind, HEADERS | DATA | SETTINGS | WINDOW_UPDATE),
                "{f:?}"
            );
            continue;
        }
        assert_eq!(be32(&f.payload), ENHANCE_YOUR_CALM, "{f:?}");
        calmed.push(f.stream);
    }
    calmed
}

#[test]
fn stream_ids_going_backwards_or_reused_end_the_connection() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    c.get(5, "/", true, &[]);
    c.response_block(5);
    c.get(3, "/", true, &[]);
    assert_eq!(c.goaway(), (5, PROTOCOL_ERROR));

    let mut c = H2Raw::connect(server.local_addr());
    c.get(1, "/", true, &[]);
    c.response_block(1);
    // Wait for the end of stream 1's answer, then reuse its id.
    c.until_end(1);
    c.get(1, "/", true, &[]);
    // STREAM_CLOSED: a connection error once the server closed the stream, a stream error
    // while it is still only half-closed on the server's side.
    let code = loop {
        let f = c.read().expect("an answer to the reused id");
        if f.kind == GOAWAY || (f.kind == RST_STREAM && f.stream == 1) {
            let at = if f.kind == GOAWAY { 4 } else { 0 };
            break u32::from_be_bytes(f.payload[at..at + 4].try_into().unwrap());
        }
    };
    assert_eq!(code, 0x5, "STREAM_CLOSED");
    still_serves(&server);
    stop(&server);
}

#[test]
fn frames_on_even_stream_ids_end_the_connection() {
    // The server opens no stream: an even id below the client's last one is still idle
    // (§5.1.1), and DATA, RST_STREAM or WINDOW_UPDATE there is a connection error. (Found by
    // fuzz_h2: the server used to answer with a RST_STREAM on the even id.)
    let server = server_with(Server::builder());
    for (kind, payload) in [
        (DATA, &b""[..]),
        (RST_STREAM, &CANCEL.to_be_bytes()[..]),
        (WINDOW_UPDATE, &1u32.to_be_bytes()[..]),
    ] {
        let mut c = H2Raw::connect(server.local_addr());
        c.get(5, "/", true, &[]);
        c.response_block(5);
        c.frame(kind, 0, 2, payload);
        assert_eq!(c.goaway(), (5, PROTOCOL_ERROR), "frame type {kind}");
    }
    still_serves(&server);
    stop(&server);
}

#[test]
fn streams_past_the_concurrency_limit_are_refused() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    // 100 streams held open (their handlers wait for bodies), then one more.
    for i in 0..100 {
        c.get(1 + 2 * i, "/", false, &[]);
    }
    c.get(201, "/", true, &[]);
    assert_eq!(c.rst(201), REFUSED_STREAM);
    // The held streams still complete once their bodies end.
    c.frame(DATA, END_STREAM, 1, b"");
    c.response_block(1);
    // The other 99 wait for bodies that will not come: the client leaves before the shutdown.
    drop(c);
    still_serves(&server);
    stop(&server);
}

#[test]
fn window_overflows_are_flow_control_errors() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    c.get(1, "/", false, &[]);
    c.frame(WINDOW_UPDATE, 0, 1, &0x7fff_ffffu32.to_be_bytes());
    assert_eq!(c.rst(1), FLOW_CONTROL_ERROR);
    c.frame(WINDOW_UPDATE, 0, 0, &0x7fff_ffffu32.to_be_bytes());
    assert_eq!(c.goaway().1, FLOW_CONTROL_ERROR);
    still_serves(&server);
    stop(&server);
}

#[test]
fn malformed_requests_are_reset_with_protocol_error() {
    let server = server_with(Server::builder());
    let mut c = H2Raw::connect(server.local_addr());
    let cases: [&[(&str, &str)]; 4] = [
        &[("Upper", "x")],
        &[("connection", "close")],
        &[("x", "a\rb")],
        &[("te", "gzip")],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let id = 1 + 2 * i as u32;
        c.get(id, "/", true, extra);
        assert_eq!(c.rst(id), PROTOCOL_ERROR, "{extra:?}");
    }
    // A body longer than its content-length.
    c.get(9, "/", false, &[("content-length", "2")]);
    c.frame(DATA, END_STREAM, 9, b"abc");
    assert_eq!(c.rst(9), PROTOCOL_ERROR);
    // PING is answered; the connection is still good.
    c.frame(PING, 0, 0, &[1; 8]);
    c.get(11, "/", true, &[]);
    c.response_block(11);
    let _ = PRIORITY;
    stop(&server);
}

/// Recurses until the fiber's stack overflows.
#[inline(never)]
fn deep(n: u64) -> u64 {
    let frame = std::hint::black_box([n as u8; 4096]);
    if n == u64::MAX {
        return 0;
    }
    deep(n + 1).wrapping_add(u64::from(frame[0]))
}

#[test]
fn a_stream_fiber_that_overflows_its_stack_gives_its_slot_back() {
    let handler = |req: &mut Request<'_>, res: &mut Response| {
        if req.path() == "/deep" {
            res.body(deep(0).to_string());
        } else {
            res.body("ok");
        }
        Ok(())
    };
    let server = start(Server::builder(), handler);
    let mut c = H2Raw::connect(server.local_addr());
    // As many overflows as the connection has stream slots and pool fibers: each stream is
    // reset at once, and its slot and fiber come back.
    let mut id = 1;
    for _ in 0..100 {
        c.get(id, "/deep", true, &[]);
        assert_eq!(c.rst(id), 0x2, "INTERNAL_ERROR for stream {id}");
        id += 2;
    }
    for _ in 0..100 {
        c.get(id, "/", true, &[]);
        let answer = c.response_block(id);
        assert_eq!(answer[0], 0x80 | 8, "200 for stream {id}: {answer:?}");
        id += 2;
    }
    stop(&server);
}
