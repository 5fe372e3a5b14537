//! Peer for compare's hello rows: hyper 1 answering every request with the 13-byte hello, the
//! same length of bytes as `hello` and may_minihttp (`HTTP/1.1 200 OK`, `server: M`,
//! `content-length: 13`, `date`, `Hello, world!`; hyper's own spelling: lowercase names, its
//! canonical reason, `date` last). Built the way the TechEmpower peer is: one current-thread
//! tokio runtime per worker thread, all accepting from one listening socket, `TCP_NODELAY` on
//! (as Moria sets it). Never part of the library.
//!
//! `cargo run --release -p moria-bench --bin peer_hyper_hello -- --listen 127.0.0.1:8083 [--workers N]`

use std::convert::Infallible;
use std::net::TcpListener as StdListener;

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::header::{HeaderValue, SERVER};
use hyper::service::service_fn;
use hyper::Response;
use hyper_util::rt::TokioIo;

/// Command-line flags.
#[derive(Parser)]
#[command(about = "hyper hello peer for wrk")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8083")]
    listen: String,
    /// Worker threads (default: one per CPU).
    #[arg(long)]
    workers: Option<usize>,
}

const HELLO: &[u8] = b"Hello, world!";

/// One worker: a current-thread runtime serving the connections it accepts from `listener`.
fn worker(listener: StdListener) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::task::spawn_local(async move {
                let service = service_fn(|_req| async {
                    let mut r = Response::new(Full::new(Bytes::from_static(HELLO)));
                    r.headers_mut()
                        .insert(SERVER, HeaderValue::from_static("M"));
                    Ok::<_, Infallible>(r)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .pipeline_flush(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let listener = StdListener::bind(&args.listen)?;
    listener.set_nonblocking(true)?;
    eprintln!(
        "peer_hyper_hello: listening on http://{} ({workers} workers)",
        listener.local_addr()?
    );
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            listener
                .try_clone()
                .map(|l| std::thread::spawn(move || worker(l)))
        })
        .collect::<Result<_, _>>()?;
    for t in threads {
        t.join().map_err(|_| "worker panicked")??;
    }
    Ok(())
}
