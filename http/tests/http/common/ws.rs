//! WebSocket helpers: an echo server (plain or TLS) and a raw-frame client for the tests
//! that must send what no well-behaved client would.

use moria_http::ws::{Acceptor, Config, Message, WebSocket};
use moria_http::{Request, Response, Server};

use super::tls::Fixture;
use super::{read_response, ClientConn, Resp};

/// The echo handler's loop: every message back as it came, until the peer closes.
pub fn echo(mut ws: WebSocket) {
    while let Ok(msg) = ws.read() {
        let sent = match msg {
            Message::Text(_) | Message::Binary(_) => ws.send(msg),
            Message::Close(_) => return,
            _ => Ok(()),
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Starts a server that echoes WebSocket messages at every path, with `config`.
pub fn echo_server(tls: bool, config: Config) -> Fixture {
    let acceptor = Acceptor::new().config(config).protocols(&["echo"]);
    Fixture::start(
        tls,
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| {
            acceptor.accept(req, res, echo);
            Ok(())
        },
    )
}

/// Our client on `ws://ADDR/`, offering permessage-deflate when `deflate` (and checked to
/// have it agreed or not).
pub fn client(addr: std::net::SocketAddr, deflate: bool) -> WebSocket {
    let mut config = Config::new();
    if deflate {
        config = config.deflate(moria_http::ws::DeflateConfig::default());
    }
    let ws = moria_http::client::Client::new()
        .unwrap()
        .websocket(&format!("ws://{addr}/"))
        .config(config)
        .connect()
        .unwrap();
    assert_eq!(ws.is_compressed(), deflate);
    ws
}

/// The RFC's sample key and its accept value.
pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
pub const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/// Sends a handshake for `/` with `extra` header lines and reads the answer.
pub fn handshake(conn: &mut dyn ClientConn, extra: &str) -> Resp {
    let req = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    );
    conn.write_all(req.as_bytes()).unwrap();
    read_response(conn, true).expect("a handshake answer")
}

/// One frame, masked with a fixed key (`masked`) as a client sends it.
pub fn frame(fin: bool, opcode: u8, payload: &[u8], masked: bool) -> Vec<u8> {
    let mut f = vec![(u8::from(fin) << 7) | opcode];
    let m = if masked { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => f.push(m | n as u8),
        n if n <= 0xffff => {
            f.push(m | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(m | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let key = [0x11, 0x22, 0x33, 0x44];
    if masked {
        f.extend_from_slice(&key);
    }
    f.extend(
        payload
            .iter()
            .enumerate()
            .map(|(i, b)| if masked { b ^ key[i % 4] } else { *b }),
    );
    f
}

/// Reads one unmasked frame: `(fin, opcode, payload)`, `None` at the end of the stream.
pub fn read_frame(conn: &mut dyn ClientConn) -> Option<(bool, u8, Vec<u8>)> {
    let mut h = [0u8; 2];
    conn.read_exact(&mut h).ok()?;
    assert_eq!(h[1] & 0x80, 0, "the server masked a frame");
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            conn.read_exact(&mut b).ok()?;
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            conn.read_exact(&mut b).ok()?;
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    let mut payload = vec![0u8; len as usize];
    conn.read_exact(&mut payload).ok()?;
    Some((h[0] & 0x80 != 0, h[0] & 0x0f, payload))
}

/// A program the workspace's `.tools/` provides (`rel` under it), else one on `PATH`; a
/// missing one fails the test naming `./test.sh --install-only`.
pub fn tool(rel: &str) -> std::path::PathBuf {
    let local = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools")
        .join(rel);
    if local.exists() {
        return local;
    }
    let name = std::path::Path::new(rel)
        .file_name()
        .expect("a file name")
        .to_owned();
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(&name))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("{rel} is missing: run `./test.sh --install-only` (it installs .tools/)")
        })
}
