//! The `/schedules/:route_id` body. Strings are stored as JSON literals already (serde_json's
//! escaping, applied once at load), so each field is one copy. A small body is written straight
//! into the response buffer, sized exactly first; a large one (`--stream-over`) is streamed a
//! few trips at a time with its exact Content-Length, so a multi-megabyte route costs each
//! connection a small buffer instead of the whole body.

use std::io::{self, Read};
use std::ops::Range;
use std::sync::Arc;

use moria_http::Body;

use crate::store::{Store, Trip};

/// How much a stream prepares at a time (at least one trip).
const CHUNK: usize = 64 * 1024;

const TRIP_ID: &[u8] = b"{\"trip_id\":";
const SERVICE_ID: &[u8] = b",\"service_id\":";
const ROUTE_ID: &[u8] = b",\"route_id\":";
const SCHEDULES: &[u8] = b",\"schedules\":[";
const TRIP_END: &[u8] = b"]}";
const STOP_ID: &[u8] = b"{\"stop_id\":";
const ARRIVAL: &[u8] = b",\"arrival_time\":";
const DEPARTURE: &[u8] = b",\"departure_time\":";
const STOP_END: &[u8] = b"}";

/// The exact length of the JSON array of the trips in `range`.
pub fn size(store: &Store, range: Range<usize>) -> usize {
    let trips = store.trips(range);
    let per_trip = TRIP_ID.len() + SERVICE_ID.len() + ROUTE_ID.len() + SCHEDULES.len();
    let per_stop = STOP_ID.len() + ARRIVAL.len() + DEPARTURE.len() + STOP_END.len();
    let mut n = 2 + trips.len().saturating_sub(1);
    for trip in trips {
        n += per_trip + TRIP_END.len();
        n += [trip.trip_id, trip.service_id, trip.route_id]
            .map(|id| store.json(id).len())
            .iter()
            .sum::<usize>();
        let stops = store.stop_times(trip);
        n += stops.len().saturating_sub(1);
        for st in stops {
            n += per_stop
                + store.json(st.stop_id).len()
                + store.json(st.arrival).len()
                + store.json(st.departure).len();
        }
    }
    n
}

/// Appends the JSON array of the trips in `range` (`size` bytes, from [`size`]) to `out`.
pub fn write_route(store: &Store, range: Range<usize>, size: usize, out: &mut Vec<u8>) {
    out.reserve_exact(size);
    out.push(b'[');
    for (i, trip) in store.trips(range).iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_trip(store, trip, out);
    }
    out.push(b']');
}

/// The JSON array of the trips in `range` (`size` bytes, from [`size`]) as a streamed body.
pub fn stream_route(store: Arc<Store>, range: Range<usize>, size: usize) -> Body {
    let reader = RouteReader {
        store,
        start: range.start,
        next: range.start,
        end: range.end,
        buf: Vec::with_capacity(CHUNK * 2),
        pos: 0,
        opened: false,
        closed: false,
    };
    Body::reader(reader, Some(size as u64))
}

/// One trip's object, schedules included.
fn write_trip(store: &Store, trip: &Trip, out: &mut Vec<u8>) {
    out.extend_from_slice(TRIP_ID);
    out.extend_from_slice(store.json(trip.trip_id));
    out.extend_from_slice(SERVICE_ID);
    out.extend_from_slice(store.json(trip.service_id));
    out.extend_from_slice(ROUTE_ID);
    out.extend_from_slice(store.json(trip.route_id));
    out.extend_from_slice(SCHEDULES);
    for (j, st) in store.stop_times(trip).iter().enumerate() {
        if j > 0 {
            out.push(b',');
        }
        out.extend_from_slice(STOP_ID);
        out.extend_from_slice(store.json(st.stop_id));
        out.extend_from_slice(ARRIVAL);
        out.extend_from_slice(store.json(st.arrival));
        out.extend_from_slice(DEPARTURE);
        out.extend_from_slice(store.json(st.departure));
        out.extend_from_slice(STOP_END);
    }
    out.extend_from_slice(TRIP_END);
}

/// Reads a route's JSON, preparing about [`CHUNK`] bytes of trips at a time.
struct RouteReader {
    store: Arc<Store>,
    /// The route's first trip, the next to write, and the end of its trips.
    start: usize,
    next: usize,
    end: usize,
    /// Prepared bytes, read from `pos`.
    buf: Vec<u8>,
    pos: usize,
    /// Whether `[` and `]` were written.
    opened: bool,
    closed: bool,
}

impl RouteReader {
    /// Prepares the next bytes; leaves `buf` empty at the end.
    fn fill(&mut self) {
        self.buf.clear();
        self.pos = 0;
        if !self.opened {
            self.opened = true;
            self.buf.push(b'[');
        }
        let store = &*self.store;
        for trip in store.trips(self.next..self.end) {
            if self.buf.len() >= CHUNK {
                break;
            }
            if self.next > self.start {
                self.buf.push(b',');
            }
            write_trip(store, trip, &mut self.buf);
            self.next += 1;
        }
        if self.next == self.end && !self.closed {
            self.closed = true;
            self.buf.push(b']');
        }
    }
}

impl Read for RouteReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.buf.len() {
            self.fill();
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Builder, StopTime};

    /// A route of `trips` trips with three stop times each.
    fn store(trips: u32) -> Arc<Store> {
        let mut b = Builder::default();
        let route = b.intern(b"R").unwrap();
        for t in 0..trips {
            let id = b.intern(format!("trip \"{t}\"").as_bytes()).unwrap();
            b.add_trip(route, route, id);
        }
        for t in 0..trips {
            let key = b.trip_key(format!("trip \"{t}\"").as_bytes()).unwrap();
            for s in 0..3 {
                let stop = b.intern(format!("stop {s}").as_bytes()).unwrap();
                let time = b.intern_time(b"25:00:00").unwrap();
                let row = StopTime {
                    stop_id: stop,
                    arrival: time,
                    departure: time,
                };
                b.add_stop_time(key, row);
            }
        }
        Arc::new(b.finish())
    }

    #[test]
    fn streamed_equals_written() {
        for trips in [0, 1, 2, 700] {
            let store = store(trips);
            let range = store.route("R");
            let n = size(&store, range.clone());
            let mut written = Vec::new();
            write_route(&store, range.clone(), n, &mut written);
            assert_eq!(written.len(), n);
            let mut reader = RouteReader {
                store: store.clone(),
                start: range.start,
                next: range.start,
                end: range.end,
                buf: Vec::new(),
                pos: 0,
                opened: false,
                closed: false,
            };
            let mut streamed = Vec::new();
            reader.read_to_end(&mut streamed).unwrap();
            assert_eq!(streamed, written, "{trips} trips");
            let v: serde_json::Value = serde_json::from_slice(&written).unwrap();
            assert_eq!(v.as_array().map(Vec::len), Some(trips as usize));
        }
    }
}
