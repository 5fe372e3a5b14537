//! Seeded generator of GTFS data with the MBTA's shape, for the transit bench (issue 33): at
//! scale 1 about 71,091 trips on 190 routes and 1.79 million stop times (~100 MB of
//! stop_times.txt), the MBTA's route, trip, service and stop ids and column sets, times past
//! 24:00, a few rail routes with thousands of trips. Also writes the two load mixes,
//! `routes_heavy.txt` and `routes_small.txt` (one route id a line), and `generated.txt` last
//! (seed, scale and counts: its presence means the set is complete). Same seed and scale, same
//! bytes.
//!
//! `cargo run --release -p moria-bench --bin gtfs_gen -- --out DIR [--seed N] [--scale F]`

mod catalogue;
mod mixes;
mod trips;
mod write;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use fastrand::Rng;

/// Command-line flags.
#[derive(Parser)]
#[command(about = "seeded GTFS generator with the MBTA's shape")]
struct Args {
    /// Directory to write into (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Size relative to the MBTA's feed (trips per route scale with it; every route keeps one).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
}

/// What a generation wrote.
#[derive(Debug, PartialEq)]
struct Summary {
    routes: usize,
    trips: usize,
    stop_times: usize,
    largest_answer: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if !(args.scale.is_finite() && args.scale > 0.0) {
        eprintln!(
            "gtfs_gen: --scale must be a positive number, not {}",
            args.scale
        );
        return ExitCode::FAILURE;
    }
    match generate(&args.out, args.seed, args.scale) {
        Ok(s) => {
            println!(
                "{}: {} routes, {} trips, {} stop times, largest answer {} bytes",
                args.out.display(),
                s.routes,
                s.trips,
                s.stop_times,
                s.largest_answer
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gtfs_gen: {}: {e}", args.out.display());
            ExitCode::FAILURE
        }
    }
}

/// Writes the feed and the mixes for `seed` and `scale` into `dir`.
fn generate(dir: &Path, seed: u64, scale: f64) -> io::Result<Summary> {
    fs::create_dir_all(dir)?;
    let _ = fs::remove_file(dir.join("generated.txt"));
    let mut rng = Rng::with_seed(seed);
    let routes = catalogue::routes(&mut rng, scale);
    let trips = trips::trips(&mut rng, &routes);
    write::write_trips(dir, &routes, &trips)?;
    let (stop_times, sizes) = write::write_stop_times(dir, &routes, &trips)?;
    let ids = |picked: Vec<usize>| -> String {
        picked
            .iter()
            .map(|&i| format!("{}\n", routes[i].id))
            .collect()
    };
    fs::write(
        dir.join("routes_heavy.txt"),
        ids(mixes::heavy(&mut rng, &sizes)),
    )?;
    fs::write(dir.join("routes_small.txt"), ids(mixes::small(&sizes)))?;
    let summary = Summary {
        routes: routes.len(),
        trips: trips.len(),
        stop_times,
        largest_answer: sizes.iter().copied().max().unwrap_or(0),
    };
    fs::write(
        dir.join("generated.txt"),
        format!(
            "seed={seed}\nscale={scale}\nroutes={}\ntrips={}\nstop_times={}\n",
            summary.routes, summary.trips, summary.stop_times
        ),
    )?;
    Ok(summary)
}

#[cfg(test)]
mod tests;
