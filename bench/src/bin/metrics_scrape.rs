//! The cost of a scrape: a server with 200 route patterns (each requested once, so every
//! duration histogram has a series) and 10,000 open keep-alive connections, then `/metrics`
//! scraped over HTTP and the exposition gathered in-process, timed and with its allocations
//! counted (a counting global allocator). Prints the medians and one scrape's size.
//!
//! `cargo run --release -p moria-bench --bin metrics_scrape -- [--conns 10000] [--routes 200]`

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::{metrics, HandlerResult, Request, Response, Router, Server};
use moria_runtime::metrics::{gather, Format};
use moria_runtime::Runtime;

/// The system allocator, counting what is asked of it.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        ALLOC_BYTES.fetch_add(l.size() as u64, Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(l) }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` above, that is from the system allocator.
        unsafe { System.dealloc(p, l) }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        ALLOC_BYTES.fetch_add(new as u64, Relaxed);
        // SAFETY: as for `dealloc`.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Parser)]
struct Args {
    /// Keep-alive connections held open during the scrapes.
    #[arg(long, default_value_t = 10_000)]
    conns: usize,
    /// Route patterns (`/r{i}/:id`), each requested once.
    #[arg(long, default_value_t = 200)]
    routes: usize,
    /// Scrapes of each kind (the median is printed).
    #[arg(long, default_value_t = 31)]
    runs: usize,
    /// Internal: hold this many connections to ADDR open until stdin closes (the idle clients
    /// live in a child process, so the two sides' descriptors do not share one limit).
    #[arg(long, num_args = 2, value_names = ["N", "ADDR"], hide = true)]
    hold: Option<Vec<String>>,
}

/// The child's job: `n` connections to `addr`, held until stdin closes.
fn hold(n: usize, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    moria_runtime::startup::raise_nofile_limit()?;
    let conns: Vec<TcpStream> = (0..n)
        .map(|_| TcpStream::connect(addr))
        .collect::<Result<_, _>>()?;
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest)?;
    drop(conns);
    Ok(())
}

fn ok(_: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body("ok");
    Ok(())
}

/// Sends `GET path` on `s` and reads the whole response (Content-Length framing).
fn get(s: &mut TcpStream, path: &str) -> usize {
    // One write: `write!` would send the pieces apart, and Nagle would hold the last.
    let head = format!("GET {path} HTTP/1.1\r\nHost: b\r\n\r\n");
    s.write_all(head.as_bytes()).expect("write");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let n = s.read(&mut chunk).expect("read");
        assert!(n > 0, "closed");
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("content-length");
        if buf.len() >= end + 4 + len {
            return len;
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if let Some(h) = &args.hold {
        return hold(h[0].parse()?, &h[1]);
    }
    moria_runtime::startup::raise_nofile_limit()?;
    let _rt = Runtime::builder().build()?;
    let mut router = Router::new().get("/metrics", metrics::handler());
    for i in 0..args.routes {
        router = router.get(&format!("/r{i}/:id"), ok);
    }
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .max_connections(args.conns + 16)
        .start(router)?;
    let addr = server.local_addr();
    let mut scraper = TcpStream::connect(addr)?;
    scraper.set_nodelay(true)?;
    for i in 0..args.routes {
        get(&mut scraper, &format!("/r{i}/1"));
    }
    let mut idle = std::process::Command::new(std::env::current_exe()?)
        .args(["--hold", &args.conns.to_string(), &addr.to_string()])
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.connections() < args.conns + 1 {
        if Instant::now() > deadline {
            return Err(format!("only {} connections open", server.connections()).into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }

    let mut http = Vec::new();
    let mut size = 0;
    for _ in 0..args.runs {
        let t = Instant::now();
        size = get(&mut scraper, "/metrics");
        http.push(t.elapsed());
    }
    let mut local = Vec::new();
    let (mut allocs, mut bytes) = (0, 0);
    for _ in 0..args.runs {
        let (a0, b0) = (ALLOCS.load(Relaxed), ALLOC_BYTES.load(Relaxed));
        let t = Instant::now();
        let text = gather(Format::Prometheus);
        local.push(t.elapsed());
        (allocs, bytes) = (ALLOCS.load(Relaxed) - a0, ALLOC_BYTES.load(Relaxed) - b0);
        drop(text);
    }
    let open = server.connections();
    println!(
        "| scrape, {} open connections, {} route patterns | median of {} |",
        open, args.routes, args.runs
    );
    println!("|---|---|");
    println!(
        "| GET /metrics over HTTP (keep-alive) | {:.2} ms |",
        median(http).as_secs_f64() * 1e3
    );
    println!(
        "| gather() in-process | {:.2} ms |",
        median(local).as_secs_f64() * 1e3
    );
    println!("| scrape body | {:.0} KiB |", size as f64 / 1024.0);
    println!(
        "| allocations per gather() | {allocs} ({:.0} KiB requested) |",
        bytes as f64 / 1024.0
    );
    drop(idle.stdin.take());
    idle.wait()?;
    Ok(())
}
