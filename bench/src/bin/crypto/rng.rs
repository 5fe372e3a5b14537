//! The CSPRNG table: `moria_crypto::rng` against OpenSSL's `RAND_bytes`, the `rand` crate's
//! `StdRng` (ChaCha12) and `ThreadRng` (ChaCha12, reseeding), and the AES-CTR cipher itself
//! (`openssl speed -evp aes-128-ctr -bytes 65536`, and moria-crypto's `Ctr` on 64 KiB blocks).
//!
//! Cells: fill rate for requests of 16 B, 1 KiB and 64 KiB, and `u32`, `u64` and a uniform
//! number in 1..=10000 (TechEmpower's World ids) per second. Each cell runs for [`CELL`] of the
//! thread's CPU time; sources alternate inside every round; medians over rounds.

use std::hint::black_box;
use std::time::Duration;

use moria_crypto::{rng, Ctr};
use rand::{Rng, RngExt};

use crate::{median, openssl_speed, thread_cpu_time};

/// CPU time per cell.
const CELL: Duration = Duration::from_millis(200);
/// Calls between two reads of the clock.
const BATCH: usize = 256;
/// The large request, also `openssl speed`'s block.
const LARGE: usize = 64 * 1024;
/// The fill sizes measured.
const SIZES: [usize; 3] = [16, 1024, LARGE];
/// The large-fill target against the cipher's own speed.
const TARGET: f64 = 0.9;

/// A random source under test.
enum Source {
    Moria,
    OpenSsl,
    Std(Box<rand::rngs::StdRng>),
    Thread(rand::rngs::ThreadRng),
}

impl Source {
    fn all() -> Vec<(&'static str, Source)> {
        vec![
            ("moria rng", Source::Moria),
            ("OpenSSL RAND_bytes", Source::OpenSsl),
            ("rand StdRng", Source::Std(Box::new(rand::make_rng()))),
            ("rand ThreadRng", Source::Thread(rand::rng())),
        ]
    }

    fn fill(&mut self, buf: &mut [u8]) {
        match self {
            Source::Moria => rng::fill(buf).expect("rng"),
            Source::OpenSsl => openssl::rand::rand_bytes(buf).expect("RAND_bytes"),
            Source::Std(r) => r.fill_bytes(buf),
            Source::Thread(r) => r.fill_bytes(buf),
        }
    }

    fn u32(&mut self) -> u32 {
        match self {
            Source::Moria => rng::u32().expect("rng"),
            Source::OpenSsl => {
                let mut b = [0u8; 4];
                openssl::rand::rand_bytes(&mut b).expect("RAND_bytes");
                u32::from_ne_bytes(b)
            }
            Source::Std(r) => r.next_u32(),
            Source::Thread(r) => r.next_u32(),
        }
    }

    fn u64(&mut self) -> u64 {
        match self {
            Source::Moria => rng::u64().expect("rng"),
            Source::OpenSsl => {
                let mut b = [0u8; 8];
                openssl::rand::rand_bytes(&mut b).expect("RAND_bytes");
                u64::from_ne_bytes(b)
            }
            Source::Std(r) => r.next_u64(),
            Source::Thread(r) => r.next_u64(),
        }
    }

    /// A World id, or `None` where the source has no unbiased range of its own.
    fn world_id(&mut self) -> Option<u64> {
        match self {
            Source::Moria => Some(rng::range(1..10_001).expect("rng")),
            Source::OpenSsl => None,
            Source::Std(r) => Some(r.random_range(1..10_001)),
            Source::Thread(r) => Some(r.random_range(1..10_001)),
        }
    }
}

/// Calls of `op` per CPU second, each call doing `per_call` units (bytes or numbers).
fn rate(mut op: impl FnMut()) -> f64 {
    for _ in 0..BATCH {
        op();
    }
    let start = thread_cpu_time();
    let mut calls = 0u64;
    while thread_cpu_time() - start < CELL {
        for _ in 0..BATCH {
            op();
        }
        calls += BATCH as u64;
    }
    calls as f64 / (thread_cpu_time() - start).as_secs_f64()
}

/// One round of every cell of `source`: bytes/s for each of [`SIZES`], then u32/s, u64/s and
/// World ids/s (0 when the source has none).
fn round(source: &mut Source) -> Vec<f64> {
    let mut cells = Vec::new();
    for size in SIZES {
        let mut buf = vec![0u8; size];
        cells.push(rate(|| source.fill(black_box(&mut buf))) * size as f64);
    }
    cells.push(rate(|| {
        black_box(source.u32());
    }));
    cells.push(rate(|| {
        black_box(source.u64());
    }));
    let ranged = source.world_id().is_some();
    cells.push(if ranged {
        rate(|| {
            black_box(source.world_id());
        })
    } else {
        0.0
    });
    cells
}

/// Prints the table; returns a missed target, if any.
pub fn run(rounds: usize, seconds: u64) -> Option<String> {
    let mut sources = Source::all();
    let mut samples: Vec<Vec<Vec<f64>>> = vec![Vec::new(); sources.len()];
    let mut cipher = Vec::new();
    let mut speed = Vec::new();
    let mut ctr = Ctr::new("aes-128-ctr", &[7u8; 16], &[0u8; 16]).expect("catalogue ctr");
    let mut block = vec![0u8; LARGE];
    for _ in 0..rounds {
        for (i, (_, source)) in sources.iter_mut().enumerate() {
            samples[i].push(round(source));
        }
        cipher.push(rate(|| ctr.apply(black_box(&mut block)).expect("ctr")) * LARGE as f64);
        if let Some(bps) = openssl_speed(&["-evp", "aes-128-ctr"], LARGE, seconds) {
            speed.push(bps);
        }
    }

    println!();
    println!(
        "CSPRNG: fill MB/s by request size, then millions of numbers/s; {rounds} rounds, medians"
    );
    println!(
        "{:<20} {:>10} {:>10} {:>10} {:>9} {:>9} {:>12}",
        "source", "16 B", "1 KiB", "64 KiB", "u32", "u64", "1..=10000"
    );
    let mut large = Vec::new();
    for (i, (name, _)) in sources.iter().enumerate() {
        let cell = |c: usize| median(samples[i].iter().map(|r| r[c]).collect());
        large.push(cell(2));
        let ids = cell(5);
        println!(
            "{:<20} {:>10.1} {:>10.1} {:>10.1} {:>9.1} {:>9.1} {:>12}",
            name,
            cell(0) / 1e6,
            cell(1) / 1e6,
            cell(2) / 1e6,
            cell(3) / 1e6,
            cell(4) / 1e6,
            if ids > 0.0 {
                format!("{:.1}", ids / 1e6)
            } else {
                "-".into()
            },
        );
    }
    let ours = large[0];
    let cipher = median(cipher);
    println!(
        "{:<20} {:>32.1}   (moria-crypto Ctr, 64 KiB blocks; rng/Ctr {:.3})",
        "aes-128-ctr Ctr",
        cipher / 1e6,
        ours / cipher
    );
    let speed = (!speed.is_empty()).then(|| median(speed));
    match speed {
        Some(speed) => {
            println!(
                "{:<20} {:>32.1}   (openssl speed -evp aes-128-ctr -bytes 65536; rng/speed {:.3})",
                "aes-128-ctr speed",
                speed / 1e6,
                ours / speed
            );
            (ours / speed < TARGET)
                .then(|| format!("rng 64 KiB at {:.3} of aes-128-ctr", ours / speed))
        }
        None => Some("rng: `openssl speed` did not run (Debian package openssl)".into()),
    }
}
