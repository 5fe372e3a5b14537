//! Tests of the generator: same seed same bytes, the feed's shape at a small scale, the MBTA's
//! headers, and answer sizes checked against an independent join of the written files.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use fastrand::Rng;

use super::*;

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap_or_default()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let (a, b, c) = (
        tempfile::tempdir(),
        tempfile::tempdir(),
        tempfile::tempdir(),
    );
    let (a, b, c) = (a.unwrap(), b.unwrap(), c.unwrap());
    generate(a.path(), 7, 0.01).unwrap();
    generate(b.path(), 7, 0.01).unwrap();
    generate(c.path(), 8, 0.01).unwrap();
    for name in [
        "trips.txt",
        "stop_times.txt",
        "routes_heavy.txt",
        "routes_small.txt",
    ] {
        assert_eq!(read(a.path(), name), read(b.path(), name), "{name}");
    }
    assert_ne!(
        read(a.path(), "stop_times.txt"),
        read(c.path(), "stop_times.txt")
    );
}

#[test]
fn shape_at_a_small_scale() {
    let dir = tempfile::tempdir().unwrap();
    let s = generate(dir.path(), 1, 0.05).unwrap();
    assert_eq!(s.routes, 190);
    let expected = 71_091.0 * 0.05;
    assert!((s.trips as f64 - expected).abs() < expected * 0.05, "{s:?}");
    let per_trip = s.stop_times as f64 / s.trips as f64;
    assert!(
        (20.0..30.0).contains(&per_trip),
        "{per_trip} stop times per trip"
    );
    let trips = read(dir.path(), "trips.txt");
    let stop_times = read(dir.path(), "stop_times.txt");
    assert_eq!(trips.lines().count(), s.trips + 1);
    assert_eq!(stop_times.lines().count(), s.stop_times + 1);
    assert!(stop_times.contains(",25:"), "times past 24:00");
    assert!(
        trips.contains("\"Kenmore, via Brookline Village\"")
            || trips.contains("\"Central Square, Cambridge\"")
    );
    assert!(trips.contains("53126110") || trips.lines().any(|l| l.len() > 60));
    assert_eq!(
        read(dir.path(), "routes_heavy.txt").lines().count(),
        mixes::HEAVY
    );
    assert_eq!(
        read(dir.path(), "routes_small.txt").lines().count(),
        mixes::SMALL
    );
    assert!(read(dir.path(), "generated.txt").contains("seed=1\nscale=0.05\n"));
}

#[test]
fn mbta_headers() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), 1, 0.001).unwrap();
    let first = |name| {
        read(dir.path(), name)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        first("trips.txt"),
        "route_id,service_id,trip_id,trip_headsign,trip_short_name,direction_id,block_id,shape_id,wheelchair_accessible,trip_route_type,route_pattern_id,bikes_allowed"
    );
    assert_eq!(
        first("stop_times.txt"),
        "trip_id,arrival_time,departure_time,stop_id,stop_sequence,stop_headsign,pickup_type,drop_off_type,timepoint,checkpoint_id,continuous_pickup,continuous_drop_off"
    );
}

/// The contract's JSON for every route, joined from the written files with the csv crate.
fn answers(dir: &Path) -> HashMap<String, String> {
    let s = |v: &str| serde_json::to_string(v).unwrap();
    let mut stops: HashMap<String, Vec<String>> = HashMap::new();
    let mut r = csv::Reader::from_path(dir.join("stop_times.txt")).unwrap();
    for row in r.records() {
        let row = row.unwrap();
        let item = format!(
            r#"{{"stop_id":{},"arrival_time":{},"departure_time":{}}}"#,
            s(&row[3]),
            s(&row[1]),
            s(&row[2])
        );
        stops.entry(row[0].to_string()).or_default().push(item);
    }
    let mut routes: HashMap<String, Vec<String>> = HashMap::new();
    let mut r = csv::Reader::from_path(dir.join("trips.txt")).unwrap();
    for row in r.records() {
        let row = row.unwrap();
        let schedules = stops.remove(&row[2]).unwrap_or_default().join(",");
        let trip = format!(
            r#"{{"trip_id":{},"service_id":{},"route_id":{},"schedules":[{schedules}]}}"#,
            s(&row[2]),
            s(&row[1]),
            s(&row[0])
        );
        routes.entry(row[0].to_string()).or_default().push(trip);
    }
    routes
        .into_iter()
        .map(|(k, v)| (k, format!("[{}]", v.join(","))))
        .collect()
}

#[test]
fn answer_sizes_match_an_independent_join() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::with_seed(3);
    let routes = catalogue::routes(&mut rng, 0.01);
    let trips = trips::trips(&mut rng, &routes);
    write::write_trips(dir.path(), &routes, &trips).unwrap();
    let (_, sizes) = write::write_stop_times(dir.path(), &routes, &trips).unwrap();
    let answers = answers(dir.path());
    for (route, size) in routes.iter().zip(sizes) {
        let answer = &answers[&route.id];
        assert!(answer.starts_with("[{\"trip_id\":"), "{answer}");
        assert_eq!(answer.len() as u64, size, "route {}", route.id);
    }
}
