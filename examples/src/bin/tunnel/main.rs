//! tunnel: Mordor's tunnel and sslterminator in one. Accepts connections (optionally
//! terminating TLS), connects each to a target (optionally over verified TLS, optionally through
//! an HTTP CONNECT proxy), and copies both directions at once; end of stream one way is passed
//! on as a half-close while the other way keeps flowing. Ctrl-C stops accepting, lets open
//! tunnels wind down, and exits 0.
//!
//! `cargo run -p moria-examples --bin tunnel -- --listen 127.0.0.1:8443 --to example.com:80
//! [--tls-in CERT KEY | --tls-in-self-signed] [--tls-out] [--cacert PEM] [-k] [--proxy URL]`

mod ends;
mod pipe;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use moria_http::client::Client;
use moria_runtime::net::TcpListener;
use moria_runtime::{shutdown, spawn, Deadline};

use ends::{Failure, Inbound, Outbound};

/// Command-line flags (each has a `MORIA_*` environment equivalent).
#[derive(Parser, Debug)]
#[command(about = "Moria TCP/TLS tunnel")]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "MORIA_LISTEN")]
    listen: String,
    /// Where each connection goes: HOST:PORT.
    #[arg(long, env = "MORIA_TO")]
    to: String,
    /// Terminate TLS on accepted connections with this certificate chain and key (PEM files).
    #[arg(long, num_args = 2, value_names = ["CERT", "KEY"], env = "MORIA_TLS_IN",
          value_delimiter = ',', conflicts_with = "tls_in_self_signed")]
    tls_in: Option<Vec<PathBuf>>,
    /// Terminate TLS on accepted connections with a fresh self-signed certificate.
    #[arg(long, env = "MORIA_TLS_IN_SELF_SIGNED")]
    tls_in_self_signed: bool,
    /// Speak TLS to the target, verifying its certificate for HOST.
    #[arg(long, env = "MORIA_TLS_OUT")]
    tls_out: bool,
    /// Also trust the CA certificates in this PEM file (with --tls-out).
    #[arg(long, env = "MORIA_CACERT")]
    cacert: Option<PathBuf>,
    /// Insecure: accept any target certificate (with --tls-out).
    #[arg(short = 'k', long, env = "MORIA_INSECURE")]
    insecure: bool,
    /// Reach the target through this HTTP proxy with CONNECT (`http://[user:pass@]host:port`).
    #[arg(long, env = "MORIA_PROXY")]
    proxy: Option<String>,
    /// Scheduler worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    workers: Option<usize>,
    /// How long shutdown waits for open tunnels.
    #[arg(long, env = "MORIA_DRAIN_SECS", default_value_t = 5)]
    drain_secs: u64,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tunnel: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), Failure> {
    moria_examples::init_logging("info,may=warn")?;
    let runtime = moria_examples::start_runtime(args.workers)?;
    shutdown::listen_for_signals()?;

    let inbound = Inbound {
        tls: ends::acceptor(args.tls_in.as_deref(), args.tls_in_self_signed)?,
    };
    let (host, port) = ends::host_port(&args.to)?;
    let mut client = Client::builder();
    if let Some(proxy) = &args.proxy {
        client = client.https_proxy(proxy);
    }
    let outbound = Outbound {
        host,
        port,
        client: client.build()?,
        tls: match args.tls_out {
            true => Some(ends::connector(args.cacert.as_ref(), args.insecure)?),
            false => None,
        },
    };
    let mut listener = TcpListener::bind(args.listen.as_str())?;
    let scheme = if inbound.tls.is_some() { "tls" } else { "tcp" };
    log::info!(
        "tunnel listening on {scheme}://{} to {} (Ctrl-C to stop)",
        listener.local_addr()?,
        args.to
    );
    let ends = std::sync::Arc::new((inbound, outbound));
    runtime.run(move || -> std::io::Result<()> {
        while let Some((sock, peer)) = listener.accept_until(shutdown::global())? {
            let ends = ends.clone();
            spawn(move || {
                let tunnel = ends
                    .0
                    .open(sock)
                    .and_then(|a| Ok((a, ends.1.open()?)))
                    .and_then(|(a, b)| Ok(pipe::splice(a, b)?));
                match tunnel {
                    Ok(()) => log::debug!("{peer}: closed"),
                    Err(e) => log::warn!("{peer}: {e}"),
                }
            });
        }
        Ok(())
    })??;
    log::info!("shutting down; waiting for open tunnels");
    if let Err(e) = shutdown::drain(Deadline::after(Duration::from_secs(args.drain_secs))) {
        log::warn!("{e}");
    }
    Ok(())
}
