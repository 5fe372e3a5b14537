//! The WebSocket handshake and the first slice of the protocol over real sockets, HTTP and
//! HTTPS: refusals with the right status and `Sec-WebSocket-Version: 13`, the 101 and its
//! accept value, echo, ping → pong, the close handshake, and server shutdown sending 1001.

use moria_http::ws::Config;

use crate::common::ws::{echo_server, frame, handshake, read_frame, ACCEPT};
use crate::common::{assert_closed, stop};

#[test]
fn bad_handshakes_get_400_or_426_with_the_version() {
    let f = echo_server(false, Config::new());
    let cases = [
        ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 426),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            426,
        ),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n",
            400,
        ),
        (
            "POST / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n",
            400,
        ),
    ];
    for (raw, status) in cases {
        let r = crate::common::exchange(f.server.local_addr(), raw.as_bytes());
        assert_eq!(r.status, status, "{raw}");
        assert_eq!(r.header("sec-websocket-version"), Some("13"), "{raw}");
    }
    stop(&f.server);
}

#[test]
fn echo_ping_and_close_over_http_and_https() {
    for tls in [false, true] {
        let f = echo_server(tls, Config::new());
        let mut c = f.connect();
        let r = handshake(&mut *c, "Sec-WebSocket-Protocol: x, echo\r\n");
        assert_eq!(r.status, 101);
        assert_eq!(r.header("sec-websocket-accept"), Some(ACCEPT));
        assert_eq!(r.header("sec-websocket-protocol"), Some("echo"));
        assert_eq!(r.header("upgrade"), Some("websocket"));
        // Two frames in one write, a fragmented text with a ping between its fragments.
        let mut bytes = frame(true, 1, b"hello", true);
        bytes.extend(frame(false, 1, "κό".as_bytes(), true));
        bytes.extend(frame(true, 9, b"p", true));
        bytes.extend(frame(true, 0, "σμε".as_bytes(), true));
        c.write_all(&bytes).unwrap();
        assert_eq!(read_frame(&mut *c), Some((true, 1, b"hello".to_vec())));
        assert_eq!(read_frame(&mut *c), Some((true, 10, b"p".to_vec())));
        assert_eq!(
            read_frame(&mut *c),
            Some((true, 1, "κόσμε".as_bytes().to_vec()))
        );
        c.write_all(&frame(true, 8, &[0x03, 0xe8, b'b', b'y', b'e'], true))
            .unwrap();
        assert_eq!(read_frame(&mut *c), Some((true, 8, vec![0x03, 0xe8])));
        assert_closed(&mut *c);
        stop(&f.server);
    }
}

#[test]
fn protocol_errors_get_their_close_codes() {
    let f = echo_server(false, Config::new().max_message(1000));
    let cases: [(Vec<u8>, u16); 5] = [
        (frame(true, 1, b"unmasked", false), 1002),
        (frame(true, 3, b"", true), 1002),
        (frame(true, 0, b"x", true), 1002),
        (frame(true, 1, &[0xce, 0xba, 0xff], true), 1007),
        (frame(true, 2, &[0u8; 1001], true), 1009),
    ];
    for (bytes, code) in cases {
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        c.write_all(&bytes).unwrap();
        let (_, op, payload) = read_frame(&mut *c).expect("a close frame");
        assert_eq!(
            (op, u16::from_be_bytes([payload[0], payload[1]])),
            (8, code)
        );
        assert_closed(&mut *c);
    }
    stop(&f.server);
}

#[test]
fn shutdown_sends_1001_to_open_websockets() {
    for tls in [false, true] {
        let f = echo_server(tls, Config::new());
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        c.write_all(&frame(true, 1, b"x", true)).unwrap();
        assert!(read_frame(&mut *c).is_some());
        crate::common::wait_until("the socket waits", || f.server.connections() == 1);
        stop(&f.server);
        let (_, op, payload) = read_frame(&mut *c).expect("a close frame");
        assert_eq!((op, &payload[..2]), (8, &[0x03, 0xe9][..]));
    }
}
