//! csv_load: issue 33's "a well-kept CSV crate unless Moria's own streams beat it (measure
//! both)". Times, on one GTFS directory, the `csv` crate (`ByteRecord`, 1 MiB buffer) against
//! the transit server's own RFC 4180 splitter over moria-streams' `File` ([`split`]): parsing
//! `stop_times.txt` alone, and the whole load into the server's store, by the server's own
//! `load.rs` (splitter) and row for row by the csv crate here (`load.rs`, `split.rs`,
//! `store.rs`, `strings.rs` and `group.rs` compiled in here unchanged). The splitter won (see
//! the server's `load.rs`), so the server reads with it. Runs alternate; medians.
//!
//! ```text
//! cargo build --release -p moria-bench --bin gtfs_gen --bin csv_load
//! target/release/gtfs_gen --out /tmp/transit-data
//! target/release/csv_load --gtfs /tmp/transit-data --runs 5
//! ```

// The transit server's own loader, CSV splitter and store, as its binary compiles them.
#[allow(dead_code)]
#[path = "../../../../examples/src/bin/transit/group.rs"]
mod group;
#[allow(dead_code)]
#[path = "../../../../examples/src/bin/transit/load.rs"]
mod load;
#[allow(dead_code)]
#[path = "../../../../examples/src/bin/transit/split.rs"]
mod split;
#[allow(dead_code)]
#[path = "../../../../examples/src/bin/transit/store.rs"]
mod store;
#[allow(dead_code)]
#[path = "../../../../examples/src/bin/transit/strings.rs"]
mod strings;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use split::Splitter;
use store::{Builder, StopTime, Store};

/// Reader buffer of both parsers: the transit server's.
const BUF_SIZE: usize = 1 << 20;

/// Command line.
#[derive(Parser)]
#[command(about = "csv crate vs a hand CSV splitter over moria-streams on GTFS data")]
struct Args {
    /// GTFS directory (trips.txt, stop_times.txt), e.g. gtfs_gen's output.
    #[arg(long)]
    gtfs: PathBuf,
    /// Runs of each measurement (alternating), at least 1.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("csv_load: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One measurement: its name and what it does once (a checksum to compare).
type Case = (&'static str, fn(&Path) -> Result<u64, String>);

/// Runs each case `runs` times in turn and prints the table.
fn run(args: &Args) -> Result<(), String> {
    let cases: [Case; 4] = [
        ("parse stop_times.txt, csv crate", parse_csv),
        ("parse stop_times.txt, hand splitter", parse_hand),
        ("whole load, csv crate", load_csv),
        ("whole load (server's load.rs), hand splitter", load_hand),
    ];
    let mut times = vec![Vec::new(); cases.len()];
    let mut sums = vec![None; cases.len()];
    for _ in 0..args.runs {
        for (i, (name, case)) in cases.iter().enumerate() {
            let t = Instant::now();
            let sum = case(&args.gtfs)?;
            times[i].push(t.elapsed());
            if *sums[i].get_or_insert(sum) != sum {
                return Err(format!("{name}: checksum changed between runs"));
            }
        }
    }
    // Both parsers must have read the same bytes, and both loads built the same store.
    for pair in [(0, 1), (2, 3)] {
        if sums[pair.0] != sums[pair.1] {
            return Err(format!(
                "`{}` and `{}` disagree: {:?} vs {:?}",
                cases[pair.0].0, cases[pair.1].0, sums[pair.0], sums[pair.1]
            ));
        }
    }
    println!(
        "| {:<42} | median ms | min ms | max ms | vs csv |",
        format!("{} runs each, alternating", args.runs)
    );
    println!("|{:-<44}|----------:|-------:|-------:|-------:|", "");
    let mut medians = Vec::new();
    for (i, (name, _)) in cases.iter().enumerate() {
        let t = &mut times[i];
        t.sort();
        let median = t[t.len() / 2];
        medians.push(median);
        let base = medians[i - i % 2];
        println!(
            "| {name:<42} | {:>9.0} | {:>6.0} | {:>6.0} | {:>5.2}x |",
            ms(median),
            ms(t[0]),
            ms(t[t.len() - 1]),
            ms(median) / ms(base)
        );
    }
    Ok(())
}

/// Milliseconds.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Order-sensitive checksum of the four wanted fields.
fn mix(sum: u64, fields: [&[u8]; 4]) -> u64 {
    fields.iter().fold(sum, |s, f| {
        f.iter().fold(s.rotate_left(5) ^ f.len() as u64, |s, &b| {
            s.wrapping_mul(31) ^ u64::from(b)
        })
    })
}

/// The column of each of `names` in `header` (a UTF-8 BOM before the first is ignored).
fn columns<'a, const N: usize>(
    header: impl Iterator<Item = &'a [u8]> + Clone,
    names: [&str; N],
) -> Result<[usize; N], String> {
    let mut out = [0; N];
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = header
            .clone()
            .enumerate()
            .position(|(i, f)| {
                let f = match i {
                    0 => f.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(f),
                    _ => f,
                };
                f == name.as_bytes()
            })
            .ok_or_else(|| format!("no column `{name}` in the header"))?;
    }
    Ok(out)
}

/// stop_times.txt's wanted columns.
const STOP_TIME_COLUMNS: [&str; 4] = ["trip_id", "stop_id", "arrival_time", "departure_time"];
/// trips.txt's wanted columns.
const TRIP_COLUMNS: [&str; 3] = ["route_id", "service_id", "trip_id"];

/// A csv reader over `path` (flexible rows, the server's buffer size), a record to reuse, and
/// the wanted columns of its header.
fn open_csv<const N: usize>(
    path: &Path,
    names: [&str; N],
) -> Result<(csv::Reader<std::fs::File>, csv::ByteRecord, [usize; N]), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .buffer_capacity(BUF_SIZE)
        .from_reader(file);
    let header = r.byte_headers().map_err(|e| e.to_string())?.clone();
    let cols = columns(header.iter(), names)?;
    Ok((r, csv::ByteRecord::new(), cols))
}

/// The wanted fields of a csv record; an error naming the line when short.
fn csv_fields<'r, const N: usize>(
    rec: &'r csv::ByteRecord,
    cols: [usize; N],
    path: &Path,
) -> Result<[&'r [u8]; N], String> {
    let mut out = [&[][..]; N];
    for (slot, c) in out.iter_mut().zip(cols) {
        *slot = rec.get(c).ok_or_else(|| {
            let line = rec.position().map_or(0, |p| p.line());
            format!(
                "{}: line {line}: the row has {} fields",
                path.display(),
                rec.len()
            )
        })?;
    }
    Ok(out)
}

/// stop_times.txt through the csv crate: every record, its four wanted fields.
fn parse_csv(dir: &Path) -> Result<u64, String> {
    let path = dir.join("stop_times.txt");
    let (mut r, mut rec, cols) = open_csv(&path, STOP_TIME_COLUMNS)?;
    let mut sum = 0;
    while r.read_byte_record(&mut rec).map_err(|e| e.to_string())? {
        sum = mix(sum, cols.map(|c| rec.get(c).unwrap_or_default()));
    }
    Ok(sum)
}

/// A [`Splitter`] over moria-streams' `File` at `path`, with the wanted columns of its header.
fn open_hand<const N: usize>(
    path: &Path,
    names: [&str; N],
) -> Result<(Splitter<moria_streams::File>, [usize; N]), String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = moria_streams::File::open(path).map_err(|e| at(&e))?;
    let mut s = Splitter::new(file, BUF_SIZE);
    if !s.next_record().map_err(|e| at(&e))? {
        return Err(at(&"empty file"));
    }
    let cols = columns((0..s.len()).filter_map(|i| s.get(i)), names).map_err(|e| at(&e))?;
    Ok((s, cols))
}

/// The wanted fields of the splitter's current record; an error naming the line when short.
fn fields<'s, const N: usize>(
    s: &'s Splitter<moria_streams::File>,
    cols: [usize; N],
    path: &Path,
) -> Result<[&'s [u8]; N], String> {
    let mut out = [&[][..]; N];
    for (slot, c) in out.iter_mut().zip(cols) {
        *slot = s.get(c).ok_or_else(|| {
            format!(
                "{}: line {}: the row has {} fields",
                path.display(),
                s.line(),
                s.len()
            )
        })?;
    }
    Ok(out)
}

/// stop_times.txt through the hand splitter: every record, its four wanted fields.
fn parse_hand(dir: &Path) -> Result<u64, String> {
    let path = dir.join("stop_times.txt");
    let (mut s, cols) = open_hand(&path, STOP_TIME_COLUMNS)?;
    let mut sum = 0;
    while s
        .next_record()
        .map_err(|e| format!("{}: {e}", path.display()))?
    {
        sum = mix(sum, fields(&s, cols, &path)?);
    }
    Ok(sum)
}

/// What two loads must agree on: a summary of the store.
fn summary(store: &Store) -> u64 {
    let mut sum = store.trip_count() as u64 ^ (store.stop_time_count() as u64) << 32;
    for trip in store.trips(0..store.trip_count()) {
        for st in store.stop_times(trip) {
            sum = mix(
                sum,
                [
                    store.json(trip.trip_id),
                    store.json(st.stop_id),
                    store.json(st.arrival),
                    store.json(st.departure),
                ],
            );
        }
    }
    sum
}

/// The transit server's own load (the hand splitter).
fn load_hand(dir: &Path) -> Result<u64, String> {
    Ok(summary(&load::load(dir)?))
}

/// The same load, row for row, read by the csv crate.
fn load_csv(dir: &Path) -> Result<u64, String> {
    let mut b = Builder::default();
    let path = dir.join("trips.txt");
    let (mut r, mut rec, cols) = open_csv(&path, TRIP_COLUMNS)?;
    let bad = |rec: &csv::ByteRecord, e: &dyn std::fmt::Display| {
        let line = rec.position().map_or(0, |p| p.line());
        format!("{}: line {line}: {e}", path.display())
    };
    while r
        .read_byte_record(&mut rec)
        .map_err(|e| format!("{}: {e}", path.display()))?
    {
        let [route, service, trip] = csv_fields(&rec, cols, &path)?;
        let route = b.intern(route).map_err(|e| bad(&rec, &e))?;
        let service = b.intern(service).map_err(|e| bad(&rec, &e))?;
        let trip = b.intern(trip).map_err(|e| bad(&rec, &e))?;
        b.add_trip(route, service, trip);
    }
    let path = dir.join("stop_times.txt");
    let (mut r, mut rec, cols) = open_csv(&path, STOP_TIME_COLUMNS)?;
    let bad = |rec: &csv::ByteRecord, e: &dyn std::fmt::Display| {
        let line = rec.position().map_or(0, |p| p.line());
        format!("{}: line {line}: {e}", path.display())
    };
    let mut last: (Vec<u8>, Option<u32>) = (Vec::new(), None);
    while r
        .read_byte_record(&mut rec)
        .map_err(|e| format!("{}: {e}", path.display()))?
    {
        let [trip, stop, arrival, departure] = csv_fields(&rec, cols, &path)?;
        if trip != last.0.as_slice() {
            last = (trip.to_vec(), b.trip_key(trip));
        }
        let Some(key) = last.1 else { continue };
        let row = StopTime {
            stop_id: b.intern_stop(stop).map_err(|e| bad(&rec, &e))?,
            arrival: b.intern_time(arrival).map_err(|e| bad(&rec, &e))?,
            departure: b.intern_time(departure).map_err(|e| bad(&rec, &e))?,
        };
        b.add_stop_time(key, row);
    }
    Ok(summary(&b.finish()))
}
