//! Reading a GTFS directory into a [`Store`]: `trips.txt` then `stop_times.txt`, streamed one
//! record at a time through [`Splitter`] over moria-streams' `File`, columns found by name in
//! the header. Every failure names the file, and the line for a bad row.
//!
//! The parser is our own splitter, not the `csv` crate: against it (`bench/src/bin/csv_load`:
//! `csv_load --gtfs DIR --runs 9`, scale-1 data, 2 cores, medians of 9 alternating runs) it
//! parsed stop_times.txt in 142 ms to csv's 193 (0.73x) and did this whole load in 372 to 406
//! ms (0.92x), reading the same fields (unit tests in `split.rs` compare the two field for
//! field); it also refuses quoting the csv crate lets through (`"x"y`).

use std::path::{Path, PathBuf};

use moria_streams::File;

use crate::split::{SplitError, Splitter};
use crate::store::{Builder, StopTime, Store};

/// Columns trips.txt must have, in the order [`Table::fields`] returns them.
const TRIP_COLUMNS: [&str; 3] = ["route_id", "service_id", "trip_id"];
/// Columns stop_times.txt must have, in the order [`Table::fields`] returns them.
const STOP_TIME_COLUMNS: [&str; 4] = ["trip_id", "stop_id", "arrival_time", "departure_time"];

/// Reader buffer: large reads for a 100 MB file.
const BUF_SIZE: usize = 1 << 20;

/// A load failure, already worded.
pub type LoadError = String;

/// Loads `dir/trips.txt` and `dir/stop_times.txt`.
pub fn load(dir: &Path) -> Result<Store, LoadError> {
    let mut b = Builder::default();
    let mut trips = Table::open(dir.join("trips.txt"), &TRIP_COLUMNS)?;
    while trips.next()? {
        let [route, service, trip] = trips.fields();
        let route = trips.intern(&mut b, route)?;
        let service = trips.intern(&mut b, service)?;
        let trip = trips.intern(&mut b, trip)?;
        b.add_trip(route, service, trip);
    }
    let mut stops = Table::open(dir.join("stop_times.txt"), &STOP_TIME_COLUMNS)?;
    // Rows of one trip are usually together: remember the last trip id's key.
    let mut last: (Vec<u8>, Option<u32>) = (Vec::new(), None);
    while stops.next()? {
        let [trip, stop, arrival, departure] = stops.fields();
        if trip != last.0.as_slice() {
            last = (trip.to_vec(), b.trip_key(trip));
        }
        // Stop times of trips that trips.txt does not list are never served.
        let Some(key) = last.1 else { continue };
        let row = StopTime {
            stop_id: stops.intern_stop(&mut b, stop)?,
            arrival: stops.intern_time(&mut b, arrival)?,
            departure: stops.intern_time(&mut b, departure)?,
        };
        b.add_stop_time(key, row);
    }
    Ok(b.finish())
}

/// One CSV file being read: the splitter and where the wanted columns are.
struct Table<const N: usize> {
    path: PathBuf,
    records: Splitter<File>,
    columns: [usize; N],
    names: &'static [&'static str; N],
}

impl<const N: usize> Table<N> {
    /// Opens `path` and finds `names` in its header.
    fn open(path: PathBuf, names: &'static [&'static str; N]) -> Result<Self, LoadError> {
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut records = Splitter::new(file, BUF_SIZE);
        let has_header = records.next_record().map_err(|e| split_error(&path, e))?;
        let mut columns = [0; N];
        for (slot, name) in columns.iter_mut().zip(names) {
            *slot = (0..records.len())
                .position(|i| records.get(i) == Some(name.as_bytes()))
                .filter(|_| has_header)
                .ok_or_else(|| {
                    format!(
                        "{}: line 1: no column `{name}` in the header",
                        path.display()
                    )
                })?;
        }
        Ok(Table {
            path,
            records,
            columns,
            names,
        })
    }

    /// Reads the next row and checks its wanted fields; `false` at the end of the file.
    fn next(&mut self) -> Result<bool, LoadError> {
        if !self
            .records
            .next_record()
            .map_err(|e| split_error(&self.path, e))?
        {
            return Ok(false);
        }
        let line = self.line();
        // A record over several lines: legal in CSV, but never in an id or a time; it is
        // what an unterminated quote looks like.
        let spans = self.records.spans_lines();
        for (&col, name) in self.columns.iter().zip(self.names) {
            let value = self.records.get(col).ok_or_else(|| {
                self.error(
                    line,
                    &format!(
                        "no value for `{name}` (the row has {} fields)",
                        self.records.len()
                    ),
                )
            })?;
            if spans && value.iter().any(|&c| c == b'\n' || c == b'\r') {
                return Err(self.error(
                    line,
                    &format!("a line break inside `{name}` (an unterminated quote?)"),
                ));
            }
        }
        Ok(true)
    }

    /// The wanted fields of the row [`Table::next`] read and checked.
    fn fields(&self) -> [&[u8]; N] {
        self.columns
            .map(|col| self.records.get(col).unwrap_or_default())
    }

    /// The id of `raw` in `b`; an error at the current row when it is not UTF-8.
    fn intern(&self, b: &mut Builder, raw: &[u8]) -> Result<u32, LoadError> {
        b.intern(raw)
            .map_err(|e| self.error(self.line(), &format!("not UTF-8: {e}")))
    }

    /// The id of time `raw` in `b`; an error at the current row when it is not UTF-8.
    fn intern_time(&self, b: &mut Builder, raw: &[u8]) -> Result<u32, LoadError> {
        b.intern_time(raw)
            .map_err(|e| self.error(self.line(), &format!("not UTF-8: {e}")))
    }

    /// The id of stop id `raw` in `b`; an error at the current row when it is not UTF-8.
    fn intern_stop(&self, b: &mut Builder, raw: &[u8]) -> Result<u32, LoadError> {
        b.intern_stop(raw)
            .map_err(|e| self.error(self.line(), &format!("not UTF-8: {e}")))
    }

    /// The line the current record starts on.
    fn line(&self) -> u64 {
        self.records.line()
    }

    /// `path: line N: message`.
    fn error(&self, line: u64, message: &str) -> LoadError {
        format!("{}: line {line}: {message}", self.path.display())
    }
}

/// `path: line N: what` for a record that is not CSV, `path: error` for a failed read.
fn split_error(path: &Path, e: SplitError) -> LoadError {
    format!("{}: {e}", path.display())
}
