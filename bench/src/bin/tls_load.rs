//! tls_load: the load generator of `compare`'s TLS handshake rows. Every request goes on a new
//! TLS connection (`Connection: close`, as siege does without keep-alive), so each one costs
//! the server a handshake: a full one (`--full`, the default: no session offered), or one
//! resumed with the ticket the connection before received (`--resume`; TLS 1.3 tickets are
//! used once, as browsers do). Plain OpenSSL on blocking threads, one per connection, no
//! certificate verification (the bench certificate is self-signed; the server still signs
//! every full handshake).
//!
//! `tls_load --url https://127.0.0.1:PORT/PATH --conns N --seconds S [--resume]` prints one
//! JSON line (`messages`, `per_sec`, `p50_ms`, `p99_ms`, `errors`, `resumed`), which `compare`
//! reads. A response other than 200, a failed connection, or (with `--resume`) a handshake
//! that did not resume after a connection's first, counts as an error.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;
use openssl::ssl::{Ssl, SslContext, SslMethod, SslSession, SslVerifyMode};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "TLS handshake load: a new HTTPS connection per request, full or resumed")]
struct Args {
    /// `https://IP:PORT/PATH`.
    #[arg(long)]
    url: String,
    /// Connections at once (one thread each).
    #[arg(long, default_value_t = 64)]
    conns: usize,
    /// Measured seconds.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Offer the session ticket of the connection before (resumed handshakes).
    #[arg(long)]
    resume: bool,
}

/// What a run measured (printed as the last line, JSON).
#[derive(serde::Serialize)]
struct Report {
    messages: u64,
    per_sec: f64,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    errors: u64,
    resumed: u64,
}

/// What one connection thread did.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    errors: u64,
    resumed: u64,
}

/// The address and the request path of an `https://IP:PORT/PATH` URL.
fn target(url: &str) -> Result<(SocketAddr, String), String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("{url}: not an https:// URL"))?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let addr = host
        .parse()
        .map_err(|e| format!("{host}: not IP:PORT ({e})"))?;
    Ok((addr, if path.is_empty() { "/" } else { path }.to_owned()))
}

/// One request on a new connection: whether the handshake resumed, and the session to offer
/// next (the newest ticket's).
fn exchange(
    ctx: &SslContext,
    addr: SocketAddr,
    request: &[u8],
    offer: Option<&SslSession>,
) -> io::Result<(bool, Option<SslSession>)> {
    let tcp = TcpStream::connect(addr)?;
    tcp.set_nodelay(true)?;
    tcp.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut ssl = Ssl::new(ctx).map_err(io::Error::other)?;
    ssl.set_hostname("localhost").map_err(io::Error::other)?;
    if let Some(session) = offer {
        // SAFETY: the session came from a connection of this same context.
        unsafe { ssl.set_session(session) }.map_err(io::Error::other)?;
    }
    let mut tls = ssl.connect(tcp).map_err(io::Error::other)?;
    tls.write_all(request)?;
    let mut response = Vec::with_capacity(4096);
    let mut buf = [0u8; 16 * 1024];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
            // A close without close_notify after a whole response is still a response.
            Err(_) if complete(&response) => break,
            Err(e) => return Err(e),
        }
    }
    if !response.starts_with(b"HTTP/1.1 200") || !complete(&response) {
        return Err(io::Error::other("not a whole 200 response"));
    }
    // Our close_notify: OpenSSL marks the session of a connection freed without one as not
    // resumable (a peer that already closed makes this fail, harmlessly).
    let _ = tls.shutdown();
    // The newest ticket's session (each NewSessionTicket replaces the connection's session).
    let session = tls.ssl().session().map(|s| s.to_owned());
    Ok((tls.ssl().session_reused(), session))
}

/// Whether `response` holds a head and as many body bytes as its Content-Length says.
fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    length.is_some_and(|n| response.len() - end - 4 >= n)
}

/// One connection's loop until `deadline`.
fn connection(
    ctx: &SslContext,
    addr: SocketAddr,
    request: &[u8],
    resume: bool,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut session: Option<SslSession> = None;
    while Instant::now() < deadline {
        let started = Instant::now();
        match exchange(ctx, addr, request, session.as_ref()) {
            Ok((reused, next)) => {
                if resume && session.is_some() && !reused {
                    tally.errors += 1;
                } else {
                    let us = started.elapsed().as_micros();
                    tally
                        .latencies_us
                        .push(u32::try_from(us).unwrap_or(u32::MAX));
                }
                tally.resumed += u64::from(reused);
                if resume {
                    session = next;
                }
            }
            Err(_) => {
                tally.errors += 1;
                session = None;
            }
        }
    }
    tally
}

fn run(args: Args) -> Result<Report, String> {
    let (addr, path) = target(&args.url)?;
    let mut builder = SslContext::builder(SslMethod::tls_client()).map_err(|e| e.to_string())?;
    builder.set_verify(SslVerifyMode::NONE);
    let ctx = builder.build();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").into_bytes();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.seconds);
    let tallies: Vec<Tally> = thread::scope(|s| {
        let workers: Vec<_> = (0..args.conns.max(1))
            .map(|_| s.spawn(|| connection(&ctx, addr, &request, args.resume, deadline)))
            .collect();
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut latencies: Vec<u32> = tallies
        .iter()
        .flat_map(|t| t.latencies_us.iter().copied())
        .collect();
    latencies.sort_unstable();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1));
        latencies.get(i).map(|&us| f64::from(us) / 1000.0)
    };
    let messages = latencies.len() as u64;
    Ok(Report {
        messages,
        per_sec: messages as f64 / elapsed,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        errors: tallies.iter().map(|t| t.errors).sum(),
        resumed: tallies.iter().map(|t| t.resumed).sum(),
    })
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(report) => {
            println!("{}", serde_json::to_string(&report).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tls_load: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_target() {
        let (addr, path) = target("https://127.0.0.1:8443/file1312").unwrap();
        assert_eq!((addr.port(), path.as_str()), (8443, "/file1312"));
        assert_eq!(target("https://127.0.0.1:1").unwrap().1, "/");
        assert!(target("http://127.0.0.1:1/").is_err());
        assert!(target("https://localhost:1/").is_err());
    }

    #[test]
    fn knows_a_whole_response() {
        assert!(complete(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
        assert!(!complete(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok"));
        assert!(!complete(b"HTTP/1.1 200 OK\r\n"));
    }
}
