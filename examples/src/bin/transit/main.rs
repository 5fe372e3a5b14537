//! transit: the transit-lang-cmp challenge on Moria. Loads a GTFS directory's `trips.txt` and
//! `stop_times.txt` into compact columns, then serves every trip of a route with its stop times
//! as JSON.
//!
//! ```text
//! transit --gtfs DIR --listen 127.0.0.1:8080 [--workers N] [--stream-over BYTES]
//! curl http://127.0.0.1:8080/schedules/Red
//! curl --compressed http://127.0.0.1:8080/schedules/Red     # gzip when asked
//! ```
//!
//! Bodies over `--stream-over` bytes (default 1 MiB) are streamed a few trips at a time rather
//! than written whole, so big routes under many connections cost little memory.
//!
//! The data is loaded on the offload pool before the port is bound (an open port means ready);
//! the log then says `loaded N trips and M stop times in X ms, RSS Y MiB`. A bad file is an error
//! naming it (and the line, for a row) and a non-zero exit. Every flag has a `MORIA_*`
//! environment twin.
//!
//! | module | what lives there |
//! |---|---|
//! | `args` | the command line |
//! | `load` | CSV to store: columns by name, streamed, errors with file and line |
//! | `split` | the CSV reader: an RFC 4180 record splitter over moria-streams' `File` |
//! | `store` | the timetable: trips by route, stop times by trip, `u32` ids |
//! | `strings` | interned strings, each kept once as its JSON literal |
//! | `group` | grouping rows without hashing |
//! | `json` | the response body, written into the response buffer |
//! | `routes` | the router |
//! | `rss` | resident memory, for the start-up line; the load's garbage handed back |

mod args;
mod group;
mod json;
mod load;
mod routes;
mod rss;
mod split;
mod store;
mod strings;

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use moria_http::compress::Compression;
use moria_http::{BoxError, Server};
use moria_runtime::{blocking, shutdown};

use args::Args;

/// Bytes in a MiB.
const MIB: u64 = 1 << 20;

fn run(args: Args) -> Result<(), BoxError> {
    let rt = moria_examples::start_runtime(args.workers)?;
    let workers = rt.config().workers;
    let dir = args.gtfs.clone();
    let started = Instant::now();
    let store = rt
        .run(move || blocking(move || load::load(&dir)))
        .map_err(|e| format!("start-up fiber failed: {e}"))?
        .map_err(|e| format!("offload pool failed: {e}"))??;
    rss::return_free_memory();
    let rss = rss::resident_bytes().map_or_else(|| "unknown".into(), |b| format!("{}", b / MIB));
    log::info!(
        "loaded {} trips and {} stop times in {} ms, RSS {rss} MiB",
        store.trip_count(),
        store.stop_time_count(),
        started.elapsed().as_millis()
    );
    shutdown::listen_for_signals()?;
    let server = Server::builder()
        .listen(args.listen.as_str())
        .compression(Some(Compression::default()))
        .shutdown_token(shutdown::global().clone())
        .start(routes::router(Arc::new(store), args.stream_over))?;
    log::info!(
        "listening on http://{} ({workers} workers)",
        server.local_addr()
    );
    server.wait();
    Ok(())
}

fn main() {
    // Per-request access lines and the engine's fd notes would dominate a benchmark.
    let filter = "info,moria_http::access=warn,may=warn";
    moria_examples::serve_main("transit", filter, || run(Args::parse()));
}
