//! Reference peer for the hello bench: may_minihttp 0.1.11's hello example (same bytes), with a
//! worker count and listen address. The one bench file allowed to use `may` directly.
//!
//! `cargo run --release -p moria-bench --bin peer_minihttp -- --listen 127.0.0.1:8081 [--workers N]`

use std::io;

use clap::Parser;
use may_minihttp::{HttpServer, HttpService, Request, Response};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "may_minihttp hello peer for wrk")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: String,
    /// Worker threads (default: one per CPU).
    #[arg(long)]
    workers: Option<usize>,
}

#[derive(Clone)]
struct HelloWorld;

impl HttpService for HelloWorld {
    fn call(&mut self, _req: Request, rsp: &mut Response) -> io::Result<()> {
        rsp.body("Hello, world!");
        Ok(())
    }
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    if let Some(n) = args.workers {
        may::config().set_workers(n);
    }
    let server = HttpServer(HelloWorld).start(args.listen.as_str())?;
    eprintln!("peer_minihttp: listening on http://{}", args.listen);
    server
        .join()
        .map_err(|_| io::Error::other("server coroutine panicked"))
}
