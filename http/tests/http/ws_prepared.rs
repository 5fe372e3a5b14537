//! A message framed once (`Prepared`) sent on a whole and a split socket, to a client with and
//! without permessage-deflate (a compressing socket frames it anew), and from the client
//! (which must mask it): each arrives as the message it was made from.

use moria_http::ws::{Acceptor, Config, DeflateConfig, Message, Prepared};
use moria_http::{Request, Response, Server};

use crate::common::stop;
use crate::common::tls::Fixture;
use crate::common::ws::{client, frame, handshake, read_frame};

#[test]
fn a_prepared_message_arrives_whole_compressed_or_not_and_from_the_client() {
    let text = Prepared::text("to everyone: héllo");
    let big = Prepared::binary(&vec![9u8; 70_000]);
    let acceptor = Acceptor::new().config(Config::new().deflate(DeflateConfig::default()));
    let f = Fixture::start(
        false,
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| {
            let (text, big) = (text.clone(), big.clone());
            acceptor.accept(req, res, move |mut ws| {
                if ws.send_prepared(&text).is_err() {
                    return;
                }
                let Ok((mut reader, writer)) = ws.split() else {
                    return;
                };
                if writer.send_prepared(&big).is_err() {
                    return;
                }
                while let Ok(m) = reader.read() {
                    let sent = match m {
                        Message::Text(t) => writer.send_text(&format!("got {t}")),
                        Message::Close(_) => return,
                        _ => Ok(()),
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
            Ok(())
        },
    );
    for deflate in [false, true] {
        let mut ws = client(f.server.local_addr(), deflate);
        assert_eq!(
            ws.read().unwrap(),
            Message::Text("to everyone: héllo".into())
        );
        assert_eq!(ws.read().unwrap(), Message::Binary(vec![9u8; 70_000]));
        ws.send_prepared(&Prepared::text("from the client"))
            .unwrap();
        assert_eq!(
            ws.read().unwrap(),
            Message::Text("got from the client".into())
        );
        ws.close(1000, "").unwrap();
    }
    stop(&f.server);
}

#[test]
fn messages_that_arrived_together_are_ready_and_go_back_as_one_batch() {
    let f = Fixture::start(
        false,
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| {
            Acceptor::new().accept(req, res, |ws| {
                let Ok((mut reader, writer)) = ws.split() else {
                    return;
                };
                let mut batch = Vec::new();
                while let Ok(Message::Text(t)) = reader.read() {
                    batch.push(Prepared::text(&t));
                    if !reader.is_ready() {
                        let mut all = vec![Prepared::text(&batch.len().to_string())];
                        all.append(&mut batch);
                        if writer.send_prepared(&Prepared::batch(&all)).is_err() {
                            return;
                        }
                    }
                }
            });
            Ok(())
        },
    );
    let mut c = f.connect();
    assert_eq!(handshake(&mut *c, "").status, 101);
    // One write: the server's first read takes all three frames.
    let mut bytes = frame(true, 1, b"a", true);
    bytes.extend(frame(true, 1, b"b", true));
    bytes.extend(frame(true, 1, b"c", true));
    c.write_all(&bytes).unwrap();
    for expected in ["3", "a", "b", "c"] {
        assert_eq!(
            read_frame(&mut *c),
            Some((true, 1, expected.as_bytes().to_vec()))
        );
    }
    c.write_all(&frame(true, 1, b"d", true)).unwrap();
    assert_eq!(read_frame(&mut *c), Some((true, 1, b"1".to_vec())));
    assert_eq!(read_frame(&mut *c), Some((true, 1, b"d".to_vec())));
    stop(&f.server);
}
