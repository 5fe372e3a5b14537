//! chat: rooms over WebSocket, and the page that uses them, from one server.
//!
//! `GET /` is the page (plain HTML and JavaScript, no build step); `GET /ws/ROOM?name=NAME`
//! upgrades to a WebSocket in ROOM. Every text message a member sends reaches every member of
//! the room, the sender included, as `{"name":NAME,"text":TEXT}`; the server's word to a member
//! alone is `{"notice":TEXT}` (the welcome). A handler per member is a plain loop: read a
//! message, send it to the room.
//!
//! `chat --listen 127.0.0.1:8080 [--workers N] [--max-connections N]`, then open http://127.0.0.1:8080/ in two tabs.

mod rooms;

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use moria_http::ws::{Acceptor, Config, DeflateConfig, Message, Prepared, WebSocket};
use moria_http::{BoxError, Request, Response, Router, Server};
use moria_runtime::shutdown;

use rooms::Rooms;

/// Command-line flags.
#[derive(Parser)]
#[command(about = "Chat rooms over WebSocket, with their page")]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "MORIA_LISTEN", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Scheduler worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    workers: Option<usize>,
    /// Most connections served at once (members and page loads); more clients get 503 with
    /// Retry-After.
    #[arg(long, env = "MORIA_MAX_CONNECTIONS", default_value_t = moria_http::limits::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
}

/// The page, served at `/`.
const PAGE: &str = include_str!("page.html");
/// Longest room or member name, in characters.
const MAX_NAME: usize = 40;
/// Longest message a member may send (bytes); more closes its socket with 1009.
const MAX_MESSAGE: u64 = 16 * 1024;
/// Most messages of one member sent to the room in one batch.
const MAX_BATCH: usize = 16;
/// A member silent this long is pinged; one silent for [`IDLE_TIMEOUT`] is closed.
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// See [`PING_INTERVAL`].
const IDLE_TIMEOUT: Duration = Duration::from_secs(75);

/// A room or member name: 1 to [`MAX_NAME`] characters, none of them a control character.
fn valid_name(s: &str) -> bool {
    let n = s.chars().count();
    (1..=MAX_NAME).contains(&n) && !s.chars().any(char::is_control)
}

/// `GET /ws/:room?name=NAME`: the handshake, then [`member`] on the connection.
fn join(
    rooms: &Arc<Rooms>,
    acceptor: &Acceptor,
    req: &mut Request,
    res: &mut Response,
) -> Result<(), BoxError> {
    let room = req.param("room").unwrap_or_default().to_string();
    let name = req.query_param("name").map(|n| n.trim().to_string());
    let name = match name {
        Some(n) if valid_name(&n) => n,
        _ => {
            res.status(400)
                .content_type("text/plain")
                .body(format!("?name= must be 1 to {MAX_NAME} characters\n"));
            return Ok(());
        }
    };
    if !valid_name(&room) {
        res.status(400)
            .content_type("text/plain")
            .body(format!("a room name is 1 to {MAX_NAME} characters\n"));
        return Ok(());
    }
    let rooms = rooms.clone();
    acceptor.accept(req, res, move |ws| {
        if let Err(e) = member(&rooms, &room, &name, ws) {
            log::debug!("room {room}: {name}: {e}");
        }
    });
    Ok(())
}

/// One member: joins, is welcomed, then each message it sends goes to the room, until it
/// leaves (or breaks the protocol, or the server shuts down: the socket then closes with 1001).
fn member(rooms: &Arc<Rooms>, room: &str, name: &str, ws: WebSocket) -> moria_http::ws::Result<()> {
    let (mut reader, writer) = ws.split()?;
    let (membership, count) = rooms.join(room, writer.clone());
    let welcome = match count {
        1 => format!("you joined #{room}, alone for now"),
        n => format!("you joined #{room} with {} others", n - 1),
    };
    writer.send_text(&serde_json::json!({ "notice": welcome }).to_string())?;
    loop {
        match reader.read()? {
            Message::Text(text) => {
                // Messages that arrived together go out together: one write per member for
                // the whole batch.
                let (mut batch, mut closed) = (vec![said(name, &text)], false);
                while !closed && batch.len() < MAX_BATCH && reader.is_ready() {
                    match reader.read()? {
                        Message::Text(text) => batch.push(said(name, &text)),
                        Message::Close(_) => closed = true,
                        _ => {}
                    }
                }
                membership.broadcast(&Prepared::batch(&batch));
                if closed {
                    return Ok(());
                }
            }
            Message::Close(_) => return Ok(()),
            // Binary messages have no place on the page; pings are answered already.
            _ => {}
        }
    }
}

/// A member's message as the room sees it.
fn said(name: &str, text: &str) -> Prepared {
    Prepared::text(&serde_json::json!({ "name": name, "text": text }).to_string())
}

fn run(args: Args) -> Result<(), BoxError> {
    let rt = moria_examples::start_runtime(args.workers)?;
    let workers = rt.config().workers;
    let rooms = Arc::new(Rooms::default());
    let acceptor = Acceptor::new().config(
        Config::new()
            .max_message(MAX_MESSAGE)
            .ping_interval(PING_INTERVAL)
            .idle_timeout(IDLE_TIMEOUT)
            .deflate(DeflateConfig::default()),
    );
    let router = Router::new()
        .get("/", |_: &mut Request, res: &mut Response| {
            res.content_type("text/html; charset=utf-8").body(PAGE);
            Ok(())
        })
        .get("/ws/:room", move |req: &mut Request, res: &mut Response| {
            join(&rooms, &acceptor, req, res)
        });
    shutdown::listen_for_signals()?;
    let server = Server::builder()
        .listen(args.listen.as_str())
        .max_connections(args.max_connections)
        .shutdown_token(shutdown::global().clone())
        .start(router)?;
    log::info!(
        "chat listening on http://{} ({workers} workers)",
        server.local_addr()
    );
    server.wait();
    Ok(())
}

fn main() {
    moria_examples::serve_main("chat", "info,may=warn", || run(Args::parse()));
}
