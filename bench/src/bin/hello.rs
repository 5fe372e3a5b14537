//! Plaintext hello server for wrk: `GET /` answers the same bytes as may_minihttp's hello
//! example (`HTTP/1.1 200 Ok`, `Server: M`, `Date`, `Content-Length: 13`, `Hello, world!`).
//! A plain handler on moria-http's public API, with no special fast path.
//!
//! `cargo run --release -p moria-bench --bin hello -- --listen 127.0.0.1:8080 [--workers N]`
//!
//! `--layers` serves the hello through a `Router` with the request-id, access-log and CORS
//! layers (`RUST_LOG=moria_http::route_access=info` turns the access lines on): what those
//! layers cost per request.
//!
//! `--body-bytes N` answers N bytes instead, copied into a fresh `Vec` with spare capacity per
//! response (what a handler that builds its body does), or with `--shared` one `Bytes` shared by
//! every response.

use bytes::Bytes;
use clap::Parser;
use moria_http::layer::{AccessLog, Cors, RequestId};
use moria_http::{HandlerResult, Request, Response, Router, Server};
use moria_runtime::{shutdown, Runtime};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "moria-http plaintext hello server for wrk")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "MORIA_LISTEN")]
    listen: String,
    /// Worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    workers: Option<usize>,
    /// Bind one SO_REUSEPORT listener per worker instead of a single listener.
    #[arg(long)]
    reuse_port: bool,
    /// Answer this many bytes instead of the 13-byte hello (0: the hello).
    #[arg(long, default_value_t = 0)]
    body_bytes: usize,
    /// With --body-bytes: share one `Bytes` between responses instead of a `Vec` each.
    #[arg(long)]
    shared: bool,
    /// Record no request metrics (the baseline of compare's metrics rows).
    #[arg(long)]
    no_metrics: bool,
    /// Serve through a router with the request-id, access-log and CORS layers.
    #[arg(long)]
    layers: bool,
    /// How long an answered connection waits in its fiber before it parks, in milliseconds
    /// (default: moria-http's `DEFAULT_PARK_AFTER`).
    #[arg(long, env = "MORIA_PARK_AFTER_MS")]
    park_after_ms: Option<u64>,
}

fn hello(_req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.reason("Ok").body("Hello, world!");
    Ok(())
}

/// The handler for `--body-bytes`: a fresh copy per response, or a shared reference.
fn sized(
    len: usize,
    shared: bool,
) -> impl Fn(&mut Request<'_>, &mut Response) -> HandlerResult + Send + Sync + 'static {
    let body = Bytes::from(vec![b'x'; len]);
    move |_req, res| {
        match shared {
            true => res.reason("Ok").body(body.clone()),
            false => {
                // Spare capacity, as a body built by pushes or `format!` has.
                let mut fresh = Vec::with_capacity(2 * len);
                fresh.extend_from_slice(&body);
                res.reason("Ok").body(fresh)
            }
        };
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args = Args::parse();
    let mut rt = Runtime::builder();
    if let Some(n) = args.workers {
        rt = rt.workers(n);
    }
    let rt = rt.build()?;
    shutdown::listen_for_signals()?;
    let per_address = if args.reuse_port {
        rt.config().workers
    } else {
        1
    };
    let mut builder = Server::builder()
        .listen(args.listen)
        .server_header(Some("M"))
        .listeners_per_address(per_address)
        .metrics(!args.no_metrics)
        .shutdown_token(shutdown::global().clone());
    if let Some(ms) = args.park_after_ms {
        builder = builder.park_after(std::time::Duration::from_millis(ms));
    }
    let server = match args.body_bytes {
        0 if args.layers => builder.start(
            Router::new()
                .get("/", hello)
                .layer(RequestId::new())
                .layer(AccessLog)
                .layer(Cors::new().allow_any_origin()),
        )?,
        0 => builder.start(hello)?,
        n => builder.start(sized(n, args.shared))?,
    };
    eprintln!(
        "hello: listening on http://{} ({})",
        server.local_addr(),
        rt.config()
    );
    server.wait();
    Ok(())
}
