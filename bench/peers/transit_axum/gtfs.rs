//! The transit peer's loader: trips.txt and stop_times.txt read with the csv crate into serde
//! structs of `String` fields (columns by header name, extra columns ignored). A missing file,
//! a missing column or a malformed row is an error naming the file and its line.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Deserialize;

/// One row of trips.txt.
#[derive(Deserialize)]
pub struct Trip {
    /// The trip's route.
    pub route_id: String,
    /// The trip's service calendar.
    pub service_id: String,
    /// The trip's id, the key of its stop times.
    pub trip_id: String,
}

/// One row of stop_times.txt.
#[derive(Deserialize)]
pub struct StopTime {
    /// The trip this stop time belongs to.
    pub trip_id: String,
    /// Arrival, `HH:MM:SS` (may pass 24:00).
    pub arrival_time: String,
    /// Departure, `HH:MM:SS` (may pass 24:00).
    pub departure_time: String,
    /// The stop.
    pub stop_id: String,
}

/// Reads every row of trips.txt.
pub fn read_trips(path: &Path) -> Result<Vec<Trip>, String> {
    read(path)
}

/// Reads every row of stop_times.txt.
pub fn read_stop_times(path: &Path) -> Result<Vec<StopTime>, String> {
    read(path)
}

fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let name = path.display();
    let mut reader = csv::Reader::from_path(path).map_err(|e| format!("{name}: {e}"))?;
    let mut rows = Vec::new();
    for row in reader.deserialize() {
        rows.push(row.map_err(|e| match e.position() {
            Some(pos) => format!("{name}: line {}: {e}", pos.line()),
            None => format!("{name}: {e}"),
        })?);
    }
    Ok(rows)
}
