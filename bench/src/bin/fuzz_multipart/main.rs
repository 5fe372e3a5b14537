//! fuzz_multipart: a mutation fuzzer for moria-http's `multipart/form-data` reader, on stable
//! Rust, sharing fuzz_h1's random generator.
//!
//! `cargo run --release -p moria-bench --bin fuzz_multipart -- --iterations N [--seed S]`
//!
//! Each execution mutates a seed body (forms built by the crate's own `Form`, and hostile
//! ones), then reads it twice — in one read, and in reads of random sizes from 1 byte up — and
//! checks: no panic, the same parts (names, file names, bytes) or the same violation both ways,
//! and, for an unmutated form, exactly the parts that were put in. Execution `i` of seed `S` is
//! a pure function of `(S, i)`; `--replay i` prints its input. Exits 1 when anything was found.

#[path = "../fuzz_h1/rng.rs"]
mod rng;

use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};

use clap::Parser;
use moria_http::multipart::{Form, Multipart, MultipartLimits, Violation};

use rng::Rng;

/// The boundary of every seed.
const BOUNDARY: &str = "fuzz-Bound4ry";

#[derive(Parser)]
#[command(about = "Mutation fuzzer for the multipart/form-data reader")]
struct Args {
    /// Executions to run.
    #[arg(long, default_value_t = 200_000)]
    iterations: u64,
    /// Seed of the run (execution i of seed S is always the same input).
    #[arg(long, default_value_t = 0x6d75_6c74_69)]
    seed: u64,
    /// Rebuild and run only this execution, printing its input and outcome.
    #[arg(long)]
    replay: Option<u64>,
}

/// A part as read: name, file name, bytes.
type Parts = Vec<(String, Option<String>, Vec<u8>)>;

/// A reader handing out the input in reads of the sizes `rng` picks.
struct Pieces<'a> {
    data: &'a [u8],
    rng: Rng,
}

impl Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let most = out.len().min(self.data.len());
        let n = if most == 0 {
            0
        } else {
            1 + self.rng.below(most)
        };
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Reads every part of `body` from `src`, with small limits so each is reached.
fn read_all(src: impl Read) -> Result<Parts, Option<Violation>> {
    let limits = MultipartLimits {
        max_parts: 64,
        max_header_bytes: 512,
        max_part_bytes: 96 * 1024,
        max_total_bytes: 512 * 1024,
    };
    let mut form = Multipart::new(src, BOUNDARY, limits);
    let mut parts = Vec::new();
    let fail = |e: io::Error| Violation::of(&e);
    while let Some(mut part) = form.next_part().map_err(fail)? {
        let mut data = Vec::new();
        part.read_to_end(&mut data).map_err(fail)?;
        parts.push((
            part.name().to_string(),
            part.filename().map(str::to_string),
            data,
        ));
    }
    Ok(parts)
}

/// A random form and the parts it holds.
fn random_form(rng: &mut Rng) -> (Vec<u8>, Parts) {
    let mut form = Form::with_boundary(BOUNDARY);
    let mut parts = Vec::new();
    for i in 0..rng.upto(6) {
        let len = *rng.pick(&[0, 1, 2, 17, 4096, 70_000]);
        let data: Vec<u8> = (0..len).map(|_| *rng.pick(b"\r\n-xfuzz")).collect();
        let name = format!("f{i}");
        if rng.one_in(2) {
            let file = format!("file {i}.bin");
            let n = data.len() as u64;
            form = form.reader(
                &name,
                &file,
                "application/octet-stream",
                io::Cursor::new(data.clone()),
                Some(n),
            );
            parts.push((name, Some(file), data));
        } else {
            let text = String::from_utf8_lossy(&data).into_owned();
            form = form.text(&name, &text);
            parts.push((name, None, text.into_bytes()));
        }
    }
    let mut body = Vec::new();
    form.into_reader()
        .read_to_end(&mut body)
        .expect("in memory");
    (body, parts)
}

/// Hostile seeds: no close delimiter, junk after a boundary, huge headers, no disposition.
const HOSTILE: &[&[u8]] = &[
    b"--fuzz-Bound4ry\r\nContent-Disposition: form-data; name=a\r\n\r\nno end",
    b"preamble\r\n--fuzz-Bound4ryjunk\r\n",
    b"--fuzz-Bound4ry\r\nContent-Type: text/plain\r\n\r\nx\r\n--fuzz-Bound4ry--",
    b"--fuzz-Bound4ry  \t\r\nContent-Disposition: form-data; name=\"q\\\"\"; filename*=UTF-8''%E2%82%AC\r\n\r\n\r\n--fuzz-Bound4ry--\r\nepilogue",
];

/// Pieces of the grammar worth inserting: delimiters whole and cut, line ends, header text.
const FRAGMENTS: &[&[u8]] = &[
    b"\r\n--fuzz-Bound4ry",
    b"\r\n--fuzz-Bound4ry--",
    b"\r\n--fuzz-Bou",
    b"--",
    b"\r\n",
    b"\r\n\r\n",
    b"\n",
    b"Content-Disposition: form-data; name=\"x\"; filename=\"a\\\"b\"\r\n",
    b"; filename*=UTF-8''%FF%00",
    b"\"",
    b":",
];

/// One mutation: a flipped byte, an inserted fragment, a deleted or repeated range, a cut.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    let at = rng.upto(data.len());
    match rng.below(5) {
        0 if !data.is_empty() => {
            let i = at.min(data.len() - 1);
            data[i] ^= 1 << rng.below(8);
        }
        1 => {
            let f = rng.pick(FRAGMENTS);
            data.splice(at..at, f.iter().copied());
        }
        2 => {
            let end = (at + rng.upto(64)).min(data.len());
            data.drain(at..end);
        }
        3 => {
            let end = (at + rng.upto(32)).min(data.len());
            let piece = data[at..end].repeat(1 + rng.upto(8));
            data.splice(at..at, piece);
        }
        _ => data.truncate(at),
    }
}

/// Runs execution `index`; `Some(why)` when it found something.
fn execute(seed: u64, index: u64, show: bool) -> Option<String> {
    let mut rng = Rng::for_exec(seed, index);
    let (mut body, parts) = random_form(&mut rng);
    let pristine = !rng.one_in(3) && !rng.one_in(2);
    if !pristine {
        if rng.one_in(4) {
            body = rng.pick(HOSTILE).to_vec();
        }
        for _ in 0..=rng.upto(3) {
            mutate(&mut rng, &mut body);
        }
    }
    if show {
        println!(
            "input ({} bytes): {:?}",
            body.len(),
            String::from_utf8_lossy(&body)
        );
    }
    let pieces_rng = Rng::for_exec(seed ^ 0x5eed, index);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let whole = read_all(&body[..]);
        let split = read_all(Pieces {
            data: &body,
            rng: pieces_rng,
        });
        (whole, split)
    }));
    let (whole, split) = match outcome {
        Ok(o) => o,
        Err(_) => return Some("panic".into()),
    };
    if show {
        println!("outcome: {:?}", whole.as_ref().map(|p| p.len()));
    }
    if whole != split {
        return Some(format!(
            "one read {:?} != split reads {:?}",
            summary(&whole),
            summary(&split)
        ));
    }
    if pristine && whole.as_ref() != Ok(&parts) {
        return Some(format!("form read back as {:?}", summary(&whole)));
    }
    None
}

fn summary(r: &Result<Parts, Option<Violation>>) -> String {
    match r {
        Ok(parts) => format!("{} parts", parts.len()),
        Err(v) => format!("{v:?}"),
    }
}

fn main() {
    let args = Args::parse();
    panic::set_hook(Box::new(|_| {}));
    if let Some(i) = args.replay {
        let found = execute(args.seed, i, true);
        println!("{}", found.as_deref().unwrap_or("nothing found"));
        std::process::exit(i32::from(found.is_some()));
    }
    let mut found = 0u64;
    for i in 0..args.iterations {
        if let Some(why) = execute(args.seed, i, false) {
            found += 1;
            if found <= 20 {
                println!("execution {i}: {why} (replay: --replay {i})");
            }
        }
    }
    println!(
        "fuzz_multipart: {} executions, seed {:#x}, {found} findings",
        args.iterations, args.seed
    );
    std::process::exit(i32::from(found > 0));
}
