//! A split WebSocket, HTTP and HTTPS: the reader half in the handler's fiber echoing through
//! one writer clone while another fiber sends on its own clone, at the same time; the reader
//! answers pings through the shared writer; the split socket holds one descriptor.

use moria_http::client::Client;
use moria_http::ws::{Acceptor, Message};
use moria_http::{Request, Response, Server};

use crate::common::stop;
use crate::common::tls::Fixture;

const TICKS: usize = 200;

/// How many of this process's descriptors are connections accepted on `port` (sockets whose
/// local port is `port` and that have a peer), found through `/proc/net/tcp`'s inodes.
fn accepted_descriptors(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = u16::from_str_radix(f.get(1)?.rsplit(':').next()?, 16).ok()?;
            let has_peer = !f.get(2)?.ends_with(":0000");
            let inode = f.get(9)?;
            (local_port == port && has_peer).then(|| format!("socket:[{inode}]"))
        })
        .collect();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|link| inodes.iter().any(|i| link.as_os_str() == i.as_str()))
        .count()
}

#[test]
fn a_reader_and_two_writers_work_at_once() {
    for tls in [false, true] {
        let acceptor = Acceptor::new();
        let f = Fixture::start(
            tls,
            Server::builder(),
            move |req: &mut Request<'_>, res: &mut Response| {
                acceptor.accept(req, res, |ws| {
                    let Ok((mut reader, writer)) = ws.split() else {
                        return;
                    };
                    let ticker = writer.clone();
                    let ticks = moria_runtime::spawn(move || {
                        for i in 0..TICKS {
                            if ticker.send_text(&format!("tick {i}")).is_err() {
                                return;
                            }
                        }
                    });
                    while let Ok(msg) = reader.read() {
                        let sent = match msg {
                            Message::Text(t) => writer.send_text(&format!("echo {t}")),
                            Message::Close(_) => break,
                            _ => Ok(()),
                        };
                        if sent.is_err() {
                            break;
                        }
                    }
                    let _ = ticks.join();
                });
                Ok(())
            },
        );
        let scheme = if tls { "wss" } else { "ws" };
        let mut builder = Client::builder();
        if let Some(pem) = &f.pem {
            builder = builder.add_root_certificate_pem(pem);
        }
        let url = format!("{scheme}://localhost:{}/", f.server.local_addr().port());
        let mut ws = builder.build().unwrap().websocket(&url).connect().unwrap();
        for i in 0..TICKS {
            ws.send_text(&i.to_string()).unwrap();
        }
        ws.send(Message::Ping(b"?".to_vec())).unwrap();
        let (mut ticks, mut echoes, mut pong) = (0, 0, false);
        while ticks < TICKS || echoes < TICKS || !pong {
            match ws.read().unwrap() {
                Message::Text(t) if t == format!("tick {ticks}") => ticks += 1,
                Message::Text(t) if t == format!("echo {echoes}") => echoes += 1,
                Message::Pong(p) => pong = p == b"?",
                m => panic!("unexpected {m:?} after {ticks} ticks and {echoes} echoes"),
            }
        }
        assert_eq!(
            accepted_descriptors(f.server.local_addr().port()),
            1,
            "{scheme}: a split socket takes one descriptor"
        );
        ws.close(1000, "").unwrap();
        stop(&f.server);
    }
}
