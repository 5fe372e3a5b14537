//! Peer for the transit bench (issue 33): the transit-lang-cmp server built the way the
//! challenge's published Rust entry is — axum + tokio (multi-thread runtime) + csv + serde,
//! `String` fields per row, `HashMap<String, Vec<usize>>` indexes from route to trips and from
//! trip to stop times, and a handler that builds a `Vec` of serde structs and returns
//! `Json(...)`. Loads the GTFS directory, logs `loaded N trips and M stop times in X ms`, and
//! only then binds (an open port means ready) and logs `listening on ADDR`. Never part of the
//! library.
//!
//! `cargo run --release -p moria-bench --bin peer_transit_axum -- --gtfs DIR --listen 127.0.0.1:8090 [--workers N]`

mod gtfs;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};
use clap::Parser;
use serde::Serialize;

use gtfs::{StopTime, Trip};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "axum + csv + serde transit-lang-cmp peer")]
struct Args {
    /// Directory holding trips.txt and stop_times.txt.
    #[arg(long)]
    gtfs: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: String,
    /// Runtime worker threads (default: one per CPU).
    #[arg(long)]
    workers: Option<usize>,
}

/// The loaded data and its indexes, as the published entry keeps them.
struct Data {
    trips: Vec<Trip>,
    stop_times: Vec<StopTime>,
    trips_by_route: HashMap<String, Vec<usize>>,
    stop_times_by_trip: HashMap<String, Vec<usize>>,
}

/// One trip of the answer, fields in the challenge's order.
#[derive(Serialize)]
struct TripResponse {
    trip_id: String,
    service_id: String,
    route_id: String,
    schedules: Vec<ScheduleResponse>,
}

/// One stop time of a trip in the answer.
#[derive(Serialize)]
struct ScheduleResponse {
    stop_id: String,
    arrival_time: String,
    departure_time: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer_transit_axum: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let start = Instant::now();
    let trips = gtfs::read_trips(&args.gtfs.join("trips.txt"))?;
    let stop_times = gtfs::read_stop_times(&args.gtfs.join("stop_times.txt"))?;
    let data = index(trips, stop_times);
    eprintln!(
        "loaded {} trips and {} stop times in {} ms",
        data.trips.len(),
        data.stop_times.len(),
        start.elapsed().as_millis()
    );

    let workers = args
        .workers
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    runtime.block_on(serve(Arc::new(data), &args.listen))
}

fn index(trips: Vec<Trip>, stop_times: Vec<StopTime>) -> Data {
    let mut trips_by_route: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, trip) in trips.iter().enumerate() {
        trips_by_route
            .entry(trip.route_id.clone())
            .or_default()
            .push(i);
    }
    let mut stop_times_by_trip: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, st) in stop_times.iter().enumerate() {
        stop_times_by_trip
            .entry(st.trip_id.clone())
            .or_default()
            .push(i);
    }
    Data {
        trips,
        stop_times,
        trips_by_route,
        stop_times_by_trip,
    }
}

async fn serve(data: Arc<Data>, listen: &str) -> Result<(), String> {
    let app = Router::new()
        .route("/schedules/{route_id}", get(schedules))
        .with_state(data);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("bind {listen}: {e}"))?;
    if let Ok(addr) = listener.local_addr() {
        eprintln!("listening on {addr}");
    }
    axum::serve(listener, app)
        .await
        .map_err(|e| format!("serve: {e}"))
}

async fn schedules(
    Path(route_id): Path<String>,
    State(data): State<Arc<Data>>,
) -> Json<Vec<TripResponse>> {
    let mut resp = Vec::new();
    if let Some(trip_ixs) = data.trips_by_route.get(&route_id) {
        for &ti in trip_ixs {
            let trip = &data.trips[ti];
            let mut schedules = Vec::new();
            if let Some(st_ixs) = data.stop_times_by_trip.get(&trip.trip_id) {
                for &si in st_ixs {
                    let st = &data.stop_times[si];
                    schedules.push(ScheduleResponse {
                        stop_id: st.stop_id.clone(),
                        arrival_time: st.arrival_time.clone(),
                        departure_time: st.departure_time.clone(),
                    });
                }
            }
            resp.push(TripResponse {
                trip_id: trip.trip_id.clone(),
                service_id: trip.service_id.clone(),
                route_id: trip.route_id.clone(),
                schedules,
            });
        }
    }
    Json(resp)
}
