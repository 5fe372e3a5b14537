//! Runtime micro-benchmarks: spawn+join, yield, channel ping-pong, offload round trip (alone
//! and from 64 fibers at once), and resident memory per idle fiber holding a socket. Prints a
//! table of medians.
//!
//! `cargo run --release -p moria-bench --bin runtime -- [--runs 5]`

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_runtime::net::{TcpListener, TcpStream};
use moria_runtime::sync::{channel, WaitGroup};
use moria_runtime::{blocking, spawn, yield_now, Runtime};

#[derive(Parser)]
struct Args {
    /// Repetitions of each measurement (the median is printed).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Idle fibers for the memory measurement (half servers, half clients).
    #[arg(long, default_value_t = 10_000)]
    idle_fibers: usize,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `f` (which returns nanoseconds per operation) `runs` times inside a fiber.
fn measure(runs: usize, f: impl Fn() -> f64 + Send + Sync + 'static) -> f64 {
    let f = Arc::new(f);
    median(
        (0..runs)
            .map(|_| {
                let f = f.clone();
                spawn(move || f()).join().expect("bench fiber")
            })
            .collect(),
    )
}

fn per_op(start: Instant, ops: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / ops as f64
}

fn spawn_join_pooled() -> f64 {
    const N: usize = 100_000;
    let t = Instant::now();
    for i in 0..N {
        spawn(move || i).join().expect("join");
    }
    per_op(t, N)
}

fn spawn_join_beyond_pool() -> f64 {
    const N: usize = 5_000; // far beyond the default pool of 256 stacks
    let t = Instant::now();
    let hs: Vec<_> = (0..N).map(|i| spawn(move || i)).collect();
    for h in hs {
        h.join().expect("join");
    }
    per_op(t, N)
}

fn yield_loop() -> f64 {
    const N: usize = 1_000_000;
    let t = Instant::now();
    for _ in 0..N {
        yield_now();
    }
    per_op(t, N)
}

fn ping_pong(peer_is_thread: bool) -> f64 {
    const N: usize = 50_000;
    let (to_peer, peer_rx) = channel::<usize>();
    let (to_me, my_rx) = channel::<usize>();
    let echo = move || {
        for v in peer_rx.iter() {
            if to_me.send(v).is_err() {
                return;
            }
        }
    };
    let thread = if peer_is_thread {
        Some(std::thread::spawn(echo))
    } else {
        spawn(echo);
        None
    };
    let t = Instant::now();
    for i in 0..N {
        to_peer.send(i).expect("send");
        my_rx.recv().expect("recv");
    }
    let ns = per_op(t, N);
    drop(to_peer);
    if let Some(th) = thread {
        th.join().expect("echo thread");
    }
    ns
}

fn blocking_round_trip() -> f64 {
    const N: usize = 20_000;
    let t = Instant::now();
    for i in 0..N {
        blocking(move || i).expect("blocking");
    }
    per_op(t, N)
}

/// `blocking()` calls from this many fibers at once: the pool's lock under contention.
const CONTENDING_FIBERS: usize = 64;

fn blocking_contended() -> f64 {
    const PER_FIBER: usize = 2_000;
    let t = Instant::now();
    let fibers: Vec<_> = (0..CONTENDING_FIBERS)
        .map(|_| {
            spawn(|| {
                for i in 0..PER_FIBER {
                    blocking(move || i).expect("blocking");
                }
            })
        })
        .collect();
    for f in fibers {
        f.join().expect("join");
    }
    per_op(t, CONTENDING_FIBERS * PER_FIBER)
}

/// Uses about 96 KiB of the fiber's stack, touching every page of it.
#[inline(never)]
fn deep(levels: u32) -> u64 {
    let mut frame = [0u8; 4096];
    std::hint::black_box(&mut frame);
    if levels == 0 {
        u64::from(frame[7])
    } else {
        deep(levels - 1) + u64::from(frame[9])
    }
}

/// Resident KiB the stack pool holds after `pool` fibers, alive at once, each went ~96 KiB
/// deep and ended; then after 32 × `pool` short fibers more (a stack goes back to the kernel
/// below the kept part when a fiber ending on it is one the trimming looks at).
fn deep_stacks(pool: usize) -> (f64, f64) {
    let before = rss_bytes();
    let started = Arc::new(WaitGroup::new());
    started.add(pool);
    let release = Arc::new(moria_runtime::sync::Event::new(
        moria_runtime::sync::Reset::Manual,
    ));
    let fibers: Vec<_> = (0..pool)
        .map(|_| {
            let (started, release) = (Arc::clone(&started), Arc::clone(&release));
            spawn(move || {
                let v = deep(23);
                started.done();
                release.wait();
                v
            })
        })
        .collect();
    started.wait();
    release.set();
    for f in fibers {
        f.join().expect("deep fiber");
    }
    let deep_kib = rss_bytes().saturating_sub(before) as f64 / 1024.0;
    for _ in 0..32 * pool {
        spawn(|| std::hint::black_box(1))
            .join()
            .expect("short fiber");
    }
    let after_kib = rss_bytes().saturating_sub(before) as f64 / 1024.0;
    (deep_kib, after_kib)
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("statm rss");
    pages * 4096
}

/// Resident bytes per idle fiber: half accept-side fibers, half client fibers, each parked in
/// `read` on its own socket.
fn rss_per_idle_fiber(fibers: usize) -> f64 {
    let pairs = fibers / 2;
    let mut listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let ready = Arc::new(WaitGroup::new());
    ready.add(fibers);
    let release = Arc::new(WaitGroup::new());
    release.add(1);
    let before = rss_bytes();
    let r = ready.clone();
    let acceptor = spawn(move || {
        let mut conns = Vec::with_capacity(pairs);
        for _ in 0..pairs {
            let (mut c, _) = listener.accept().expect("accept");
            let r = r.clone();
            conns.push(spawn(move || {
                r.done();
                let mut b = [0u8; 1];
                let _ = c.read(&mut b);
            }));
        }
        conns
    });
    let clients: Vec<_> = (0..pairs)
        .map(|_| {
            let (r, release) = (ready.clone(), release.clone());
            spawn(move || {
                let s = TcpStream::connect(addr).expect("connect");
                r.done();
                release.wait();
                drop(s); // the server fiber reads EOF and ends
            })
        })
        .collect();
    ready.wait();
    let servers = acceptor.join().expect("acceptor");
    moria_runtime::sleep(Duration::from_millis(200)); // let the kernel settle the accounting
    let after = rss_bytes();
    release.done();
    for c in clients {
        c.join().expect("client");
    }
    for s in servers {
        s.join().expect("server");
    }
    (after.saturating_sub(before)) as f64 / fibers as f64
}

fn main() {
    let args = Args::parse();
    let rt = Runtime::builder()
        .planned_fibers(args.idle_fibers + 1000)
        .build()
        .expect("runtime");
    let runs = args.runs;
    println!(
        "moria runtime bench: {} workers, {} KiB stacks, pool {}, median of {runs} runs",
        rt.config().workers,
        rt.config().stack_size / 1024,
        rt.config().stack_pool
    );
    let rows: Vec<(&str, f64, &str, &str)> = vec![
        (
            "spawn+join, pooled (from a fiber)",
            measure(runs, spawn_join_pooled),
            "ns",
            "<= 1000",
        ),
        (
            "spawn+join, 5000 live (beyond pool)",
            measure(runs, spawn_join_beyond_pool),
            "ns",
            "",
        ),
        ("yield_now", measure(runs, yield_loop), "ns", "<= 100"),
        (
            "channel ping-pong fiber<->fiber",
            measure(runs, || ping_pong(false)),
            "ns/rt",
            "",
        ),
        (
            "channel ping-pong fiber<->thread",
            measure(runs, || ping_pong(true)),
            "ns/rt",
            "",
        ),
        (
            "blocking() round trip",
            measure(runs, blocking_round_trip),
            "ns",
            "",
        ),
        (
            "blocking(), 64 fibers at once",
            measure(runs, blocking_contended),
            "ns/call",
            "",
        ),
        (
            "resident memory per idle fiber+socket",
            {
                let n = args.idle_fibers;
                median(
                    (0..runs.min(3))
                        .map(|_| spawn(move || rss_per_idle_fiber(n)).join().expect("rss"))
                        .collect(),
                )
            },
            "bytes",
            "<= 16384",
        ),
    ];
    let pool = rt.config().stack_pool;
    let (deep, after) = spawn(move || deep_stacks(pool)).join().expect("stacks");
    let rows = rows.into_iter().chain([
        ("stack memory kept, deep fibers ended", deep, "KiB", ""),
        ("... after 32 x pool short fibers", after, "KiB", ""),
    ]);
    println!(
        "| {:<40} | {:>12} | {:<6} | {:<9} |",
        "measurement", "median", "unit", "target"
    );
    println!("|{:-<42}|{:->14}|{:-<8}|{:-<11}|", "", "", "", "");
    for (name, value, unit, target) in rows {
        println!("| {name:<40} | {value:>12.0} | {unit:<6} | {target:<9} |");
    }
}
