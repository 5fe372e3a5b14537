//! fuzz_h1: a mutation fuzzer for moria-http's request-head scanner and parser and
//! moria-streams' chunked decoder, on stable Rust (no coverage feedback, no nightly).
//!
//! `cargo run --release -p moria-bench --bin fuzz_h1 -- --iterations N [--seed S]`
//!
//! Each execution takes a seed input (a valid or hostile request, or a chunked body), mutates it,
//! and checks the rules in `oracle.rs`: no panic, no endless loop (a watchdog thread), the same
//! head in one read and in many, an accepted head re-encodes to an equal head, a chunked body
//! decodes with progress and re-encodes to the same data. Execution `i` of seed `S` is a pure
//! function of `(S, i)`: `--replay i` rebuilds and reruns it, and every finding's input is saved
//! under `--out`. Prints a table of outcomes and a summary line; exits 1 when anything was found.

mod corpus;
mod harness;
mod mutate;
mod oracle;
mod rng;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::fuzzing::{Failure, Framing};
use moria_http::Limits;
use moria_streams::chunked::ChunkedLimits;

use corpus::{Target, CHUNKED, REQUESTS};
use harness::{save, CURRENT};
use oracle::{check_chunked, check_request, BodyOutcome, HeadOutcome, Reads};
use rng::Rng;

#[derive(Parser)]
#[command(about = "Mutation fuzzer for the HTTP/1.1 head parser and the chunked decoder")]
struct Args {
    /// Executions to run.
    #[arg(long, default_value_t = 1_000_000)]
    iterations: u64,
    /// Seed of the run (execution i of seed S is always the same input).
    #[arg(long, default_value_t = 0x6d6f_7269_61)]
    seed: u64,
    /// Rebuild and run only this execution, printing its input and outcome.
    #[arg(long)]
    replay: Option<u64>,
    /// Where the inputs of findings are written.
    #[arg(long, default_value = "target/fuzz_h1")]
    out: PathBuf,
    /// An execution running this long counts as an endless loop.
    #[arg(long, default_value_t = 10)]
    hang_secs: u64,
}

/// Findings whose inputs are written to disk (the count goes on).
const SAVED_FINDINGS: u64 = 20;

/// One execution's input and how it is fed.
struct Case {
    target: Target,
    input: Vec<u8>,
    /// Small limits instead of the defaults, so every limit check is reached often.
    tight: bool,
    /// Bytes per simulated read of the head.
    step: usize,
    reads: Reads,
}

/// Builds execution `index` of `seed`.
fn case(seed: u64, index: u64) -> Case {
    let mut rng = Rng::for_exec(seed, index);
    let target = if rng.one_in(4) {
        Target::Chunked
    } else {
        Target::Request
    };
    let seeds = match target {
        Target::Request => REQUESTS,
        Target::Chunked => CHUNKED,
    };
    let mut input = rng.pick(seeds).to_vec();
    if !rng.one_in(32) {
        let others = if rng.one_in(2) { REQUESTS } else { CHUNKED };
        mutate::mutate(&mut rng, &mut input, others);
    }
    Case {
        target,
        input,
        tight: rng.one_in(4),
        step: 1 + rng.below(64),
        reads: Reads {
            fill: *rng.pick(&[1, 2, 3, 7, 64, 8192]),
            read: *rng.pick(&[1, 5, 64, 4096]),
        },
    }
}

fn limits(tight: bool) -> (Limits, ChunkedLimits) {
    match tight {
        false => (Limits::default(), ChunkedLimits::default()),
        true => (
            Limits {
                max_request_line: 64,
                max_head: 512,
                max_headers: 8,
                max_body: 1024,
                ..Limits::default()
            },
            ChunkedLimits {
                size_line: 16,
                extensions_total: 32,
                trailer_bytes: 64,
                trailer_fields: 3,
            },
        ),
    }
}

/// Counts of every outcome.
#[derive(Default)]
struct Tally {
    accepted: [u64; 3],
    incomplete: u64,
    refused: Vec<(Failure, u64)>,
    bodies_complete: u64,
    bodies_refused: Vec<(&'static str, u64)>,
    findings: u64,
}

impl Tally {
    fn head(&mut self, outcome: &HeadOutcome) {
        match outcome {
            HeadOutcome::Accepted(Framing::Empty) => self.accepted[0] += 1,
            HeadOutcome::Accepted(Framing::Length(_)) => self.accepted[1] += 1,
            HeadOutcome::Accepted(Framing::Chunked) => self.accepted[2] += 1,
            HeadOutcome::Incomplete => self.incomplete += 1,
            HeadOutcome::Rejected(f) => bump(&mut self.refused, *f),
        }
    }

    fn body(&mut self, outcome: BodyOutcome) {
        match outcome {
            BodyOutcome::Complete => self.bodies_complete += 1,
            BodyOutcome::Rejected(label) => bump(&mut self.bodies_refused, label),
        }
    }

    fn print(&self) {
        println!("| outcome | executions |");
        println!("|---|---:|");
        let kinds = ["no body", "Content-Length body", "chunked body"];
        for (kind, n) in kinds.iter().zip(self.accepted) {
            println!("| head accepted, {kind} | {n} |");
        }
        println!(
            "| head incomplete (input ends inside it) | {} |",
            self.incomplete
        );
        let refused = self
            .refused
            .iter()
            .map(|(f, n)| (format!("{f:?} ({f})"), *n));
        print_most_first("head refused", refused.collect());
        println!(
            "| chunked body decoded and re-encoded | {} |",
            self.bodies_complete
        );
        let refused = self.bodies_refused.iter().map(|(l, n)| (l.to_string(), *n));
        print_most_first("chunked body refused", refused.collect());
        println!(
            "| findings (panic, endless loop, broken rule) | {} |",
            self.findings
        );
    }
}

/// Table rows `what: label`, the most frequent first.
fn print_most_first(what: &str, mut counts: Vec<(String, u64)>) {
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    for (label, n) in counts {
        println!("| {what}: {label} | {n} |");
    }
}

fn bump<K: PartialEq>(counts: &mut Vec<(K, u64)>, key: K) {
    match counts.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => counts.push((key, 1)),
    }
}

/// Runs one case: the rules of `oracle.rs`, a chunked body after a head that says so.
fn run(case: &Case, tally: &mut Tally) -> Result<(), String> {
    let (head_limits, chunk_limits) = limits(case.tight);
    match case.target {
        Target::Request => {
            let (outcome, head) = check_request(&case.input, &head_limits, case.step)?;
            tally.head(&outcome);
            if let Some(h) = head.filter(|h| h.framing == Framing::Chunked) {
                let body = &case.input[h.head_len..];
                tally.body(check_chunked(body, chunk_limits, case.reads)?);
            }
        }
        Target::Chunked => tally.body(check_chunked(&case.input, chunk_limits, case.reads)?),
    }
    Ok(())
}

/// Runs `case` and turns a panic into a finding.
fn run_caught(case: &Case, tally: &mut Tally) -> Result<(), String> {
    harness::caught(|| run(case, tally))
}

/// Exits the process when one execution runs longer than `limit`, saving its input.
fn watchdog(seed: u64, limit: Duration, out: PathBuf) {
    harness::watchdog(limit, move |index, took| {
        let input = case(seed, index).input;
        let file = save(&out, &format!("hang-{seed:x}-{index}.bin"), &input);
        eprintln!(
            "FINDING: execution {index} ran for {took:?} (endless loop?); input in {file}; \
             replay with --seed {seed} --replay {index}"
        );
    });
}

fn replay(seed: u64, index: u64) -> i32 {
    let c = case(seed, index);
    let target = match c.target {
        Target::Request => "request",
        Target::Chunked => "chunked body",
    };
    println!(
        "execution {index} of seed {seed}: {target}, tight limits {}, head read step {}, \
         fill {}, read {}",
        c.tight, c.step, c.reads.fill, c.reads.read
    );
    println!(
        "input ({} bytes): {}",
        c.input.len(),
        c.input.escape_ascii()
    );
    let mut tally = Tally::default();
    match run_caught(&c, &mut tally) {
        Ok(()) => {
            tally.print();
            0
        }
        Err(what) => {
            println!("FINDING: {what}");
            1
        }
    }
}

fn main() {
    let args = Args::parse();
    harness::record_panics();
    if let Some(index) = args.replay {
        std::process::exit(replay(args.seed, index));
    }
    watchdog(
        args.seed,
        Duration::from_secs(args.hang_secs),
        args.out.clone(),
    );
    let mut tally = Tally::default();
    let start = Instant::now();
    let mut report = start;
    for index in 0..args.iterations {
        CURRENT.store(index + 1, Ordering::Relaxed);
        let c = case(args.seed, index);
        if let Err(what) = run_caught(&c, &mut tally) {
            tally.findings += 1;
            let file = match tally.findings <= SAVED_FINDINGS {
                true => save(
                    &args.out,
                    &format!("finding-{:x}-{index}.bin", args.seed),
                    &c.input,
                ),
                false => "(not saved)".into(),
            };
            eprintln!("FINDING at execution {index} (input in {file}): {what}");
        }
        if index & 0xffff == 0 && report.elapsed() >= Duration::from_secs(10) {
            report = Instant::now();
            let rate = index as f64 / start.elapsed().as_secs_f64();
            eprintln!(
                "{index} executions, {rate:.0} exec/s, {} findings",
                tally.findings
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    tally.print();
    println!(
        "fuzz_h1: {} executions in {secs:.1} s = {:.0} exec/s (seed {}, one thread); {} findings",
        args.iterations,
        args.iterations as f64 / secs,
        args.seed,
        tally.findings
    );
    if tally.findings > 0 {
        std::process::exit(1);
    }
}
