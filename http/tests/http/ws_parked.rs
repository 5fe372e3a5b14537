//! Parked mode (`Acceptor::accept_parked`), HTTP and HTTPS: sockets wait between messages
//! without a fiber and still echo, answer pings, close cleanly, run their handler once per
//! message, and get 1001 when the server shuts down while they are parked. A fiber woken for a
//! parked socket is the connection's fiber for the server: if it dies of a stack overflow, the
//! socket and its slot are reclaimed.

use std::sync::Arc;

use moria_http::ws::{Acceptor, Message, WebSocket};
use moria_http::{Request, Response, Server};

use crate::common::tls::Fixture;
use crate::common::ws::{frame, handshake, read_frame};
use crate::common::{assert_closed, stop, wait_until};
use crate::server_faults::big_frame;

/// A server whose sockets are parked between messages, `on_message` run for each.
fn parked_server(
    tls: bool,
    on_message: impl Fn(&mut WebSocket, Message) + Send + Sync + 'static,
) -> Fixture {
    let acceptor = Acceptor::new();
    let on_message = Arc::new(on_message);
    Fixture::start(
        tls,
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| {
            let on_message = Arc::clone(&on_message);
            acceptor.accept_parked(req, res, move |ws, msg| on_message(ws, msg));
            Ok(())
        },
    )
}

fn parked_echo(tls: bool) -> Fixture {
    parked_server(tls, |ws, msg| {
        if let Message::Text(_) | Message::Binary(_) = msg {
            let _ = ws.send(msg);
        }
    })
}

#[test]
fn parked_sockets_echo_ping_and_close() {
    for tls in [false, true] {
        let f = parked_echo(tls);
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        for i in 0..20u8 {
            // One message at a time: the socket parks between them.
            c.write_all(&frame(true, 2, &[i; 300], true)).unwrap();
            assert_eq!(read_frame(&mut *c), Some((true, 2, vec![i; 300])));
        }
        let mut burst = frame(true, 9, b"p", true);
        burst.extend(frame(true, 1, b"a", true));
        burst.extend(frame(true, 1, b"b", true));
        c.write_all(&burst).unwrap();
        assert_eq!(read_frame(&mut *c), Some((true, 10, b"p".to_vec())));
        assert_eq!(read_frame(&mut *c), Some((true, 1, b"a".to_vec())));
        assert_eq!(read_frame(&mut *c), Some((true, 1, b"b".to_vec())));
        c.write_all(&frame(true, 8, &1000u16.to_be_bytes(), true))
            .unwrap();
        assert_eq!(
            read_frame(&mut *c),
            Some((true, 8, 1000u16.to_be_bytes().to_vec()))
        );
        assert_closed(&mut *c);
        stop(&f.server);
    }
}

#[test]
fn a_shutdown_sends_1001_to_parked_sockets() {
    for tls in [false, true] {
        let f = parked_echo(tls);
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        c.write_all(&frame(true, 1, b"x", true)).unwrap();
        assert!(read_frame(&mut *c).is_some());
        wait_until("the socket is open", || f.server.connections() == 1);
        stop(&f.server);
        let (_, op, payload) =
            read_frame(&mut *c).unwrap_or_else(|| panic!("no close frame (tls: {tls})"));
        assert_eq!((op, &payload[..2]), (8, &1001u16.to_be_bytes()[..]));
    }
}

#[test]
fn a_woken_fiber_that_overflows_its_stack_has_its_socket_reclaimed() {
    for tls in [false, true] {
        let f = parked_server(tls, |ws, msg| match msg {
            Message::Text(t) if t == "deep" => {
                let _ = ws.send_text(&big_frame().to_string());
            }
            Message::Text(_) | Message::Binary(_) => {
                let _ = ws.send(msg);
            }
            _ => {}
        });
        let mut c = f.connect();
        assert_eq!(handshake(&mut *c, "").status, 101);
        // Answered, then the socket parks: "deep" is read by a fiber the lot starts.
        c.write_all(&frame(true, 1, b"x", true)).unwrap();
        assert!(read_frame(&mut *c).is_some());
        c.write_all(&frame(true, 1, b"deep", true)).unwrap();
        wait_until("the dead fiber's socket is reclaimed", || {
            f.server.stats().reclaimed == 1
        });
        assert_closed(&mut *c);
        assert_eq!(f.server.connections(), 0);
        stop(&f.server);
    }
}
