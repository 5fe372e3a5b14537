//! Quiet sockets (`Config::quiet_after`, here zero: every wait between messages goes quiet),
//! HTTP and HTTPS: with their buffers and deep stack pages given back they still echo
//! messages of every size (a frame head cut across the small first read, payloads past the
//! read buffer), answer pings, close cleanly, and get 1001 when the server shuts down. A split
//! socket's reader goes quiet too once `quiet_after` passes, `wss://` as well as `ws://` (a
//! split TLS reader used to wait holding its buffers for good).

use std::time::Duration;

use moria_http::ws::{Acceptor, Config, Message, WsReader, WsWriter};
use moria_http::{Request, Response, Server};

use crate::common::tls::Fixture;
use crate::common::ws::{echo_server, frame, handshake, read_frame};
use crate::common::{stop, wait_until, ClientConn};

/// Sizes that cut a frame head across the quiet read and pass every buffer.
const SIZES: [usize; 10] = [0, 1, 60, 63, 64, 65, 125, 126, 4096, 70_000];

fn quiet() -> Config {
    Config::new().quiet_after(Duration::ZERO)
}

/// Sends a binary message of every size in [`SIZES`] (calling `before` with its index first)
/// and checks each echo, then a ping (answered by a pong) and a close (answered with 1000).
fn echo_every_size_then_ping_and_close(
    c: &mut dyn ClientConn,
    tls: bool,
    mut before: impl FnMut(usize),
) {
    for (i, len) in SIZES.into_iter().enumerate() {
        before(i);
        let payload = vec![i as u8; len];
        c.write_all(&frame(true, 2, &payload, true)).unwrap();
        assert_eq!(
            read_frame(c),
            Some((true, 2, payload)),
            "{len} bytes (tls: {tls})"
        );
    }
    c.write_all(&frame(true, 9, b"p", true)).unwrap();
    assert_eq!(read_frame(c), Some((true, 10, b"p".to_vec())));
    c.write_all(&frame(true, 8, &1000u16.to_be_bytes(), true))
        .unwrap();
    assert_eq!(
        read_frame(c),
        Some((true, 8, 1000u16.to_be_bytes().to_vec()))
    );
}

#[test]
fn quiet_sockets_echo_every_size_answer_pings_and_close() {
    for tls in [false, true] {
        let f = echo_server(tls, quiet());
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        echo_every_size_then_ping_and_close(&mut *c, tls, |_| {});
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

/// The split echo loop: the reader echoes every data message through the writer.
fn split_echo((mut reader, writer): (WsReader, WsWriter)) {
    while let Ok(msg) = reader.read() {
        let sent = match msg {
            Message::Text(_) | Message::Binary(_) => writer.send(msg),
            Message::Close(_) => return,
            _ => Ok(()),
        };
        if sent.is_err() {
            return;
        }
    }
}

#[test]
fn split_readers_go_quiet_and_still_echo_every_size() {
    for tls in [false, true] {
        // Short, so the test waits little; the client sends each message only once the
        // server counted the wait before it as quiet, so every wait goes quiet exactly once.
        let acceptor = Acceptor::new().config(Config::new().quiet_after(Duration::from_millis(20)));
        let f = Fixture::start(
            tls,
            Server::builder(),
            move |req: &mut Request<'_>, res: &mut Response| {
                acceptor.accept(req, res, |ws| {
                    if let Ok(halves) = ws.split() {
                        split_echo(halves);
                    }
                });
                Ok(())
            },
        );
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        echo_every_size_then_ping_and_close(&mut *c, tls, |i| {
            let waits = i as u64 + 1;
            wait_until(&format!("quiet wait {waits} (tls: {tls})"), || {
                f.server.stats().ws_quiet >= waits
            });
        });
        stop(&f.server);
    }
}
