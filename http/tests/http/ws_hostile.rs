//! Hostile WebSocket peers over raw sockets: a client that never reads (the server's sends
//! time out instead of piling up), a 2^63 frame length, 10,000 pings in one burst, and a
//! client that stops in the middle of a frame.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;

use moria_http::ws::{Acceptor, Config, Error};
use moria_http::{Request, Response, Server};

use crate::common::tls::Fixture;
use crate::common::ws::{echo_server, frame, handshake, read_frame};
use crate::common::{assert_closed, stop, CLIENT_TIMEOUT};

#[test]
fn a_client_that_never_reads_makes_sends_time_out() {
    let (tx, rx) = mpsc::channel();
    let acceptor = Acceptor::new();
    let f = Fixture::start(
        false,
        Server::builder().write_timeout(Duration::from_millis(300)),
        move |req: &mut Request<'_>, res: &mut Response| {
            let tx = tx.clone();
            acceptor.accept(req, res, move |mut ws| {
                let chunk = vec![7u8; 1 << 20];
                let mut sent = 0u64;
                let err = loop {
                    match ws.send_binary(&chunk) {
                        Ok(()) => sent += 1,
                        Err(e) => break e,
                    }
                };
                let _ = tx.send((sent, err));
            });
            Ok(())
        },
    );
    let mut c = f.connect();
    assert_eq!(handshake(&mut *c, "").status, 101);
    let (sent, err) = rx
        .recv_timeout(CLIENT_TIMEOUT)
        .expect("the send loop ended");
    match err {
        Error::Io(e) => assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}"),
        e => panic!("send failed with {e}"),
    }
    // Only what the socket buffers hold went out before the timeout: nothing queued in memory.
    assert!(sent < 64, "{sent} MiB accepted by a peer that never reads");
    drop(c);
    stop(&f.server);
}

#[test]
fn a_two_to_the_63_length_is_a_protocol_error() {
    let f = echo_server(false, Config::new());
    let mut c = f.connect();
    assert_eq!(handshake(&mut *c, "").status, 101);
    c.write_all(&[0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4])
        .unwrap();
    let (_, op, payload) = read_frame(&mut *c).expect("a close frame");
    assert_eq!((op, &payload[..2]), (8, &1002u16.to_be_bytes()[..]));
    assert_closed(&mut *c);
    stop(&f.server);
}

#[test]
fn ten_thousand_pings_get_ten_thousand_pongs_then_the_echo() {
    let f = echo_server(false, Config::new());
    let mut c = crate::common::connect(f.server.local_addr());
    assert_eq!(handshake(&mut c, "").status, 101);
    let mut burst = Vec::new();
    for i in 0..10_000u32 {
        burst.extend(frame(true, 9, &i.to_be_bytes(), true));
    }
    burst.extend(frame(true, 1, b"after", true));
    let mut writer = c.try_clone().unwrap();
    let sender = std::thread::spawn(move || writer.write_all(&burst));
    for i in 0..10_000u32 {
        assert_eq!(
            read_frame(&mut c),
            Some((true, 10, i.to_be_bytes().to_vec()))
        );
    }
    assert_eq!(read_frame(&mut c), Some((true, 1, b"after".to_vec())));
    sender.join().unwrap().unwrap();
    stop(&f.server);
}

#[test]
fn a_client_that_stops_mid_frame_is_cut_after_the_frame_timeout() {
    let f = echo_server(
        false,
        Config::new().frame_timeout(Duration::from_millis(200)),
    );
    let mut c = f.connect();
    assert_eq!(handshake(&mut *c, "").status, 101);
    let whole = frame(true, 2, &[1u8; 1000], true);
    c.write_all(&whole[..500]).unwrap();
    let (_, op, payload) = read_frame(&mut *c).expect("a close frame");
    assert_eq!((op, &payload[..2]), (8, &1001u16.to_be_bytes()[..]));
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
    stop(&f.server);
}
