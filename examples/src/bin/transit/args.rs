//! The command line: every flag has a `MORIA_*` environment twin.

use std::path::PathBuf;

use clap::Parser;

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(about = "transit-lang-cmp: GTFS trips and stop times served as JSON schedules")]
pub struct Args {
    /// Directory with the GTFS `trips.txt` and `stop_times.txt`.
    #[arg(long, env = "MORIA_GTFS")]
    pub gtfs: PathBuf,
    /// Address to serve on (bound once the data is loaded).
    #[arg(long, env = "MORIA_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    pub workers: Option<usize>,
    /// Bodies larger than this many bytes are streamed instead of written whole.
    #[arg(long, env = "MORIA_STREAM_OVER", default_value_t = 1 << 20)]
    pub stream_over: usize,
}
