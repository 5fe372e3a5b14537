//! The loaded timetable in compact columns: every distinct string once (kept as its JSON
//! literal, quotes and escapes included, so serving is a copy), `u32` ids everywhere else, trips
//! grouped by route and stop times grouped by trip so each lookup is a contiguous slice.

use std::str::Utf8Error;

use hashbrown::HashMap;

/// A string's id in the [`Store`]'s string table.
pub type StrId = u32;

/// No trip key assigned yet (or no string for a time yet).
const NONE: u32 = u32::MAX;

/// Slots of the time table: `HH:MM:SS` with any two-digit hour.
const TIME_SLOTS: usize = 100 * 3600;

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
    /// Trip key `k`'s stop times: `stops[ranges[k].0..ranges[k].1]`.
    ranges: Vec<(u32, u32)>,
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
        let (start, end) = self.ranges[trip.key as usize];
        &self.stops[start as usize..end as usize]
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
    /// Runs of consecutive stop times of one trip: `(key, first row)`.
    runs: Vec<(u32, u32)>,
    stops: Vec<StopTime>,
    /// Seconds → string id of `HH:MM:SS` times: most time fields skip the hash map.
    times: Vec<u32>,
    /// Short stop ids only, keys inline (no pointer to follow): consulted before `ids`.
    stop_ids: HashMap<ShortKey, StrId>,
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

    /// The id of time `raw`: a table lookup for the usual `HH:MM:SS`, else [`Builder::intern`].
    pub fn intern_time(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        let Some(slot) = seconds(raw) else {
            return self.intern(raw);
        };
        if self.times.is_empty() {
            self.times = vec![NONE; TIME_SLOTS];
        }
        match self.times[slot] {
            NONE => {
                let id = self.intern(raw)?;
                self.times[slot] = id;
                Ok(id)
            }
            id => Ok(id),
        }
    }

    /// The id of stop id `raw`, through the stop ids' own map when it is short.
    pub fn intern_stop(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        let Some(key) = ShortKey::new(raw) else {
            return self.intern(raw);
        };
        if let Some(&id) = self.stop_ids.get(&key) {
            return Ok(id);
        }
        let id = self.intern(raw)?;
        self.stop_ids.insert(key, id);
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
        if self.runs.last().is_none_or(|&(k, _)| k != key) {
            self.runs.push((key, self.stops.len() as u32));
        }
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
            runs,
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
        let (stops, ranges) = by_trip(stops, runs, keys as usize);
        Store {
            text,
            ends,
            routes,
            trips,
            ranges,
            stops,
        }
    }
}

/// A string of up to 15 bytes held inline, zero-padded, with its length.
#[derive(Hash, PartialEq, Eq)]
struct ShortKey([u8; 16]);

impl ShortKey {
    /// `raw` inline; `None` when it is longer than 15 bytes.
    fn new(raw: &[u8]) -> Option<ShortKey> {
        let mut key = [0; 16];
        key.get_mut(..raw.len())?.copy_from_slice(raw);
        key[15] = u8::try_from(raw.len()).ok().filter(|&n| n < 16)?;
        Some(ShortKey(key))
    }
}

/// Each trip key's range of `stops`, given the runs of rows of one key: the rows stay where
/// they are when each key has one run (the file is grouped by trip, as usual); otherwise they
/// are copied in key order, runs of one key in file order.
fn by_trip(
    stops: Vec<StopTime>,
    runs: Vec<(u32, u32)>,
    keys: usize,
) -> (Vec<StopTime>, Vec<(u32, u32)>) {
    let end = |i: usize| runs.get(i + 1).map_or(stops.len() as u32, |r| r.1);
    let mut ranges = vec![(0, 0); keys];
    let mut grouped = true;
    for (i, &(key, start)) in runs.iter().enumerate() {
        let r = &mut ranges[key as usize];
        // A run is never empty: a non-empty range means the key was seen before.
        if r.1 > r.0 {
            grouped = false;
            break;
        }
        *r = (start, end(i));
    }
    if grouped {
        return (stops, ranges);
    }
    let mut order: Vec<(u32, u32, u32)> = runs
        .iter()
        .enumerate()
        .map(|(i, &(key, start))| (key, start, end(i)))
        .collect();
    order.sort_by_key(|r| r.0);
    let mut out = Vec::with_capacity(stops.len());
    ranges.fill((0, 0));
    for (key, start, end) in order {
        let r = &mut ranges[key as usize];
        if r.1 == r.0 {
            r.0 = out.len() as u32;
        }
        out.extend_from_slice(&stops[start as usize..end as usize]);
        r.1 = out.len() as u32;
    }
    (out, ranges)
}

/// `HH:MM:SS` (two-digit fields, minutes and seconds below 60) as seconds; `None` for any
/// other text, so that each slot stands for one spelling.
fn seconds(raw: &[u8]) -> Option<usize> {
    let &[h1, h2, b':', m1, m2, b':', s1, s2] = raw else {
        return None;
    };
    let d = |c: u8| c.is_ascii_digit().then(|| usize::from(c - b'0'));
    let (h, m, s) = (
        d(h1)? * 10 + d(h2)?,
        d(m1)? * 10 + d(m2)?,
        d(s1)? * 10 + d(s2)?,
    );
    (m < 60 && s < 60).then_some(h * 3600 + m * 60 + s)
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
