//! Interop with other WebSocket implementations as real peers, compressed and not: Python
//! `websockets` and npm `ws` (both from .tools/, `./test.sh --install-only`) as clients of
//! Moria's echo server and as echo servers for Moria's client.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use moria_http::client::Client;
use moria_http::ws::{Config, DeflateConfig, Message};

use crate::common::stop;
use crate::common::ws::{echo_server, tool};

/// A Python `websockets` client: text, a 100 kB binary (compressible), a ping; every echo
/// checked; with `compress` the server must have agreed to permessage-deflate.
const PY_CLIENT: &str = r#"
import sys
from websockets.sync.client import connect
url, compress = sys.argv[1], sys.argv[2] == "1"
with connect(url, compression="deflate" if compress else None, max_size=None) as ws:
    ext = ws.response.headers.get("Sec-WebSocket-Extensions", "")
    assert ("permessage-deflate" in ext) == compress, ext
    for msg in ["héllo", bytes(range(256)) * 400, "x" * 70000]:
        ws.send(msg)
        assert ws.recv() == msg
    ws.ping(b"p").wait(10)
print("ok")
"#;

/// A Python `websockets` echo server on an ephemeral port (printed first).
const PY_SERVER: &str = r#"
import sys
from websockets.sync.server import serve
def echo(ws):
    for msg in ws:
        ws.send(msg)
with serve(echo, "127.0.0.1", 0, compression="deflate" if sys.argv[1] == "1" else None, max_size=None) as s:
    print(s.socket.getsockname()[1], flush=True)
    s.serve_forever()
"#;

/// An npm `ws` client, as [`PY_CLIENT`].
const NODE_CLIENT: &str = r#"
const WebSocket = require('ws');
const [url, compress] = [process.argv[1], process.argv[2] === '1'];
const ws = new WebSocket(url, { perMessageDeflate: compress });
const msgs = ['héllo', Buffer.alloc(100000, 7), 'y'.repeat(70000)];
let i = 0;
ws.on('open', () => {
  const ext = ws.extensions || '';
  if (ext.includes('permessage-deflate') !== compress) { console.error('ext', ext); process.exit(1); }
  ws.send(msgs[0]);
});
ws.on('message', (data, isBinary) => {
  const want = msgs[i];
  const same = typeof want === 'string' ? (!isBinary && data.toString() === want) : (isBinary && Buffer.compare(data, want) === 0);
  if (!same) { console.error('mismatch at', i); process.exit(1); }
  i += 1;
  if (i < msgs.length) ws.send(msgs[i]); else ws.close(1000, 'done');
});
ws.on('close', (code) => { if (i === msgs.length && code === 1000) { console.log('ok'); process.exit(0); } process.exit(1); });
ws.on('error', (e) => { console.error(e); process.exit(1); });
"#;

/// An npm `ws` echo server on an ephemeral port (printed first).
const NODE_SERVER: &str = r#"
const WebSocket = require('ws');
const wss = new WebSocket.Server({ host: '127.0.0.1', port: 0, perMessageDeflate: process.argv[1] === '1' });
wss.on('listening', () => console.log(wss.address().port));
wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
"#;

fn python() -> Command {
    Command::new(tool("venv/bin/python3"))
}

fn node() -> Command {
    let modules = tool("node_modules/ws")
        .parent()
        .expect("node_modules")
        .to_path_buf();
    let mut c = Command::new("node");
    c.env("NODE_PATH", modules);
    c
}

/// Runs a peer client script against the echo server, with and without compression.
fn peer_client_against_moria(mut command: impl FnMut() -> Command, script: &str, flag: &str) {
    for compress in [false, true] {
        let f = echo_server(false, Config::new().deflate(DeflateConfig::default()));
        let url = format!("ws://{}/", f.server.local_addr());
        let out = command()
            .args([flag, script, &url, if compress { "1" } else { "0" }])
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run the peer ({e}): install node (Debian `nodejs`)")
            });
        assert!(
            out.status.success(),
            "peer client (compress {compress}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        stop(&f.server);
    }
}

/// A peer server process, killed on drop.
struct PeerServer(Child, u16);

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_peer_server(mut command: Command, script: &str, flag: &str, compress: bool) -> PeerServer {
    let mut child = command
        .args([flag, script, if compress { "1" } else { "0" }])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run the peer ({e}): install node (Debian `nodejs`)"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the peer printed {line:?}, not its port"));
    PeerServer(child, port)
}

/// Moria's client against a peer echo server, with and without compression.
fn moria_client_against_peer(command: impl Fn() -> Command, script: &str, flag: &str) {
    for compress in [false, true] {
        let peer = start_peer_server(command(), script, flag, compress);
        let url = format!("ws://127.0.0.1:{}/", peer.1);
        let mut ws = Client::new()
            .unwrap()
            .websocket(&url)
            .config(Config::new().deflate(DeflateConfig::default()))
            .connect()
            .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
        assert_eq!(ws.is_compressed(), compress);
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for msg in [
            Message::Text("héllo".into()),
            Message::Binary(big),
            Message::Text("z".repeat(70_000)),
        ] {
            ws.send(msg.clone()).unwrap();
            assert_eq!(ws.read().unwrap(), msg);
        }
        ws.close(1000, "done").unwrap();
    }
}

#[test]
fn python_websockets_client_against_moria() {
    peer_client_against_moria(python, PY_CLIENT, "-c");
}

#[test]
fn npm_ws_client_against_moria() {
    peer_client_against_moria(node, NODE_CLIENT, "-e");
}

#[test]
fn moria_client_against_python_websockets_server() {
    moria_client_against_peer(python, PY_SERVER, "-c");
}

#[test]
fn moria_client_against_npm_ws_server() {
    moria_client_against_peer(node, NODE_SERVER, "-e");
}
