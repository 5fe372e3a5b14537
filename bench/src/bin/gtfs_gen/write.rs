//! Writes the generated feed: trips.txt (route by route) and stop_times.txt (trip by trip in
//! trip id order, as the MBTA's file is), with the MBTA's column sets, headsigns quoted. While
//! writing it adds up the size of every route's `/schedules/:route_id` answer in the contract's
//! compact JSON shape, which the load mixes are chosen from.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use fastrand::Rng;

use crate::catalogue::{Mode, Route};
use crate::trips::Trip;

/// trips.txt's header, the MBTA's columns.
pub const TRIPS_HEADER: &str = "route_id,service_id,trip_id,trip_headsign,trip_short_name,direction_id,block_id,shape_id,wheelchair_accessible,trip_route_type,route_pattern_id,bikes_allowed";

/// stop_times.txt's header, the MBTA's columns.
pub const STOP_TIMES_HEADER: &str = "trip_id,arrival_time,departure_time,stop_id,stop_sequence,stop_headsign,pickup_type,drop_off_type,timepoint,checkpoint_id,continuous_pickup,continuous_drop_off";

/// Writes trips.txt into `dir`.
pub fn write_trips(dir: &Path, routes: &[Route], trips: &[Trip]) -> io::Result<()> {
    let mut w = BufWriter::new(File::create(dir.join("trips.txt"))?);
    writeln!(w, "{TRIPS_HEADER}")?;
    for t in trips {
        let r = &routes[t.route];
        let short = if r.mode == Mode::Commuter {
            &t.id[t.id.len() - 3..]
        } else {
            ""
        };
        let bikes = u8::from(r.mode != Mode::Rapid);
        writeln!(
            w,
            "{},{},{},{},{short},{},{},{}{:04},1,,{}-_-{},{bikes}",
            r.id,
            t.service_id,
            t.id,
            quoted(&t.headsign),
            t.direction,
            t.block_id,
            t.route % 100,
            t.first_stop * 10 + t.stops,
            r.id,
            t.direction,
        )?;
    }
    w.flush()
}

/// Writes stop_times.txt into `dir`; returns the rows written and, per route, the size in
/// bytes of its JSON answer.
pub fn write_stop_times(
    dir: &Path,
    routes: &[Route],
    trips: &[Trip],
) -> io::Result<(usize, Vec<u64>)> {
    let mut w = BufWriter::new(File::create(dir.join("stop_times.txt"))?);
    writeln!(w, "{STOP_TIMES_HEADER}")?;
    let mut order: Vec<usize> = (0..trips.len()).collect();
    order.sort_by(|&a, &b| trips[a].id.cmp(&trips[b].id));
    let mut rows = 0;
    let mut sizes: Vec<u64> = vec![2; routes.len()];
    let mut first_of_route = vec![true; routes.len()];
    for &ti in &order {
        let t = &trips[ti];
        let r = &routes[t.route];
        let mut json = trip_json_len(t, r);
        let mut rng = Rng::with_seed(t.seed);
        let mut now = t.start;
        for seq in 0..t.stops {
            let i = if t.direction == 0 {
                t.first_stop + seq
            } else {
                t.first_stop + t.stops - 1 - seq
            };
            let stop = &r.stops[i];
            let arrival = time(now);
            let dwell = if r.mode == Mode::Commuter && seq > 0 && rng.u8(0..4) == 0 {
                60
            } else {
                0
            };
            let departure = time(now + dwell);
            let headsign = if r.mode == Mode::Rapid && rng.u8(0..20) == 0 {
                quoted("Kenmore, via Copley")
            } else {
                String::new()
            };
            let pickup = u8::from(seq + 1 == t.stops);
            let drop_off = u8::from(seq == 0);
            let timepoint = u8::from(r.mode != Mode::Bus || rng.u8(0..4) == 0);
            let checkpoint = if r.mode == Mode::Bus && timepoint == 1 {
                "hhgat"
            } else {
                ""
            };
            let continuous = if r.mode == Mode::Bus { "1" } else { "" };
            writeln!(
                w,
                "{},{arrival},{departure},{stop},{},{headsign},{pickup},{drop_off},{timepoint},{checkpoint},{continuous},{continuous}",
                t.id,
                seq + 1,
            )?;
            json += schedule_json_len(stop, &arrival, &departure) + u64::from(seq > 0);
            now += dwell + step(&mut rng, r.mode);
            rows += 1;
        }
        let first = &mut first_of_route[t.route];
        sizes[t.route] += json + u64::from(!*first);
        *first = false;
    }
    w.flush()?;
    Ok((rows, sizes))
}

/// Seconds to the next stop, by mode.
fn step(rng: &mut Rng, mode: Mode) -> u32 {
    match mode {
        Mode::Rapid => rng.u32(60..180),
        Mode::Bus => 60 * rng.u32(1..5),
        Mode::Commuter => 60 * rng.u32(3..9),
        Mode::Ferry => 60 * rng.u32(10..26),
    }
}

/// `HH:MM:SS`, hours past 24 kept.
fn time(secs: u32) -> String {
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// A CSV field in double quotes, inner quotes doubled.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Bytes of a JSON string literal as serde_json writes it.
fn json_str_len(s: &str) -> u64 {
    serde_json::to_string(s).map_or(0, |j| j.len() as u64)
}

/// Bytes of a trip's object without its schedule items:
/// `{"trip_id":…,"service_id":…,"route_id":…,"schedules":[]}`.
fn trip_json_len(t: &Trip, r: &Route) -> u64 {
    let fixed = r#"{"trip_id":,"service_id":,"route_id":,"schedules":[]}"#.len() as u64;
    fixed + json_str_len(&t.id) + json_str_len(&t.service_id) + json_str_len(&r.id)
}

/// Bytes of one schedule item: `{"stop_id":…,"arrival_time":…,"departure_time":…}`.
fn schedule_json_len(stop: &str, arrival: &str, departure: &str) -> u64 {
    let fixed = r#"{"stop_id":,"arrival_time":,"departure_time":}"#.len() as u64;
    fixed + json_str_len(stop) + json_str_len(arrival) + json_str_len(departure)
}
