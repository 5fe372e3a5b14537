//! moria-streams bench: file → socket with sendfile vs a buffered copy (and the File read chunk),
//! gzip levels 1 and 6 against the `gzip` command on the same data, pipe throughput between two
//! fibers. Prints a markdown table of medians; MB = 10^6 bytes.
//!
//! `cargo run --release -p moria-bench --bin streams [-- --runs 5 --file-mib 256 ...]`

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use clap::Parser;
use moria_runtime::net::TcpListener;
use moria_runtime::{spawn, Runtime};
use moria_streams::{
    pipe_with_capacity, transfer, CompressWriter, Compression, Counting, DecompressReader, File,
    Format, TransferExt,
};

#[derive(Parser)]
#[command(about = "moria-streams throughput bench")]
struct Args {
    /// Runs per measurement (the table shows the median).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Size of the file sent over loopback, MiB.
    #[arg(long, default_value_t = 256)]
    file_mib: usize,
    /// Size of the data compressed, MiB.
    #[arg(long, default_value_t = 32)]
    gzip_mib: usize,
    /// Bytes pushed through the pipe, MiB.
    #[arg(long, default_value_t = 1024)]
    pipe_mib: usize,
    /// Run only the rows whose benchmark or variant contains this text.
    #[arg(long)]
    only: Option<String>,
}

/// One run's result: MB/s, and possibly a new note for the row.
type Sample = (f64, Option<String>);

/// One line of the table: a measurement repeated `runs` times, interleaved with the others of
/// its group so a change in the machine's load hits every variant alike.
struct Row {
    what: &'static str,
    variant: String,
    run: Box<dyn FnMut() -> Sample>,
    speeds: Vec<f64>,
    cpu: Vec<f64>,
    note: String,
}

impl Row {
    fn new(
        what: &'static str,
        variant: String,
        note: String,
        mut run: impl FnMut() -> f64 + 'static,
    ) -> Row {
        Self::noting(what, variant, note, move || (run(), None))
    }

    /// A row whose runs may also replace its note (with the output size they measured).
    fn noting(
        what: &'static str,
        variant: String,
        note: String,
        run: impl FnMut() -> Sample + 'static,
    ) -> Row {
        Row {
            what,
            variant,
            run: Box::new(run),
            speeds: Vec::new(),
            cpu: Vec::new(),
            note,
        }
    }
}

/// CPU time (user + system) used so far by this process (fibers, pool threads, clients) and
/// by its finished child processes (the `gzip` command).
fn cpu_time() -> Duration {
    let of = |who| {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage
        };
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        tv(usage.ru_utime) + tv(usage.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

/// Runs a group of rows: one warm-up each, then `runs` rounds of every row in turn.
/// Each run returns MB/s; the CPU time it used is recorded as ms per GB moved (`bytes`).
fn run_group(rows: &mut Vec<Row>, runs: usize, bytes: u64, only: Option<&str>) {
    if let Some(only) = only {
        rows.retain(|r| r.what.contains(only) || r.variant.contains(only));
    }
    for row in rows.iter_mut() {
        let (_, note) = (row.run)();
        if let Some(note) = note {
            row.note = note;
        }
    }
    for _ in 0..runs {
        for row in rows.iter_mut() {
            let before = cpu_time();
            let (speed, _) = (row.run)();
            let used = cpu_time() - before;
            row.speeds.push(speed);
            row.cpu
                .push(used.as_secs_f64() * 1e3 / (bytes as f64 / 1e9));
        }
    }
}

fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / 1e6 / took.as_secs_f64()
}

fn median(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// A file of `len` pseudo-random bytes.
fn random_file(path: &Path, len: usize) -> io::Result<()> {
    let mut out = io::BufWriter::new(std::fs::File::create(path)?);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut block = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        for word in block.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        let n = left.min(block.len());
        out.write_all(&block[..n])?;
        left -= n;
    }
    out.flush()
}

/// Text-like data: a 2048-word vocabulary of syllable words, drawn with a skew towards the
/// first words (as in natural text), with numbers and line breaks mixed in.
fn text(len: usize) -> Vec<u8> {
    const SYLLABLES: [&str; 24] = [
        "mo", "ri", "a", "fi", "ber", "stre", "am", "so", "ck", "et", "bu", "ff", "chu", "nk",
        "gz", "ip", "de", "fla", "te", "re", "qu", "est", "bo", "dy",
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let vocabulary: Vec<String> = (0..2048)
        .map(|_| {
            let syllables = 1 + next() % 4;
            (0..syllables)
                .map(|_| SYLLABLES[(next() % 24) as usize])
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(len + 64);
    while out.len() < len {
        let r = next();
        let word = ((r % 2048) * ((r >> 16) % 2048)) / 2048;
        out.extend_from_slice(vocabulary[word as usize].as_bytes());
        out.push(if r.is_multiple_of(13) { b'\n' } else { b' ' });
        if (r >> 32).is_multiple_of(17) {
            out.extend_from_slice(format!("{} ", (r >> 40) % 100_000).as_bytes());
        }
    }
    out.truncate(len);
    out
}

#[derive(Clone, Copy)]
enum FileMode {
    Sendfile,
    Buffered { read_chunk: usize },
}

/// Serves the file to one loopback client that reads it to EOF; MB/s seen by the client.
fn file_to_socket(path: &Path, len: u64, mode: FileMode) -> f64 {
    let mut listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let path = path.to_path_buf();
    let server = spawn(move || -> io::Result<u64> {
        let (mut conn, _) = listener.accept()?;
        let mut file = File::open(&path)?;
        match mode {
            FileMode::Sendfile => file.transfer_to(&mut conn, None),
            FileMode::Buffered { read_chunk } => {
                file.set_read_chunk(read_chunk);
                transfer(&mut file, &mut conn, None)
            }
        }
    });
    let start = Instant::now();
    let mut client = std::net::TcpStream::connect(addr).expect("connect");
    let mut buf = vec![0u8; 256 * 1024];
    let mut got = 0u64;
    loop {
        let n = client.read(&mut buf).expect("client read");
        if n == 0 {
            break;
        }
        got += n as u64;
    }
    let took = start.elapsed();
    let sent = server.join().expect("server fiber").expect("server io");
    assert_eq!((sent, got), (len, len));
    mb_per_s(len, took)
}

/// Reads the file to its end through `File` with the given read chunk, in a fiber.
fn file_read(path: &Path, len: u64, read_chunk: usize) -> f64 {
    let path = path.to_path_buf();
    spawn(move || {
        let start = Instant::now();
        let mut file = File::open(&path).expect("open");
        file.set_read_chunk(read_chunk);
        let moved = transfer(&mut file, &mut io::sink(), None).expect("read");
        assert_eq!(moved, len);
        mb_per_s(len, start.elapsed())
    })
    .join()
    .expect("fiber")
}

/// Compresses `data` with moria-streams; returns (MB/s of input, compressed size).
fn gzip_ours(data: &[u8], level: u32) -> (f64, u64) {
    let start = Instant::now();
    let mut w = CompressWriter::new(
        Format::Gzip,
        Counting::new(io::sink()),
        Compression::new(level),
    );
    for piece in data.chunks(64 * 1024) {
        w.write_all(piece).expect("compress");
    }
    let out = w.finish().expect("finish");
    (
        mb_per_s(data.len() as u64, start.elapsed()),
        out.bytes_written(),
    )
}

/// Compresses the file with the gzip command; returns (MB/s of input, compressed size).
fn gzip_cli(path: &Path, len: u64, level: u32) -> (f64, u64) {
    let start = Instant::now();
    let mut child = Command::new("gzip")
        .arg(format!("-{level}"))
        .arg("-c")
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip command");
    let mut out = child.stdout.take().expect("stdout");
    let size = io::copy(&mut out, &mut io::sink()).expect("gzip output");
    assert!(child.wait().expect("gzip").success());
    (mb_per_s(len, start.elapsed()), size)
}

/// Decompresses with moria-streams; MB/s of output.
fn gunzip_ours(wire: &[u8], len: u64) -> f64 {
    let start = Instant::now();
    let mut r = DecompressReader::new(Format::Gzip, wire, u64::MAX);
    let n = io::copy(&mut r, &mut io::sink()).expect("decompress");
    assert_eq!(n, len);
    mb_per_s(len, start.elapsed())
}

/// Decompresses with `gzip -dc`; MB/s of output.
fn gunzip_cli(path: &Path, len: u64) -> f64 {
    let start = Instant::now();
    let mut child = Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip command");
    let mut out = child.stdout.take().expect("stdout");
    let n = io::copy(&mut out, &mut io::sink()).expect("gzip output");
    assert!(child.wait().expect("gzip").success());
    assert_eq!(n, len);
    mb_per_s(len, start.elapsed())
}

/// Pushes `total` bytes through a pipe from one fiber to another in `piece`-byte writes/reads.
fn pipe_throughput(total: u64, capacity: usize, piece: usize) -> f64 {
    let (mut w, mut r) = pipe_with_capacity(capacity);
    let start = Instant::now();
    let writer = spawn(move || {
        let buf = vec![7u8; piece];
        let mut left = total;
        while left > 0 {
            let n = (left as usize).min(piece);
            w.write_all(&buf[..n]).expect("pipe write");
            left -= n as u64;
        }
    });
    let reader = spawn(move || {
        let mut buf = vec![0u8; piece];
        let mut got = 0u64;
        loop {
            let n = r.read(&mut buf).expect("pipe read");
            if n == 0 {
                return got;
            }
            got += n as u64;
        }
    });
    writer.join().expect("writer");
    assert_eq!(reader.join().expect("reader"), total);
    mb_per_s(total, start.elapsed())
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let runs = args.runs.max(1);
    Runtime::builder()
        .workers(2)
        .build()
        .map_err(|e| io::Error::other(e.to_string()))?;
    let dir = std::env::temp_dir().join(format!("moria-bench-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut table = Vec::new();

    let file_path = Arc::new(dir.join("random.bin"));
    let file_len = (args.file_mib << 20) as u64;
    random_file(&file_path, file_len as usize)?;
    let note = format!("{} MiB file", args.file_mib);
    let mut group = Vec::new();
    let path = file_path.clone();
    group.push(Row::new(
        "file → loopback socket",
        "sendfile (`transfer_to`)".into(),
        note.clone(),
        move || file_to_socket(&path, file_len, FileMode::Sendfile),
    ));
    for chunk in [64 << 10, 256 << 10, 1 << 20] {
        let path = file_path.clone();
        group.push(Row::new(
            "file → loopback socket",
            format!("buffered `transfer`, File read chunk {} KiB", chunk >> 10),
            note.clone(),
            move || file_to_socket(&path, file_len, FileMode::Buffered { read_chunk: chunk }),
        ));
    }
    run_group(&mut group, runs, file_len, args.only.as_deref());
    table.extend(group);

    let mut group = Vec::new();
    for chunk in [64 << 10, 256 << 10, 1 << 20] {
        let path = file_path.clone();
        group.push(Row::new(
            "File read → sink",
            format!("read chunk {} KiB (64 KiB caller reads)", chunk >> 10),
            note.clone(),
            move || file_read(&path, file_len, chunk),
        ));
    }
    run_group(&mut group, runs, file_len, args.only.as_deref());
    table.extend(group);

    let data = Arc::new(text(args.gzip_mib << 20));
    let text_path = Arc::new(dir.join("text.txt"));
    std::fs::write(&*text_path, &*data)?;
    let len = data.len() as u64;
    let gzip_mib = args.gzip_mib;
    let mut group = Vec::new();
    for level in [1u32, 6] {
        let ours = data.clone();
        let ratio = move |size: u64| {
            format!(
                "{gzip_mib} MiB text → {:.1}%",
                100.0 * size as f64 / len as f64
            )
        };
        group.push(Row::noting(
            "gzip compress",
            format!("`CompressWriter`, level {level}"),
            String::new(),
            move || {
                let (speed, size) = gzip_ours(&ours, level);
                (speed, Some(ratio(size)))
            },
        ));
        let path = text_path.clone();
        group.push(Row::noting(
            "gzip compress",
            format!("`gzip -{level} -c` command"),
            String::new(),
            move || {
                let (speed, size) = gzip_cli(&path, len, level);
                (speed, Some(ratio(size)))
            },
        ));
    }
    // The level-6 stream both decoders read, made on first use (a filtered run may skip it).
    let gz_path = Arc::new(dir.join("text.txt.gz"));
    let wire: Arc<OnceLock<Vec<u8>>> = Arc::new(OnceLock::new());
    let prepare = {
        let (wire, data, gz_path) = (wire.clone(), data.clone(), gz_path.clone());
        move || -> Vec<u8> {
            wire.get_or_init(|| {
                let mut w = CompressWriter::new(Format::Gzip, Vec::new(), Compression::new(6));
                w.write_all(&data).expect("compress");
                let out = w.finish().expect("finish");
                std::fs::write(&*gz_path, &out).expect("write .gz");
                out
            })
            .clone()
        }
    };
    let note = format!("{} MiB text, level 6", args.gzip_mib);
    let ours = prepare.clone();
    group.push(Row::new(
        "gzip decompress",
        "`DecompressReader`".into(),
        note.clone(),
        move || gunzip_ours(&ours(), len),
    ));
    let path = gz_path.clone();
    group.push(Row::new(
        "gzip decompress",
        "`gzip -dc` command".into(),
        note,
        move || {
            prepare();
            gunzip_cli(&path, len)
        },
    ));
    run_group(&mut group, runs, len, args.only.as_deref());
    table.extend(group);

    let total = (args.pipe_mib << 20) as u64;
    let mut group = Vec::new();
    for (capacity, piece) in [
        (64 << 10, 64 << 10),
        (64 << 10, 4 << 10),
        (1 << 20, 64 << 10),
    ] {
        group.push(Row::new(
            "pipe, fiber → fiber",
            format!(
                "capacity {} KiB, {} KiB reads/writes",
                capacity >> 10,
                piece >> 10
            ),
            format!("{} MiB, 2 workers", args.pipe_mib),
            move || pipe_throughput(total, capacity, piece),
        ));
    }
    run_group(&mut group, runs, total, args.only.as_deref());
    table.extend(group);

    std::fs::remove_dir_all(&dir)?;
    println!("| benchmark | variant | median MB/s | min–max MB/s | CPU ms/GB (median) | data |");
    println!("|---|---|---:|---:|---:|---|");
    for row in &table {
        let min = row.speeds.iter().copied().fold(f64::INFINITY, f64::min);
        let max = row.speeds.iter().copied().fold(0.0, f64::max);
        println!(
            "| {} | {} | {:.0} | {:.0}–{:.0} | {:.0} | {} |",
            row.what,
            row.variant,
            median(&row.speeds),
            min,
            max,
            median(&row.cpu),
            row.note
        );
    }
    println!(
        "\n{runs} interleaved rounds after one warm-up run per variant; MB = 10^6 bytes; CPU is \
         user+system time of the process (server fibers, offload threads, the client thread) and of \
         the gzip child, per GB of input."
    );
    Ok(())
}
