//! Messages read as a stream (`WebSocket::read_stream`): a fragmented message with a ping
//! between its fragments, compressed and not, arrives as a `Read` whose bytes add up to the
//! message; text is still checked as it streams, and an unread rest is skipped.

use std::io::Read;

use moria_http::ws::{Acceptor, Config, DeflateConfig, Message};
use moria_http::{Request, Response, Server};

use crate::common::stop;
use crate::common::tls::Fixture;
use crate::common::ws::{client, frame, handshake, read_frame};

/// A server whose handler streams each message and answers `text? length sum`.
fn summing_server() -> Fixture {
    let acceptor = Acceptor::new().config(Config::new().deflate(DeflateConfig::default()));
    Fixture::start(
        false,
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| {
            acceptor.accept(req, res, |mut ws| loop {
                let (text, len, sum) = {
                    let Ok(mut m) = ws.read_stream() else { return };
                    let mut buf = [0u8; 1000];
                    let (mut len, mut sum) = (0u64, 0u64);
                    loop {
                        match m.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                len += n as u64;
                                sum += buf[..n].iter().map(|&b| u64::from(b)).sum::<u64>();
                            }
                            Err(_) => return,
                        }
                    }
                    (m.is_text(), len, sum)
                };
                if ws.send_text(&format!("{text} {len} {sum}")).is_err() {
                    return;
                }
            });
            Ok(())
        },
    )
}

#[test]
fn a_fragmented_message_streams_with_a_ping_between_fragments() {
    let f = summing_server();
    let mut c = f.connect();
    assert_eq!(handshake(&mut *c, "").status, 101);
    let mut bytes = frame(false, 2, &[1u8; 50_000], true);
    bytes.extend(frame(true, 9, b"p", true));
    bytes.extend(frame(false, 0, &[2u8; 50_000], true));
    bytes.extend(frame(true, 0, &[3u8; 50_000], true));
    c.write_all(&bytes).unwrap();
    assert_eq!(read_frame(&mut *c), Some((true, 10, b"p".to_vec())));
    assert_eq!(
        read_frame(&mut *c),
        Some((true, 1, b"false 150000 300000".to_vec()))
    );
    // Text that breaks UTF-8 in its second fragment fails as it streams: 1007.
    let mut bytes = frame(false, 1, "ok ".as_bytes(), true);
    bytes.extend(frame(true, 0, &[0xff], true));
    c.write_all(&bytes).unwrap();
    let (_, op, payload) = read_frame(&mut *c).expect("a close frame");
    assert_eq!((op, &payload[..2]), (8, &1007u16.to_be_bytes()[..]));
    stop(&f.server);
}

#[test]
fn compressed_messages_stream_from_moria_client() {
    let f = summing_server();
    for deflate in [false, true] {
        let mut ws = client(f.server.local_addr(), deflate);
        let big = vec![5u8; 300_000];
        ws.send_binary(&big).unwrap();
        assert_eq!(
            ws.read().unwrap(),
            Message::Text("false 300000 1500000".into())
        );
        ws.send_text("héllo").unwrap();
        let sum: u64 = "héllo".bytes().map(u64::from).sum();
        assert_eq!(ws.read().unwrap(), Message::Text(format!("true 6 {sum}")));
        ws.close(1000, "").unwrap();
    }
    stop(&f.server);
}
