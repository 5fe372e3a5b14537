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
#[path = "../fuzz_h1/harness.rs"]
mod harness;
mod mutate;
mod oracle;
#[path = "../fuzz_h1/rng.rs"]
mod rng;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::fuzzing::h2_connection;

use harness::{save, CURRENT};
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

/// Runs one input; a panic or a broken rule is the error.
fn run(input: &[u8]) -> Result<Ending, String> {
    let opened = oracle::headers_frames(input);
    harness::caught(|| oracle::check(&h2_connection(input, STALL), opened))
}

fn main() {
    let args = Args::parse();
    harness::record_panics();
    let seeds = corpus::seeds();
    if let Some(index) = args.replay {
        let input = case(&seeds, args.seed, index);
        println!("input ({} bytes): {}", input.len(), input.escape_ascii());
        let outcome = run(&input);
        println!("{outcome:?}");
        std::process::exit(i32::from(outcome.is_err()));
    }
    let (hang_seeds, seed, out) = (seeds.clone(), args.seed, args.out.clone());
    harness::watchdog(Duration::from_secs(args.hang_secs), move |index, took| {
        let input = case(&hang_seeds, seed, index);
        let file = save(&out, &format!("hang-{seed:x}-{index}.bin"), &input);
        eprintln!(
            "FINDING: execution {index} ran for {took:?}; input in {file}; replay with \
             --seed {seed} --replay {index}"
        );
    });
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
