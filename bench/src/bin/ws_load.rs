//! ws_load: the WebSocket load generator of `compare`'s ws scenarios, one peer-neutral client
//! for every server: tungstenite (the ecosystem's WebSocket, not ours) over Moria's fibers,
//! one fiber per connection, unmasked by nothing but what RFC 6455 asks of a client.
//!
//! - `ws_load echo --url ws://HOST:PORT/ --conns N --seconds S [--size B]`: N connections each
//!   send a text message of B bytes and wait for it to come back, again and again; prints round
//!   trips per second and their latency.
//! - `ws_load broadcast --url ws://HOST:PORT/ws/ROOM --subscribers N --seconds S`: N members
//!   join ROOM and read; one more member publishes, keeping at most `--window` of its own
//!   messages unreturned; prints the messages delivered to members per second (one message
//!   reaching 10,000 members counts 10,000).
//!
//! Every connection is open (and the room joined) before the clock starts. The last line of
//! output is one JSON object (`messages`, `per_sec`, `p50_ms`, `p99_ms`, `errors`), which
//! `compare` reads.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use moria_runtime::net::TcpStream;
use moria_runtime::sync::{Event, Reset, WaitGroup};
use moria_runtime::{spawn, Runtime};
use tungstenite::{Message, WebSocket};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "WebSocket load generator: echo round trips and broadcast fan-out")]
struct Args {
    #[command(subcommand)]
    mode: Mode,
    /// Worker threads of the client's runtime.
    #[arg(long, global = true, default_value_t = 1)]
    workers: usize,
}

#[derive(Subcommand)]
enum Mode {
    /// Round trips: each connection sends a message and waits for its echo.
    Echo {
        /// The echo endpoint.
        #[arg(long)]
        url: String,
        /// Connections.
        #[arg(long, default_value_t = 100)]
        conns: usize,
        /// Measured seconds.
        #[arg(long, default_value_t = 5)]
        seconds: u64,
        /// Bytes per message.
        #[arg(long, default_value_t = 32)]
        size: usize,
    },
    /// Fan-out: one publisher, N members of the room reading.
    Broadcast {
        /// The room's endpoint.
        #[arg(long)]
        url: String,
        /// Members reading.
        #[arg(long, default_value_t = 1000)]
        subscribers: usize,
        /// Measured seconds.
        #[arg(long, default_value_t = 5)]
        seconds: u64,
        /// The publisher's own messages that may be on their way back at once.
        #[arg(long, default_value_t = 4)]
        window: u64,
    },
}

/// What a run measured (printed as the last line, JSON).
#[derive(serde::Serialize)]
struct Report {
    messages: u64,
    per_sec: f64,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    errors: u64,
}

/// How long a connection waits for any one answer before it counts as an error.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a broadcast member's handshake, and the publisher's wait for its own message,
/// may take: 10,000 handshakes queue at a one-worker server (20 to 30 s at a load average of
/// 20 here), and one message to 10,000 members took over 10 s there.
const JOIN_TIMEOUT: Duration = Duration::from_secs(60);

/// Every bench message carries this text, so a server's own notices (a chat's welcome) are
/// not counted, and a chat that wraps what a member sent (`{"name":…,"text":"#bench#…"}`)
/// still is.
const MARK: &str = "#bench#";

type Socket = WebSocket<TcpStream>;

/// Opens a WebSocket to `url` over a fiber-blocking socket, waiting up to `timeout` for each
/// answer (the handshake's too).
fn connect(url: &str, timeout: Duration) -> Result<Socket, String> {
    let rest = url
        .strip_prefix("ws://")
        .ok_or_else(|| format!("{url}: only ws:// URLs"))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let tcp = TcpStream::connect(authority).map_err(|e| format!("connect {authority}: {e}"))?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let (ws, _) = tungstenite::client::client(url, tcp).map_err(|e| format!("{url}: {e}"))?;
    Ok(ws)
}

/// Reads until a bench message arrives (answering pings on the way).
fn read_marked(ws: &mut Socket) -> Result<(), String> {
    loop {
        match ws.read().map_err(|e| e.to_string())? {
            Message::Text(t) if t.contains(MARK) => return Ok(()),
            Message::Close(_) => return Err("closed by the server".into()),
            _ => {}
        }
    }
}

/// The body of every bench message: the mark, then filler, `size` bytes in all (at least the
/// mark).
fn payload(size: usize) -> String {
    let mut s = String::with_capacity(size.max(MARK.len()));
    s.push_str(MARK);
    s.extend(std::iter::repeat_n('m', size.saturating_sub(MARK.len())));
    s
}

fn echo(url: &str, conns: usize, seconds: u64, size: usize) -> Result<Report, String> {
    let ready = Arc::new(WaitGroup::new());
    ready.add(conns);
    let start = Arc::new(Event::new(Reset::Manual));
    let text = payload(size);
    let fibers: Vec<_> = (0..conns)
        .map(|_| {
            let (url, ready, start, text) =
                (url.to_string(), ready.clone(), start.clone(), text.clone());
            spawn(move || -> Result<Vec<u32>, String> {
                let opened = connect(&url, ANSWER_TIMEOUT);
                ready.done();
                let mut ws = opened?;
                start.wait();
                let stop = Instant::now() + Duration::from_secs(seconds);
                let mut micros = Vec::new();
                while Instant::now() < stop {
                    let t = Instant::now();
                    ws.send(Message::text(text.as_str()))
                        .map_err(|e| e.to_string())?;
                    read_marked(&mut ws)?;
                    micros.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
                }
                let _ = ws.close(None);
                let _ = ws.flush();
                Ok(micros)
            })
        })
        .collect();
    ready.wait();
    let began = Instant::now();
    start.set();
    let mut all = Vec::new();
    let mut errors = 0;
    for f in fibers {
        match f.join().map_err(|e| e.to_string())? {
            Ok(m) => all.extend(m),
            Err(e) => {
                if errors == 0 {
                    eprintln!("ws_load: {e}");
                }
                errors += 1;
            }
        }
    }
    let secs = began.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |p: f64| {
        (!all.is_empty()).then(|| all[((all.len() - 1) as f64 * p) as usize] as f64 / 1000.0)
    };
    Ok(Report {
        messages: all.len() as u64,
        per_sec: all.len() as f64 / secs,
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        errors,
    })
}

fn broadcast(url: &str, subscribers: usize, seconds: u64, window: u64) -> Result<Report, String> {
    let ready = Arc::new(WaitGroup::new());
    ready.add(subscribers);
    let delivered = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    for _ in 0..subscribers {
        let (url, ready, delivered, failed) = (
            url.to_string(),
            ready.clone(),
            delivered.clone(),
            failed.clone(),
        );
        // Members read until the process exits; a failure is counted, never waited for.
        spawn(move || {
            let opened = connect(&url, JOIN_TIMEOUT);
            ready.done();
            // A member waits for its first message as long as the other members take to
            // join (10,000 connects can take longer than `ANSWER_TIMEOUT`), so it reads
            // without a timeout: the publisher's own reads bound the run.
            let opened = opened.and_then(|ws| {
                ws.get_ref()
                    .set_read_timeout(None)
                    .map_err(|e| e.to_string())
                    .map(|()| ws)
            });
            let mut ws = match opened {
                Ok(ws) => ws,
                Err(e) => {
                    if failed.fetch_add(1, Ordering::Relaxed) == 0 {
                        eprintln!("ws_load: {e}");
                    }
                    return;
                }
            };
            while read_marked(&mut ws).is_ok() {
                delivered.fetch_add(1, Ordering::Relaxed);
            }
            failed.fetch_add(1, Ordering::Relaxed);
        });
    }
    ready.wait();
    let mut publisher = connect(url, JOIN_TIMEOUT)?;
    let text = payload(32);
    let (mut sent, mut back) = (0u64, 0u64);
    let began = Instant::now();
    let before = delivered.load(Ordering::Relaxed);
    let stop = began + Duration::from_secs(seconds);
    while Instant::now() < stop {
        if sent - back < window {
            publisher
                .send(Message::text(text.as_str()))
                .map_err(|e| e.to_string())?;
            sent += 1;
        } else {
            read_marked(&mut publisher)?;
            back += 1;
        }
    }
    let messages = delivered.load(Ordering::Relaxed) - before;
    Ok(Report {
        messages,
        per_sec: messages as f64 / began.elapsed().as_secs_f64(),
        p50_ms: None,
        p99_ms: None,
        errors: failed.load(Ordering::Relaxed),
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    let run = || -> Result<Report, String> {
        let rt = Runtime::builder()
            .workers(args.workers)
            .build()
            .map_err(|e| e.to_string())?;
        match args.mode {
            Mode::Echo {
                url,
                conns,
                seconds,
                size,
            } => rt
                .run(move || echo(&url, conns, seconds, size))
                .map_err(|e| e.to_string())?,
            Mode::Broadcast {
                url,
                subscribers,
                seconds,
                window,
            } => rt
                .run(move || broadcast(&url, subscribers, seconds, window))
                .map_err(|e| e.to_string())?,
        }
    };
    match run() {
        Ok(report) => {
            println!("{}", serde_json::to_string(&report).unwrap_or_default());
            // Broadcast members are still blocked in reads: leave without waiting for them.
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("ws_load: {e}");
            ExitCode::FAILURE
        }
    }
}
