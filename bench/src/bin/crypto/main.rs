//! moria-crypto throughput next to `openssl speed`, on the same machine in the same run.
//!
//! For each algorithm: mORMot's loop (messages of 8, 50, 100, 1000 and 10000 bytes, 500 of
//! each: 2500 operations over 5,579,000 bytes, one message = one complete operation) and a
//! 16 KiB block run, then `openssl speed -evp <alg> -bytes 16384` (`-hmac sha256` for the HMAC),
//! interleaved with ours round by round. Figures are medians over rounds; MB = 10^6 bytes.
//! Time is CPU time of the measuring thread, because `openssl speed` (without `-elapsed`)
//! counts user CPU time: on a shared machine wall time would charge us for other processes.
//!
//! Then the asymmetric tables: sign/verify per CPU second for RS256, PS256, ES256 and EdDSA
//! next to `openssl speed rsa2048 ecdsap256 ed25519` (module `sign`), and the PKI's
//! "load + verify" ×10,000 without and with its cache (module `pki`), and the CSPRNG table
//! (module `rng`: `moria_crypto::rng` against `RAND_bytes`, the `rand` crate and the AES-CTR
//! cipher; `--rng` runs only that one).
//!
//! `cargo run --release -p moria-bench --bin crypto [-- --rounds N --seconds S --rng]`

mod pki;
mod rng;
mod sign;

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use clap::Parser;
use moria_crypto::{Aead, Ctr, Hasher, Hmac, NONCE_LEN};

/// mORMot's message sizes (`test.core.crypt.pas`, `Benchmark`).
const MORMOT_SIZES: [usize; 5] = [8, 50, 100, 1000, 10000];
/// mORMot's repetitions per size.
const MORMOT_COUNT: usize = 500;
/// mORMot loops per measurement (one loop takes milliseconds; one sample would be noise).
const LOOP_REPS: usize = 20;
/// The block size compared with `openssl speed -bytes`.
const BLOCK: usize = 16 * 1024;
/// Algorithms with a ≥ 0.95 target against `openssl speed`.
const TARGETS: [&str; 3] = ["aes-128-gcm", "aes-128-ctr", "sha256"];

#[derive(Parser)]
#[command(about = "moria-crypto throughput next to openssl speed")]
struct Args {
    /// Rounds per algorithm (ours and openssl's alternate); medians are reported.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds per 16 KiB run, ours and openssl's each.
    #[arg(long, default_value_t = 1)]
    seconds: u64,
    /// Only the CSPRNG table.
    #[arg(long)]
    rng: bool,
}

/// One operation on a buffer: a whole message (hash, MAC, seal, or CTR from a fresh IV), or
/// the next 16 KiB of a stream for CTR's block run.
type Op = Box<dyn FnMut(&mut [u8])>;

struct Alg {
    name: &'static str,
    speed_args: &'static [&'static str],
    message: Op,
    block: Op,
}

fn hash_op(name: &'static str) -> Op {
    let mut h = Hasher::new(name).expect("catalogue hash");
    Box::new(move |buf| {
        black_box(h.digest(buf).expect("hash"));
    })
}

fn hmac_op() -> Op {
    let mut mac = Hmac::new("hmac-sha256", b"secret").expect("catalogue mac");
    Box::new(move |buf| {
        mac.update(buf).expect("hmac");
        black_box(mac.finish().expect("hmac"));
    })
}

fn aead_op(name: &'static str, key_len: usize) -> Op {
    let mut aead = Aead::new(name, &vec![7u8; key_len]).expect("catalogue aead");
    let mut counter = 0u64;
    Box::new(move |buf| {
        counter += 1;
        let mut nonce = [0u8; NONCE_LEN];
        nonce[..8].copy_from_slice(&counter.to_le_bytes());
        black_box(aead.seal_in_place(&nonce, b"", buf).expect("seal"));
    })
}

fn ctr_message_op(name: &'static str, key_len: usize) -> Op {
    let mut ctr = Ctr::new(name, &vec![7u8; key_len], &[0u8; 16]).expect("catalogue ctr");
    let mut counter = 0u64;
    Box::new(move |buf| {
        counter += 1;
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&counter.to_le_bytes());
        ctr.reset(&iv).expect("iv");
        ctr.apply(buf).expect("ctr");
    })
}

fn ctr_stream_op(name: &'static str, key_len: usize) -> Op {
    let mut ctr = Ctr::new(name, &vec![7u8; key_len], &[0u8; 16]).expect("catalogue ctr");
    Box::new(move |buf| ctr.apply(buf).expect("ctr"))
}

fn algorithms() -> Vec<Alg> {
    let hash = |name: &'static str, speed: &'static [&'static str]| Alg {
        name,
        speed_args: speed,
        message: hash_op(name),
        block: hash_op(name),
    };
    let aead = |name: &'static str, key_len, speed: &'static [&'static str]| Alg {
        name,
        speed_args: speed,
        message: aead_op(name, key_len),
        block: aead_op(name, key_len),
    };
    let ctr = |name: &'static str, key_len, speed: &'static [&'static str]| Alg {
        name,
        speed_args: speed,
        message: ctr_message_op(name, key_len),
        block: ctr_stream_op(name, key_len),
    };
    vec![
        hash("md5", &["-evp", "md5"]),
        hash("sha1", &["-evp", "sha1"]),
        hash("sha256", &["-evp", "sha256"]),
        hash("sha512", &["-evp", "sha512"]),
        hash("sha3-256", &["-evp", "sha3-256"]),
        Alg {
            name: "hmac-sha256",
            speed_args: &["-hmac", "sha256"],
            message: hmac_op(),
            block: hmac_op(),
        },
        aead("aes-128-gcm", 16, &["-evp", "aes-128-gcm"]),
        aead("aes-256-gcm", 32, &["-evp", "aes-256-gcm"]),
        aead("chacha20-poly1305", 32, &["-evp", "chacha20-poly1305"]),
        ctr("aes-128-ctr", 16, &["-evp", "aes-128-ctr"]),
        ctr("aes-256-ctr", 32, &["-evp", "aes-256-ctr"]),
    ]
}

/// CPU time consumed by the calling thread so far.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID unavailable");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// mORMot's loop: CPU seconds for its 2500 operations (mean of [`LOOP_REPS`] loops).
fn mormot_loop(op: &mut Op) -> f64 {
    let mut bufs: Vec<Vec<u8>> = MORMOT_SIZES.iter().map(|&n| vec![b'x'; n]).collect();
    let start = thread_cpu_time();
    for _ in 0..LOOP_REPS {
        for buf in &mut bufs {
            for _ in 0..MORMOT_COUNT {
                op(buf);
            }
        }
    }
    (thread_cpu_time() - start).as_secs_f64() / LOOP_REPS as f64
}

/// 16 KiB operations for about `run` of CPU time: bytes per CPU second.
fn block_run(op: &mut Op, run: Duration) -> f64 {
    let mut buf = vec![b'x'; BLOCK];
    for _ in 0..64 {
        op(&mut buf);
    }
    let start = thread_cpu_time();
    let mut ops = 0u64;
    while thread_cpu_time() - start < run {
        for _ in 0..64 {
            op(&mut buf);
        }
        ops += 64;
    }
    (ops * BLOCK as u64) as f64 / (thread_cpu_time() - start).as_secs_f64()
}

/// `openssl speed <args> -bytes B -seconds S`: bytes per second, if the command exists.
fn openssl_speed(args: &[&str], bytes: usize, seconds: u64) -> Option<f64> {
    let out = Command::new("openssl")
        .arg("speed")
        .args(args)
        .args([
            "-bytes",
            &bytes.to_string(),
            "-seconds",
            &seconds.to_string(),
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().rev().find(|l| l.trim_end().ends_with('k'))?;
    let kilo: f64 = last
        .split_whitespace()
        .last()?
        .trim_end_matches('k')
        .parse()
        .ok()?;
    Some(kilo * 1000.0)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args = Args::parse();
    let rounds = args.rounds.max(1);
    let run = Duration::from_secs(args.seconds.max(1));
    let total_bytes = (MORMOT_SIZES.iter().sum::<usize>() * MORMOT_COUNT) as f64;
    let total_ops = (MORMOT_SIZES.len() * MORMOT_COUNT) as f64;
    if args.rng {
        if let Some(miss) = rng::run(rounds, args.seconds.max(1)) {
            println!("\ntarget missed: {miss}");
        }
        return;
    }

    println!("moria-crypto vs openssl speed; {rounds} rounds, medians; MB = 10^6 bytes");
    println!(
        "{:<18} {:>12} {:>10} {:>12} {:>10} {:>14} {:>7}",
        "algorithm", "loop ops/s", "loop MB/s", "16K ops/s", "16K MB/s", "openssl MB/s", "ratio"
    );
    let mut misses = Vec::new();
    for mut alg in algorithms() {
        let mut loop_secs = Vec::new();
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..rounds {
            loop_secs.push(mormot_loop(&mut alg.message));
            ours.push(block_run(&mut alg.block, run));
            if let Some(bps) = openssl_speed(alg.speed_args, BLOCK, args.seconds.max(1)) {
                theirs.push(bps);
            }
        }
        let secs = median(loop_secs);
        let ours = median(ours);
        let theirs = (!theirs.is_empty()).then(|| median(theirs));
        let ratio = theirs.map(|t| ours / t);
        println!(
            "{:<18} {:>12.0} {:>10.1} {:>12.0} {:>10.1} {:>14} {:>7}",
            alg.name,
            total_ops / secs,
            total_bytes / secs / 1e6,
            ours / BLOCK as f64,
            ours / 1e6,
            theirs.map_or("-".into(), |t| format!("{:.1}", t / 1e6)),
            ratio.map_or("-".into(), |r| format!("{r:.3}")),
        );
        if let Some(r) = ratio.filter(|&r| TARGETS.contains(&alg.name) && r < 0.95) {
            misses.push(format!("{} at {r:.3}", alg.name));
        }
    }
    misses.extend(sign::run(rounds, args.seconds.max(1)));
    pki::run(rounds);
    misses.extend(rng::run(rounds, args.seconds.max(1)));
    println!();
    if misses.is_empty() {
        println!(
            "targets (>= 0.95 of openssl speed: 16 KiB for {TARGETS:?}; RS256, ES256, EdDSA; rng >= 0.9 of aes-128-ctr at 64 KiB): met"
        );
    } else {
        println!("targets missed: {}", misses.join(", "));
    }
}
