//! The loaded timetable in compact columns: every distinct string once (kept as its JSON
//! literal, quotes and escapes included, so serving is a copy), `u32` ids everywhere else, trips
//! grouped by route and stop times grouped by trip so each lookup is a contiguous slice.

use std::str::Utf8Error;

use hashbrown::HashMap;

/// A string's id in the [`Store`]'s string table.
pub type StrId = u32;

/// No trip key assigned yet.
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
    /// Index of this trip id's stop times in the offset table (trips sharing an id share it).
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
    /// JSON string literals back to back.
    text: Vec<u8>,
    /// `ends[i]`: where string `i` ends in `text` (it starts where string `i - 1` ends).
    ends: Vec<u32>,
    /// Sorted by name.
    routes: Vec<Route>,
    /// Grouped by route in `routes` order; file order within a route.
    trips: Vec<Trip>,
    /// Trip key `k`'s stop times: `stops[offsets[k]..offsets[k + 1]]`.
    offsets: Vec<u32>,
    /// Grouped by trip key; file order within a trip.
    stops: Vec<StopTime>,
}

impl Store {
    /// The trips of `route_id` in file order (empty for an unknown route).
    pub fn route(&self, route_id: &str) -> &[Trip] {
        match self
            .routes
            .binary_search_by(|r| r.name.as_ref().cmp(route_id))
        {
            Ok(i) => {
                let start = if i == 0 { 0 } else { self.routes[i - 1].end };
                &self.trips[start as usize..self.routes[i].end as usize]
            }
            Err(_) => &[],
        }
    }

    /// The stop times of `trip` in file order.
    pub fn stop_times(&self, trip: &Trip) -> &[StopTime] {
        let k = trip.key as usize;
        &self.stops[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// String `id` as a JSON literal (quoted and escaped).
    pub fn json(&self, id: StrId) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
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
    text: Vec<u8>,
    ends: Vec<u32>,
    /// Raw bytes → id; only while loading.
    ids: HashMap<Box<[u8]>, StrId>,
    trips: Vec<Trip>,
    /// String id → trip key (`NONE` for strings that are no trip id).
    key_of: Vec<u32>,
    keys: u32,
    stop_keys: Vec<u32>,
    stops: Vec<StopTime>,
}

impl Builder {
    /// The id of `raw`, adding it (escaped as JSON) when new; fails on invalid UTF-8.
    pub fn intern(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        if let Some(&id) = self.ids.get(raw) {
            return Ok(id);
        }
        let s = std::str::from_utf8(raw)?;
        // serde_json's own escaping; writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.text, s);
        let id = self.ends.len() as StrId;
        self.ends.push(self.text.len() as u32);
        self.ids.insert(raw.into(), id);
        Ok(id)
    }

    /// Adds a trip (in file order).
    pub fn add_trip(&mut self, route_id: StrId, service_id: StrId, trip_id: StrId) {
        let i = trip_id as usize;
        if self.key_of.len() <= i {
            self.key_of.resize(self.ends.len().max(i + 1), NONE);
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
        let id = *self.ids.get(raw)? as usize;
        self.key_of.get(id).copied().filter(|&k| k != NONE)
    }

    /// Adds a stop time of the trip with key `key` (in file order).
    pub fn add_stop_time(&mut self, key: u32, stop: StopTime) {
        self.stop_keys.push(key);
        self.stops.push(stop);
    }

    /// Groups the rows (stable counting sorts) and drops the load-time indexes.
    pub fn finish(self) -> Store {
        let Builder {
            text,
            ends,
            ids,
            trips,
            keys,
            stop_keys,
            stops,
            ..
        } = self;
        // Routes by name; each trip's route rank.
        let mut rank = vec![NONE; ends.len()];
        for t in &trips {
            rank[t.route_id as usize] = 0;
        }
        let mut names: Vec<(Box<str>, StrId)> = ids
            .into_iter()
            .filter(|&(_, id)| rank[id as usize] == 0)
            .map(|(raw, id)| (String::from_utf8_lossy(&raw).into(), id))
            .collect();
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
        let (stops, key_ends) = group(&stops, &stop_keys, keys as usize);
        let mut offsets = Vec::with_capacity(key_ends.len() + 1);
        offsets.push(0);
        offsets.extend(key_ends);
        Store {
            text,
            ends,
            routes,
            trips,
            offsets,
            stops,
        }
    }
}

/// Stable counting sort of `items` into `groups` groups, item `i` going to group `of[i]`;
/// returns the sorted items and each group's end.
fn group<T: Copy>(items: &[T], of: &[u32], groups: usize) -> (Vec<T>, Vec<u32>) {
    let mut next = vec![0u32; groups];
    for &g in of {
        next[g as usize] += 1;
    }
    let mut sum = 0;
    for n in next.iter_mut() {
        let count = *n;
        *n = sum;
        sum += count;
    }
    let mut out = items.to_vec();
    for (t, &g) in items.iter().zip(of) {
        out[next[g as usize] as usize] = *t;
        next[g as usize] += 1;
    }
    // After placing, `next[g]` is group g's end.
    (out, next)
}
