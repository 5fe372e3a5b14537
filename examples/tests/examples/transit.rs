//! The transit example on a small generated GTFS set: several routes' JSON byte for byte against
//! a naive join computed here, an unknown route, gzip on request, and clear non-zero exits on a
//! malformed row, a missing file and a missing column.

use std::fs;
use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::common::{run_to_end, start, Conn, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_transit");

/// Routes in the generated set.
const ROUTES: usize = 10;
/// Trips in the generated set.
const TRIPS: usize = 300;

/// One trips.txt row.
struct TripRow {
    route_id: String,
    service_id: String,
    trip_id: String,
}

/// One stop_times.txt row.
struct StopRow {
    trip_id: String,
    stop_id: String,
    arrival_time: String,
    departure_time: String,
}

/// The expected JSON of one trip, fields in the challenge's order.
#[derive(Serialize)]
struct TripOut<'a> {
    trip_id: &'a str,
    service_id: &'a str,
    route_id: &'a str,
    schedules: Vec<StopOut<'a>>,
}

/// The expected JSON of one stop time.
#[derive(Serialize)]
struct StopOut<'a> {
    stop_id: &'a str,
    arrival_time: &'a str,
    departure_time: &'a str,
}

/// A CSV field, quoted when it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn time(rng: &mut fastrand::Rng) -> String {
    // Up to 27:59:59: service days run past midnight.
    let (h, m, s) = (rng.u32(4..28), rng.u32(0..60), rng.u32(0..60));
    format!("{h:02}:{m:02}:{s:02}")
}

/// A seeded data set: route ids and trip ids with characters CSV must quote and JSON must
/// escape, one trip without stop times, stop times of a trip trips.txt does not list, and the
/// stop times of each trip together or (`interleave`) mixed with other trips'.
fn generate(interleave: bool) -> (Vec<TripRow>, Vec<StopRow>) {
    let mut rng = fastrand::Rng::with_seed(33);
    let route = |r: usize| match r {
        0 => "Red, \"the\" line".to_owned(),
        1 => "Green-B".to_owned(),
        _ => format!("R{r}"),
    };
    let trips: Vec<TripRow> = (0..TRIPS)
        .map(|i| {
            // Skewed: low routes get more trips.
            let r = rng.usize(0..ROUTES).min(rng.usize(0..ROUTES));
            let odd = [
                "",
                "\"q\"",
                "a\\b",
                "tab\there",
                "ctl\u{1}",
                "é→",
                "co,ma",
                "/",
            ];
            TripRow {
                route_id: route(r),
                service_id: format!("S{}", rng.u8(0..4)),
                trip_id: format!("{i}-KenLech{}", odd[i % odd.len()]),
            }
        })
        .collect();
    let mut pending: Vec<Vec<StopRow>> = trips
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 7)
        .map(|(_, t)| {
            (0..rng.usize(1..12))
                .map(|_| StopRow {
                    trip_id: t.trip_id.clone(),
                    stop_id: format!("place-{}", rng.u16(0..50)),
                    arrival_time: time(&mut rng),
                    departure_time: time(&mut rng),
                })
                .collect()
        })
        .collect();
    pending.push(vec![StopRow {
        trip_id: "not-a-trip".into(),
        stop_id: "x".into(),
        arrival_time: "01:00:00".into(),
        departure_time: "01:00:00".into(),
    }]);
    for p in &mut pending {
        p.reverse();
    }
    // Take the next row of a random trip (or of the first) until all are taken.
    let mut stops = Vec::new();
    while !pending.is_empty() {
        let i = if interleave {
            rng.usize(0..pending.len())
        } else {
            0
        };
        match pending[i].pop() {
            Some(row) => stops.push(row),
            None => {
                pending.remove(i);
            }
        }
    }
    (trips, stops)
}

/// Writes the set with headers in another order than the usual, and extra columns.
fn write(dir: &Path, trips: &[TripRow], stops: &[StopRow]) {
    let mut t = String::from("trip_headsign,trip_id,direction_id,service_id,route_id\n");
    for (i, r) in trips.iter().enumerate() {
        t.push_str(&format!(
            "\"Head, {i}\",{},0,{},{}\n",
            field(&r.trip_id),
            field(&r.service_id),
            field(&r.route_id)
        ));
    }
    fs::write(dir.join("trips.txt"), t).unwrap();
    let mut s =
        String::from("stop_sequence,stop_id,departure_time,pickup_type,trip_id,arrival_time\n");
    for (i, r) in stops.iter().enumerate() {
        s.push_str(&format!(
            "{i},{},{},0,{},{}\n",
            field(&r.stop_id),
            r.departure_time,
            field(&r.trip_id),
            r.arrival_time
        ));
    }
    fs::write(dir.join("stop_times.txt"), s).unwrap();
}

/// The naive join: the route's trips in file order, each with its stop times in file order.
fn expected(trips: &[TripRow], stops: &[StopRow], route_id: &str) -> Vec<u8> {
    let out: Vec<TripOut<'_>> = trips
        .iter()
        .filter(|t| t.route_id == route_id)
        .map(|t| TripOut {
            trip_id: &t.trip_id,
            service_id: &t.service_id,
            route_id: &t.route_id,
            schedules: stops
                .iter()
                .filter(|s| s.trip_id == t.trip_id)
                .map(|s| StopOut {
                    stop_id: &s.stop_id,
                    arrival_time: &s.arrival_time,
                    departure_time: &s.departure_time,
                })
                .collect(),
        })
        .collect();
    serde_json::to_vec(&out).unwrap()
}

/// `/schedules/` plus the route id, percent-encoded where a path needs it.
fn target(route_id: &str) -> String {
    let mut t = String::from("/schedules/");
    for b in route_id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' {
            t.push(b as char);
        } else {
            t.push_str(&format!("%{b:02X}"));
        }
    }
    t
}

fn json_reply(r: &Reply) {
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.one("content-type"), "application/json");
}

#[test]
fn schedules_match_a_naive_join() {
    check_set(false, None);
    check_set(true, None);
}

#[test]
fn streamed_schedules_match_a_naive_join() {
    // Every body over 2 KB streamed: most routes here.
    check_set(true, Some("2000"));
}

/// Starts the example on a generated set (with `--stream-over`, if given) and checks every
/// route, an unknown one and gzip.
fn check_set(interleave: bool, stream_over: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let (trips, stops) = generate(interleave);
    write(dir.path(), &trips, &stops);
    let gtfs = dir.path().to_str().unwrap();
    let mut args = vec!["--gtfs", gtfs, "--listen", "127.0.0.1:0"];
    if let Some(n) = stream_over {
        args.extend(["--stream-over", n]);
    }
    let app = start(BIN, &args, &[]);
    let mut c = Conn::open(app.addr);
    let mut routes: Vec<&str> = trips.iter().map(|t| t.route_id.as_str()).collect();
    routes.dedup();
    routes.sort_unstable();
    routes.dedup();
    assert!(routes.len() >= 5, "{routes:?}");
    for route in &routes {
        let r = c.get(&target(route));
        json_reply(&r);
        let want = expected(&trips, &stops, route);
        assert_eq!(
            r.text(),
            std::str::from_utf8(&want).unwrap(),
            "route {route}"
        );
        assert!(serde_json::from_slice::<serde_json::Value>(&r.body).is_ok());
    }
    // The trip without stop times.
    let lonely = &trips[7];
    let body = c.get(&target(&lonely.route_id)).body;
    let all: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let trip = all
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["trip_id"] == lonely.trip_id.as_str())
        .unwrap();
    assert_eq!(trip["schedules"], serde_json::json!([]));

    let r = c.get("/schedules/no-such-route");
    json_reply(&r);
    assert_eq!(r.text(), "[]");

    // gzip when asked: the same JSON once decoded.
    let route = routes[0];
    let r = c.get_with(&target(route), &[("Accept-Encoding", "gzip")]);
    json_reply(&r);
    assert_eq!(r.one("content-encoding"), "gzip");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&r.body[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, expected(&trips, &stops, route));
    assert!(r.body.len() < plain.len());
    if stream_over.is_some() {
        assert!(plain.len() > 2000);
        assert!(r.all("content-length").is_empty(), "{:?}", r.headers);
    }
}

/// Runs the binary on `dir` and returns its log; it must fail without a panic.
fn fails(dir: &Path) -> String {
    let gtfs = dir.to_str().unwrap();
    let (status, log) = run_to_end(BIN, &["--gtfs", gtfs, "--listen", "127.0.0.1:0"], &[]);
    assert!(!status.success(), "{log}");
    assert!(!log.contains("panicked"), "{log}");
    log
}

const TRIPS_OK: &str = "route_id,service_id,trip_id\nR,S,t1\nR,S,t2\n";
const STOPS_HEADER: &str = "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n";

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let put = |name: &str, text: &str| fs::write(p.join(name), text).unwrap();

    // A missing file.
    put("trips.txt", TRIPS_OK);
    let log = fails(p);
    assert!(log.contains("stop_times.txt"), "{log}");

    // A missing column.
    put(
        "stop_times.txt",
        "trip_id,arrival_time,stop_id\nt1,01:00:00,A\n",
    );
    let log = fails(p);
    assert!(
        log.contains("stop_times.txt: line 1") && log.contains("departure_time"),
        "{log}"
    );

    // An unterminated quote, in the middle of the file and in the last column (the rest of the
    // file becomes one field).
    let rows = "t1,01:00:00,01:00:00,A,1\nt1,\"02:00:00,02:00:00,B,2\nt2,03:00:00,03:00:00,C,1\n";
    put("stop_times.txt", &format!("{STOPS_HEADER}{rows}"));
    let log = fails(p);
    assert!(log.contains("stop_times.txt: line 3"), "{log}");
    let rows = "t1,01:00:00,01:00:00,A,1\nt2,03:00:00,03:00:00,\"C\n";
    put(
        "stop_times.txt",
        &format!("trip_id,arrival_time,departure_time,stop_id\n{rows}x\n"),
    );
    let log = fails(p);
    assert!(log.contains("stop_times.txt: line 3"), "{log}");

    // A missing value.
    put("stop_times.txt", STOPS_HEADER);
    put("trips.txt", "route_id,service_id,trip_id\nR,S,t1\nR,S\n");
    let log = fails(p);
    assert!(log.contains("trips.txt: line 3"), "{log}");

    // Both files good: it starts.
    put("trips.txt", TRIPS_OK);
    let app = start(
        BIN,
        &["--gtfs", p.to_str().unwrap(), "--listen", "127.0.0.1:0"],
        &[],
    );
    assert_eq!(Conn::open(app.addr).get("/schedules/R").status, 200);
}
