//! Echo server: every byte a client sends comes back. The runtime's first user. With
//! `--ws ADDR` it also serves a WebSocket echo at `/` on ADDR (every message sent back as it
//! came, permessage-deflate offered): the target of Autobahn's cases (bench/scripts/autobahn.sh).
//!
//! `cargo run --release -p moria-examples --bin echo -- --listen 127.0.0.1:7000 --workers 2`
//! `cargo run --release -p moria-examples --bin echo -- --ws 127.0.0.1:9001`
//! `--wss ADDR` serves the same over HTTPS (a self-signed certificate for localhost);
//! `--ws-deflate off|on|low-memory` picks what permessage-deflate accepts (default `on`:
//! context takeover both ways; `low-memory`: none, no compression state between messages);
//! `--ws-parked` lets idle sockets wait without a fiber; `--ws-split` echoes through the
//! socket's split halves (the reader waits, the writer sends), as a broadcasting server does.

use std::io::{Read, Write};
use std::time::Duration;

use clap::Parser;
use moria_crypto::{Identity, TlsAcceptor};
use moria_http::ws::{self, Acceptor, DeflateConfig, Message, WebSocket};
use moria_http::{Request, Response, Server};
use moria_runtime::net::TcpListener;
use moria_runtime::{shutdown, spawn, stats, Deadline};

/// Command-line flags (each has a `MORIA_*` environment equivalent).
#[derive(Parser, Debug)]
#[command(about = "Moria echo server")]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "MORIA_LISTEN", default_value = "127.0.0.1:7000")]
    listen: String,
    /// Scheduler worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    workers: Option<usize>,
    /// How long shutdown waits for open connections.
    #[arg(long, env = "MORIA_DRAIN_SECS", default_value_t = 5)]
    drain_secs: u64,
    /// Also serve a WebSocket echo at `/` on this address.
    #[arg(long, env = "MORIA_WS")]
    ws: Option<String>,
    /// The WebSocket echo over HTTPS on this address (self-signed certificate).
    #[arg(long, env = "MORIA_WSS")]
    wss: Option<String>,
    /// permessage-deflate for the WebSocket echo: off, on, low-memory.
    #[arg(long, env = "MORIA_WS_DEFLATE", default_value = "on")]
    ws_deflate: String,
    /// WebSocket echo sockets wait between messages without a fiber (`accept_parked`).
    #[arg(long, env = "MORIA_WS_PARKED")]
    ws_parked: bool,
    /// WebSocket echo through the socket's split reader and writer halves.
    #[arg(long, env = "MORIA_WS_SPLIT", conflicts_with = "ws_parked")]
    ws_split: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    moria_examples::init_logging("info,may=warn")?;
    let args = Args::parse();
    let runtime = moria_examples::start_runtime(args.workers)?;
    shutdown::listen_for_signals()?;

    let ws_server = match (&args.ws, &args.wss) {
        (None, None) => None,
        (ws, wss) => Some(ws_echo(
            ws.as_deref(),
            wss.as_deref(),
            &args.ws_deflate,
            WsMode::of(args.ws_parked, args.ws_split),
        )?),
    };
    let mut listener = TcpListener::bind(args.listen.as_str())?;
    log::info!(
        "echo listening on {} with {} workers (Ctrl-C to stop)",
        listener.local_addr()?,
        runtime.config().workers
    );
    runtime.run(move || -> std::io::Result<()> {
        let token = shutdown::global();
        while let Some((conn, peer)) = listener.accept_until(token)? {
            spawn(move || {
                if let Err(e) = echo(conn) {
                    log::debug!("{peer}: {e}");
                }
            });
        }
        Ok(())
    })??;
    log::info!("shutting down; waiting for open connections");
    if let Some(server) = ws_server {
        server.wait();
    }
    if let Err(e) = shutdown::drain(Deadline::after(Duration::from_secs(args.drain_secs))) {
        log::warn!("{e}");
    }
    log::info!("final counters:\n{}", stats());
    Ok(())
}

/// Copies everything read back to the peer until EOF, exiting early on shutdown.
fn echo(mut conn: moria_runtime::net::TcpStream) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut buf = [0u8; 16 * 1024];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => conn.write_all(&buf[..n])?,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                if shutdown::global().is_triggered() {
                    return Ok(());
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Connections the WebSocket echo holds at once.
const WS_MAX_CONNECTIONS: usize = 100_000;

/// How the WebSocket echo serves its sockets.
#[derive(Clone, Copy)]
enum WsMode {
    /// A fiber per socket, blocking in `read`.
    Whole,
    /// No fiber between messages (`accept_parked`).
    Parked,
    /// A fiber per socket over the split halves.
    Split,
}

impl WsMode {
    fn of(parked: bool, split: bool) -> WsMode {
        match (parked, split) {
            (true, _) => WsMode::Parked,
            (false, true) => WsMode::Split,
            (false, false) => WsMode::Whole,
        }
    }
}

/// Starts the WebSocket echo server at `/` on `ws` (HTTP) and `wss` (HTTPS).
fn ws_echo(
    ws: Option<&str>,
    wss: Option<&str>,
    deflate: &str,
    mode: WsMode,
) -> Result<Server, Box<dyn std::error::Error>> {
    let config = match deflate {
        "off" => ws::Config::new(),
        "on" => ws::Config::new().deflate(DeflateConfig::default()),
        "low-memory" => ws::Config::new().deflate(DeflateConfig::low_memory()),
        other => return Err(format!("--ws-deflate {other}: off, on or low-memory").into()),
    };
    let acceptor = Acceptor::new().config(config);
    // Idle sockets are the point of a WebSocket server (bench/scripts/ws_idle.py holds 10,000).
    let mut builder = Server::builder()
        .max_connections(WS_MAX_CONNECTIONS)
        .shutdown_token(shutdown::global().clone());
    if let Some(addr) = ws {
        builder = builder.listen(addr);
    }
    if let Some(addr) = wss {
        let identity = Identity::self_signed(&["localhost", "127.0.0.1"])?;
        builder = builder.listen_tls(addr, TlsAcceptor::builder(identity).build()?);
    }
    let server = builder.start(move |req: &mut Request<'_>, res: &mut Response| {
        match mode {
            WsMode::Parked => acceptor.accept_parked(req, res, echo_one),
            WsMode::Whole => acceptor.accept(req, res, ws_echo_loop),
            WsMode::Split => acceptor.accept(req, res, ws_echo_split),
        };
        Ok(())
    })?;
    log::info!("WebSocket echo at {:?}", server.local_addrs());
    Ok(server)
}

/// Parked mode's handler: sends a text or binary message back as it came.
fn echo_one(socket: &mut WebSocket, msg: Message) {
    if let Message::Text(_) | Message::Binary(_) = msg {
        if let Err(e) = socket.send(msg) {
            log::debug!("websocket: {e}");
        }
    }
}

/// [`ws_echo_loop`] over the socket's split halves.
fn ws_echo_split(socket: WebSocket) {
    let (mut reader, writer) = match socket.split() {
        Ok(halves) => halves,
        Err(e) => return log::debug!("websocket: {e}"),
    };
    loop {
        let sent = match reader.read() {
            Ok(msg @ (Message::Text(_) | Message::Binary(_))) => writer.send(msg),
            Ok(Message::Close(_)) => return,
            Ok(_) => Ok(()),
            Err(e) => return log::debug!("websocket: {e}"),
        };
        if let Err(e) = sent {
            return log::debug!("websocket: {e}");
        }
    }
}

/// Sends every message back as it came, until the peer closes.
fn ws_echo_loop(mut socket: WebSocket) {
    loop {
        let sent = match socket.read() {
            Ok(msg @ (Message::Text(_) | Message::Binary(_))) => socket.send(msg),
            Ok(Message::Close(_)) => return,
            Ok(_) => Ok(()),
            Err(e) => {
                log::debug!("websocket: {e}");
                return;
            }
        };
        if let Err(e) = sent {
            log::debug!("websocket: {e}");
            return;
        }
    }
}
