//! Quiet sockets (`Config::quiet_after`, here zero: every wait between messages goes quiet),
//! HTTP and HTTPS: with their buffers and deep stack pages given back they still echo
//! messages of every size (a frame head cut across the small first read, payloads past the
//! read buffer), answer pings, close cleanly, and get 1001 when the server shuts down.

use std::time::Duration;

use moria_http::ws::Config;

use crate::common::stop;
use crate::common::ws::{echo_server, frame, handshake, read_frame};

fn quiet() -> Config {
    Config::new().quiet_after(Duration::ZERO)
}

#[test]
fn quiet_sockets_echo_every_size_answer_pings_and_close() {
    for tls in [false, true] {
        let f = echo_server(tls, quiet());
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        for (i, len) in [0usize, 1, 60, 63, 64, 65, 125, 126, 4096, 70_000]
            .into_iter()
            .enumerate()
        {
            let payload = vec![i as u8; len];
            c.write_all(&frame(true, 2, &payload, true)).unwrap();
            assert_eq!(
                read_frame(&mut *c),
                Some((true, 2, payload)),
                "{len} bytes (tls: {tls})"
            );
        }
        c.write_all(&frame(true, 9, b"p", true)).unwrap();
        assert_eq!(read_frame(&mut *c), Some((true, 10, b"p".to_vec())));
        c.write_all(&frame(true, 8, &1000u16.to_be_bytes(), true))
            .unwrap();
        assert_eq!(
            read_frame(&mut *c),
            Some((true, 8, 1000u16.to_be_bytes().to_vec()))
        );
        stop(&f.server);
    }
}

#[test]
fn a_shutdown_sends_1001_to_quiet_sockets() {
    for tls in [false, true] {
        let f = echo_server(tls, quiet());
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        c.write_all(&frame(true, 1, b"x", true)).unwrap();
        assert!(read_frame(&mut *c).is_some());
        stop(&f.server);
        let (_, op, payload) =
            read_frame(&mut *c).unwrap_or_else(|| panic!("no close frame (tls: {tls})"));
        assert_eq!((op, &payload[..2]), (8, &1001u16.to_be_bytes()[..]));
    }
}
