//! WebSocket peer for `compare`'s ws scenarios: tokio + tokio-tungstenite, written the way that
//! crate's examples write a server. `/` echoes every message as it came (the target of the
//! echo round trips); `/ws/ROOM` relays every text or binary message a member sends to every
//! member of ROOM, the sender included (the broadcast fan-out), through one
//! `tokio::sync::broadcast` channel per room, as tokio's chat examples do. No compression is
//! negotiated (neither side of the bench offers it).
//!
//! `cargo run --release -p moria-bench --bin peer_ws_tokio -- --listen 127.0.0.1:8092 [--workers N]`

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::handshake::server::{
    Callback, ErrorResponse, Request, Response,
};
use tokio_tungstenite::tungstenite::Message;

/// Command-line flags.
#[derive(Parser)]
#[command(about = "tokio-tungstenite echo and broadcast peer")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8092")]
    listen: String,
    /// Worker threads (default: one per CPU).
    #[arg(long)]
    workers: Option<usize>,
}

/// The listen backlog: Moria's default (`moria_runtime::net::DEFAULT_BACKLOG`), not tokio's
/// 1024, so a burst of 10,000 connects (the broadcast's members) meets the same accept queue
/// on both servers; past the queue, Linux drops the handshake's last ACK and the client waits
/// for SYN-ACK retransmits (1 s, 2 s, 4 s, ...).
const BACKLOG: u32 = 4096;

/// Messages a room keeps for a member that fell behind before it drops the oldest (the member
/// is told it lagged and goes on with the newest).
const ROOM_BACKLOG: usize = 1024;

/// The rooms, each a broadcast channel, created on first join.
#[derive(Default)]
struct Rooms(Mutex<HashMap<String, broadcast::Sender<Message>>>);

impl Rooms {
    fn join(&self, room: &str) -> broadcast::Sender<Message> {
        let mut rooms = self.0.lock().unwrap_or_else(|p| p.into_inner());
        rooms
            .entry(room.to_string())
            .or_insert_with(|| broadcast::channel(ROOM_BACKLOG).0)
            .clone()
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let workers = args
        .workers
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("peer_ws_tokio: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(&args.listen)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer_ws_tokio: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(listen: &str) -> std::io::Result<()> {
    let addr = tokio::net::lookup_host(listen)
        .await?
        .next()
        .ok_or_else(|| std::io::Error::other(format!("{listen}: no address")))?;
    let socket = match addr {
        std::net::SocketAddr::V4(_) => TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let listener = socket.listen(BACKLOG)?;
    eprintln!("peer_ws_tokio: listening on ws://{listen}");
    let rooms = Arc::new(Rooms::default());
    loop {
        let (stream, _) = listener.accept().await?;
        let rooms = rooms.clone();
        tokio::spawn(async move {
            if let Err(e) = connection(stream, &rooms).await {
                eprintln!("peer_ws_tokio: {e}");
            }
        });
    }
}

async fn connection(stream: TcpStream, rooms: &Rooms) -> tungstenite::Result<()> {
    stream.set_nodelay(true)?;
    let mut target = (String::new(), String::new());
    let ws = tokio_tungstenite::accept_hdr_async(stream, Target(&mut target)).await?;
    let (path, query) = target;
    match path.strip_prefix("/ws/") {
        Some(room) => {
            let name = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("name="))
                .unwrap_or("anonymous")
                .to_string();
            relay(ws, rooms.join(room), name).await
        }
        None => echo(ws).await,
    }
}

/// The handshake's callback: keeps the request's path and query.
struct Target<'a>(&'a mut (String, String));

impl Callback for Target<'_> {
    fn on_request(self, req: &Request, res: Response) -> Result<Response, ErrorResponse> {
        *self.0 = (
            req.uri().path().to_string(),
            req.uri().query().unwrap_or("").to_string(),
        );
        Ok(res)
    }
}

/// Sends every data message back as it came; tungstenite answers pings and closes.
async fn echo(mut ws: tokio_tungstenite::WebSocketStream<TcpStream>) -> tungstenite::Result<()> {
    while let Some(msg) = ws.next().await {
        let msg = msg?;
        if msg.is_text() || msg.is_binary() {
            ws.send(msg).await?;
        }
    }
    Ok(())
}

/// One room member: what it sends goes to the room under its name, what the room carries
/// goes to it.
async fn relay(
    ws: tokio_tungstenite::WebSocketStream<TcpStream>,
    room: broadcast::Sender<Message>,
    name: String,
) -> tungstenite::Result<()> {
    let mut inbox = room.subscribe();
    let (mut sink, mut stream) = ws.split();
    loop {
        tokio::select! {
            msg = stream.next() => match msg {
                Some(Ok(Message::Text(text))) => {
                    let json = serde_json::json!({ "name": name, "text": text.as_str() });
                    // No member listening is not an error: the message has nobody to reach.
                    let _ = room.send(Message::text(json.to_string()));
                }
                Some(Ok(Message::Close(_))) | None => return Ok(()),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
            },
            out = inbox.recv() => match out {
                Ok(m) => sink.send(m).await?,
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            },
        }
    }
}
