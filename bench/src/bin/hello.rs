//! Plaintext hello server for wrk: `GET /` answers the same bytes as may_minihttp's hello
//! example (`HTTP/1.1 200 Ok`, `Server: M`, `Date`, `Content-Length: 13`, `Hello, world!`).
//! A plain handler on moria-http's public API, with no special fast path.
//!
//! `cargo run --release -p moria-bench --bin hello -- --listen 127.0.0.1:8080 [--workers N]`

use clap::Parser;
use moria_http::{HandlerResult, Request, Response, Server};
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
}

fn hello(_req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.reason("Ok").body("Hello, world!");
    Ok(())
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
    let server = Server::builder()
        .listen(args.listen)
        .server_header(Some("M"))
        .listeners_per_address(per_address)
        .shutdown_token(shutdown::global().clone())
        .start(hello)?;
    eprintln!(
        "hello: listening on http://{} ({})",
        server.local_addr(),
        rt.config()
    );
    server.wait();
    Ok(())
}
