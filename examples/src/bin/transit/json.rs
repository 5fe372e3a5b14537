//! The `/schedules/:route_id` body, written straight into the response buffer: the strings are
//! stored as JSON literals already (serde_json's escaping, applied once at load), so each field is
//! one copy; the exact size is counted first so the buffer grows once.

use crate::store::{Store, Trip};

const TRIP_ID: &[u8] = b"{\"trip_id\":";
const SERVICE_ID: &[u8] = b",\"service_id\":";
const ROUTE_ID: &[u8] = b",\"route_id\":";
const SCHEDULES: &[u8] = b",\"schedules\":[";
const TRIP_END: &[u8] = b"]}";
const STOP_ID: &[u8] = b"{\"stop_id\":";
const ARRIVAL: &[u8] = b",\"arrival_time\":";
const DEPARTURE: &[u8] = b",\"departure_time\":";
const STOP_END: &[u8] = b"}";

/// Appends `trips` with their schedules to `out` as the challenge's compact JSON array.
pub fn write_route(store: &Store, trips: &[Trip], out: &mut Vec<u8>) {
    out.reserve_exact(size(store, trips));
    out.push(b'[');
    for (i, trip) in trips.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
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
    out.push(b']');
}

/// The exact length [`write_route`] appends.
fn size(store: &Store, trips: &[Trip]) -> usize {
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
