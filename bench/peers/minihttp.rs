//! Reference peer for the hello and compare benches: may_minihttp 0.1.11's hello example (same
//! bytes) on every path, except TFB's `/plaintext` and `/json`, answered as may_minihttp's TFB
//! entry does (`Hello, World!` as text/plain; `{"message":"Hello, World!"}` serialised per
//! request). Its TFB database tests need an unpublished PostgreSQL driver and are not built.
//! The one bench file allowed to use `may` directly.
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

#[derive(serde::Serialize)]
struct Message {
    message: &'static str,
}

impl HttpService for HelloWorld {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        match req.path() {
            "/plaintext" => {
                rsp.header("Content-Type: text/plain").body("Hello, World!");
            }
            "/json" => {
                rsp.header("Content-Type: application/json");
                let msg = Message {
                    message: "Hello, World!",
                };
                serde_json::to_writer(crate::BodyWriter(rsp.body_mut()), &msg)?;
            }
            _ => rsp.body("Hello, world!"),
        }
        Ok(())
    }
}

/// `io::Write` into the response buffer.
struct BodyWriter<'a>(&'a mut bytes::BytesMut);

impl io::Write for BodyWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
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
