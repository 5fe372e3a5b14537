//! fuzz_h2: a mutation fuzzer for moria-http's HTTP/2 connection, on stable Rust (no coverage
//! feedback): each execution mutates a seed frame sequence (`corpus.rs`, `mutate.rs`), serves
//! it as one connection through the real code (`moria_http::fuzzing::h2_connection`: frame
//! reader, inbound state machine, HPACK decoder, stream fibers, response sender) and checks
//! `oracle.rs`'s rules on what the server wrote: no panic, no endless wait (a watchdog), whole
//! frames, decodable response header blocks.
//!
//! `cargo run --release -p moria-bench --bin fuzz_h2 -- --iterations N [--seed S]`; execution
//! `i` of seed `S` is a pure function of `(S, i)`: `--replay i` reruns it, and every finding's
//! input is saved under `--out`. Exits 1 when anything was found.

mod corpus;
mod mutate;
mod oracle;
#[path = "../fuzz_h1/rng.rs"]
mod rng;

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::fuzzing::h2_connection;

use oracle::Ending;
use rng::Rng;

#[derive(Parser)]
#[command(about = "Mutation fuzzer for the HTTP/2 connection (frames, HPACK, streams)")]
struct Args {
    /// Executions to run.
    #[arg(long, default_value_t = 100_000)]
    iterations: u64,
    /// Seed of the run (execution i of seed S is always the same input).
    #[arg(long, default_value_t = 0x6832)]
    seed: u64,
    /// Rebuild and run only this execution, printing its input and outcome.
    #[arg(long)]
    replay: Option<u64>,
    /// Where the inputs of findings are written.
    #[arg(long, default_value = "target/fuzz_h2")]
    out: PathBuf,
    /// An execution running this long counts as an endless wait.
    #[arg(long, default_value_t = 10)]
    hang_secs: u64,
}

/// Findings whose inputs are written to disk (the count goes on).
const SAVED_FINDINGS: u64 = 20;
/// How long a stream waits for window or body: short, so a stalled stream costs little.
const STALL: Duration = Duration::from_millis(20);

/// Builds execution `index` of `seed`.
fn case(seeds: &[Vec<u8>], seed: u64, index: u64) -> Vec<u8> {
    let mut rng = Rng::for_exec(seed, index);
    let mut input = rng.pick(seeds).clone();
    if !rng.one_in(32) {
        mutate::mutate(&mut rng, &mut input, seeds);
    }
    input
}

/// The message of the last panic, recorded by the hook instead of printed.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);
/// The execution in progress, plus one (0 before the first).
static CURRENT: AtomicU64 = AtomicU64::new(0);

/// Runs one input; a panic or a broken rule is the error.
fn run(input: &[u8]) -> Result<Ending, String> {
    let opened = oracle::headers_frames(input);
    match panic::catch_unwind(AssertUnwindSafe(|| h2_connection(input, STALL))) {
        Ok(run) => oracle::check(&run, opened),
        Err(_) => {
            let msg = LAST_PANIC.lock().ok().and_then(|mut m| m.take());
            Err(format!("panic: {}", msg.unwrap_or_default()))
        }
    }
}

fn save(out: &Path, name: &str, input: &[u8]) -> String {
    let path = out.join(name);
    match std::fs::create_dir_all(out).and_then(|()| std::fs::write(&path, input)) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e})"),
    }
}

/// Exits the process when one execution runs longer than `limit`, saving its input.
fn watchdog(seeds: Vec<Vec<u8>>, seed: u64, limit: Duration, out: PathBuf) {
    std::thread::spawn(move || {
        let mut last = 0;
        let mut since = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = CURRENT.load(Ordering::Relaxed);
            if now != last {
                last = now;
                since = Instant::now();
            } else if now > 0 && since.elapsed() >= limit {
                let index = now - 1;
                let input = case(&seeds, seed, index);
                let file = save(&out, &format!("hang-{seed:x}-{index}.bin"), &input);
                eprintln!(
                    "FINDING: execution {index} ran for {:?}; input in {file}; replay with \
                     --seed {seed} --replay {index}",
                    since.elapsed()
                );
                std::process::exit(3);
            }
        }
    });
}

fn main() {
    let args = Args::parse();
    panic::set_hook(Box::new(|info| {
        if let Ok(mut m) = LAST_PANIC.lock() {
            *m = Some(info.to_string());
        }
    }));
    let seeds = corpus::seeds();
    if let Some(index) = args.replay {
        let input = case(&seeds, args.seed, index);
        println!("input ({} bytes): {}", input.len(), input.escape_ascii());
        let outcome = run(&input);
        println!("{outcome:?}");
        std::process::exit(i32::from(outcome.is_err()));
    }
    watchdog(
        seeds.clone(),
        args.seed,
        Duration::from_secs(args.hang_secs),
        args.out.clone(),
    );
    let mut endings: Vec<(Ending, u64)> = Vec::new();
    let mut findings = 0u64;
    let start = Instant::now();
    for index in 0..args.iterations {
        CURRENT.store(index + 1, Ordering::Relaxed);
        let input = case(&seeds, args.seed, index);
        match run(&input) {
            Ok(ending) => match endings.iter_mut().find(|(e, _)| *e == ending) {
                Some((_, n)) => *n += 1,
                None => endings.push((ending, 1)),
            },
            Err(what) => {
                findings += 1;
                let file = match findings <= SAVED_FINDINGS {
                    true => save(
                        &args.out,
                        &format!("finding-{:x}-{index}.bin", args.seed),
                        &input,
                    ),
                    false => "(not saved)".into(),
                };
                eprintln!("FINDING at execution {index} (input in {file}): {what}");
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    endings.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    println!("| connection ended | executions |");
    println!("|---|---:|");
    for (ending, n) in endings {
        println!("| {ending:?} | {n} |");
    }
    println!("| findings (panic, endless wait, broken rule) | {findings} |");
    println!(
        "fuzz_h2: {} executions in {secs:.1} s = {:.0} exec/s (seed {}); {findings} findings",
        args.iterations,
        args.iterations as f64 / secs,
        args.seed,
    );
    if findings > 0 {
        std::process::exit(1);
    }
}
