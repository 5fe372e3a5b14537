//! The loaded timetable in compact columns: interned strings, `u32` ids everywhere else, trips
//! grouped by route and stop times grouped by trip so each lookup is a contiguous slice (a
//! binary search over the routes, a range per trip).

use std::ops::Range;
use std::str::Utf8Error;

use crate::group::{by_trip, group};
use crate::strings::{Interner, StrId, Strings};

/// No trip key for this string.
const NONE: u32 = u32::MAX;

/// One trip: its three strings and the key of its stop times.
#[derive(Debug, Clone, Copy)]
pub struct Trip {
    /// `trip_id`.
    pub trip_id: StrId,
    /// `service_id`.
    pub service_id: StrId,
    /// `route_id`.
    pub route_id: StrId,
    /// Index of this trip id's stop times range (trips sharing an id share it).
    key: u32,
}

/// One stop time: three strings.
#[derive(Debug, Clone, Copy)]
pub struct StopTime {
    /// `stop_id`.
    pub stop_id: StrId,
    /// `arrival_time`, as written.
    pub arrival: StrId,
    /// `departure_time`, as written.
    pub departure: StrId,
}

/// A route: its raw id and where its trips end in [`Store::trips`] (they start where the
/// previous route's end).
struct Route {
    name: Box<str>,
    end: u32,
}

/// The timetable, read-only once built.
pub struct Store {
    strings: Strings,
    /// Sorted by name.
    routes: Vec<Route>,
    /// Grouped by route in `routes` order; file order within a route.
    trips: Vec<Trip>,
    /// Trip key `k`'s stop times: `stops[ranges[k].0..ranges[k].1]`.
    ranges: Vec<(u32, u32)>,
    /// Grouped by trip key; file order within a trip.
    stops: Vec<StopTime>,
}

impl Store {
    /// Where the trips of `route_id` are in [`Store::trips`] (empty for an unknown route).
    pub fn route(&self, route_id: &str) -> Range<usize> {
        match self
            .routes
            .binary_search_by(|r| r.name.as_ref().cmp(route_id))
        {
            Ok(i) => {
                let start = if i == 0 { 0 } else { self.routes[i - 1].end };
                start as usize..self.routes[i].end as usize
            }
            Err(_) => 0..0,
        }
    }

    /// The trips in `range` (of [`Store::route`]): one route's, in file order.
    pub fn trips(&self, range: Range<usize>) -> &[Trip] {
        &self.trips[range]
    }

    /// The stop times of `trip` in file order.
    pub fn stop_times(&self, trip: &Trip) -> &[StopTime] {
        let (start, end) = self.ranges[trip.key as usize];
        &self.stops[start as usize..end as usize]
    }

    /// String `id` as a JSON literal (quoted and escaped).
    pub fn json(&self, id: StrId) -> &[u8] {
        self.strings.json(id)
    }

    /// How many trips were loaded.
    pub fn trip_count(&self) -> usize {
        self.trips.len()
    }

    /// How many stop times were kept (those of known trips).
    pub fn stop_time_count(&self) -> usize {
        self.stops.len()
    }
}

/// Builds a [`Store`] row by row: trips first, then stop times.
#[derive(Default)]
pub struct Builder {
    strings: Interner,
    trips: Vec<Trip>,
    /// String id → trip key (`NONE` for strings that are no trip id).
    key_of: Vec<u32>,
    keys: u32,
    /// Runs of consecutive stop times of one trip: `(key, first row)`.
    runs: Vec<(u32, u32)>,
    stops: Vec<StopTime>,
}

impl Builder {
    /// The id of `raw` (see [`Interner::intern`]).
    pub fn intern(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        self.strings.intern(raw)
    }

    /// The id of time `raw` (see [`Interner::intern_time`]).
    pub fn intern_time(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        self.strings.intern_time(raw)
    }

    /// The id of stop id `raw` (see [`Interner::intern_stop`]).
    pub fn intern_stop(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        self.strings.intern_stop(raw)
    }

    /// Adds a trip (in file order).
    pub fn add_trip(&mut self, route_id: StrId, service_id: StrId, trip_id: StrId) {
        let i = trip_id as usize;
        if self.key_of.len() <= i {
            self.key_of.resize(self.strings.len().max(i + 1), NONE);
        }
        if self.key_of[i] == NONE {
            self.key_of[i] = self.keys;
            self.keys += 1;
        }
        self.trips.push(Trip {
            trip_id,
            service_id,
            route_id,
            key: self.key_of[i],
        });
    }

    /// The key of the trip with id `raw`; `None` when trips.txt has no such trip.
    pub fn trip_key(&self, raw: &[u8]) -> Option<u32> {
        let id = self.strings.get(raw)? as usize;
        self.key_of.get(id).copied().filter(|&k| k != NONE)
    }

    /// Adds a stop time of the trip with key `key` (in file order).
    pub fn add_stop_time(&mut self, key: u32, stop: StopTime) {
        if self.runs.last().is_none_or(|&(k, _)| k != key) {
            self.runs.push((key, self.stops.len() as u32));
        }
        self.stops.push(stop);
    }

    /// Groups the rows and drops the load-time indexes.
    pub fn finish(self) -> Store {
        let Builder {
            strings,
            trips,
            keys,
            runs,
            stops,
            ..
        } = self;
        // Routes by name; each trip's route rank.
        let mut rank = vec![NONE; strings.len()];
        for t in &trips {
            rank[t.route_id as usize] = 0;
        }
        let (strings, mut names) = strings.finish(|id| rank[id as usize] == 0);
        names.sort_unstable();
        for (r, (_, id)) in names.iter().enumerate() {
            rank[*id as usize] = r as u32;
        }
        let route_of: Vec<u32> = trips.iter().map(|t| rank[t.route_id as usize]).collect();
        let (trips, route_ends) = group(&trips, &route_of, names.len());
        let routes = names
            .into_iter()
            .zip(route_ends)
            .map(|((name, _), end)| Route { name, end })
            .collect();
        let (stops, ranges) = by_trip(stops, runs, keys as usize);
        Store {
            strings,
            routes,
            trips,
            ranges,
            stops,
        }
    }
}
