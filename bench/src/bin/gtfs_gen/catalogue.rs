//! The route catalogue of the GTFS generator: the MBTA's route ids by mode (rapid transit,
//! commuter rail, ferries, buses), each with its share of trips at scale 1 and the length of
//! its stop pattern. The few rail routes carry thousands of trips each (multi-megabyte
//! answers); the bus routes' trip counts follow a seeded log-normal skew (tens to hundreds).

use fastrand::Rng;

/// Trips at scale 1, the MBTA's count.
pub const TRIPS_AT_SCALE_1: f64 = 71_091.0;

/// Stop times at scale 1, the MBTA's count.
pub const STOP_TIMES_AT_SCALE_1: f64 = 1_790_905.0;

/// Kind of service, which sets the shape of a route's ids and stop times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Subway and light rail (`Red`, `Green-B`, `Mattapan`).
    Rapid,
    /// Commuter rail (`CR-Worcester`).
    Commuter,
    /// Ferries (`Boat-F1`).
    Ferry,
    /// Buses (`1`, `39`, `SL1`).
    Bus,
}

/// One route of the generated feed.
pub struct Route {
    /// The route id, as the MBTA spells it.
    pub id: String,
    /// Its kind of service.
    pub mode: Mode,
    /// Number of trips to generate.
    pub trips: usize,
    /// The stop ids of its pattern, in direction 0's order.
    pub stops: Vec<String>,
}

/// Rapid transit: id, trips at scale 1, stops in the pattern, first stop id.
const RAPID: &[(&str, f64, usize, u32)] = &[
    ("Red", 4300.0, 22, 70061),
    ("Orange", 3300.0, 20, 70001),
    ("Blue", 2900.0, 12, 70038),
    ("Green-B", 3700.0, 24, 70106),
    ("Green-C", 3300.0, 16, 70211),
    ("Green-D", 3500.0, 25, 70160),
    ("Green-E", 3100.0, 18, 70239),
    ("Mattapan", 1400.0, 8, 70261),
];

/// Commuter rail: id, trips at scale 1, stops in the pattern.
const COMMUTER: &[(&str, f64, usize)] = &[
    ("CR-Worcester", 330.0, 18),
    ("CR-Providence", 340.0, 14),
    ("CR-Franklin", 250.0, 17),
    ("CR-Fairmount", 270.0, 9),
    ("CR-Fitchburg", 230.0, 18),
    ("CR-Lowell", 240.0, 8),
    ("CR-Haverhill", 200.0, 14),
    ("CR-Newburyport", 260.0, 16),
    ("CR-Kingston", 160.0, 13),
    ("CR-Middleborough", 150.0, 11),
    ("CR-Needham", 140.0, 12),
    ("CR-Greenbush", 130.0, 12),
    ("CR-Foxboro", 40.0, 10),
];

/// Ferries: id, trips at scale 1, stops in the pattern.
const FERRY: &[(&str, f64, usize)] = &[
    ("Boat-F1", 110.0, 3),
    ("Boat-F4", 220.0, 2),
    ("Boat-F6", 60.0, 4),
    ("Boat-F7", 50.0, 3),
    ("Boat-EastBoston", 100.0, 2),
    ("Boat-Lynn", 40.0, 2),
];

/// Bus route ids (163 of them); their trips share what the other modes leave.
const BUS: &[&str] = &[
    "1", "4", "7", "8", "9", "10", "11", "14", "15", "16", "17", "18", "19", "21", "22", "23",
    "24", "26", "28", "29", "30", "31", "32", "33", "34", "34E", "35", "36", "37", "38", "39",
    "40", "41", "42", "43", "44", "45", "47", "51", "55", "57", "59", "60", "61", "62", "64", "65",
    "66", "67", "68", "69", "70", "71", "73", "74", "75", "76", "77", "78", "80", "83", "85", "86",
    "87", "88", "89", "90", "91", "92", "93", "94", "95", "96", "97", "99", "100", "101", "104",
    "105", "106", "108", "109", "110", "111", "112", "114", "116", "117", "119", "120", "121",
    "131", "132", "134", "136", "137", "171", "201", "202", "210", "211", "215", "216", "217",
    "220", "222", "225", "226", "230", "236", "238", "240", "245", "325", "326", "350", "351",
    "354", "411", "424", "426", "428", "429", "430", "434", "435", "436", "439", "441", "442",
    "448", "449", "450", "451", "455", "456", "459", "501", "504", "505", "553", "558", "608",
    "710", "712", "713", "714", "716", "741", "742", "743", "746", "747", "749", "751", "SL1",
    "SL2", "SL3", "SL4", "SL5", "SLW", "CT2", "CT3",
];

/// The routes for `scale` (every route keeps at least one trip), drawn from `rng`.
pub fn routes(rng: &mut Rng, scale: f64) -> Vec<Route> {
    let count = |base: f64| ((base * scale).round() as usize).max(1);
    let mut routes = Vec::new();
    for &(id, trips, len, first) in RAPID {
        let stops = (0..len as u32)
            .map(|i| (first + 2 * i).to_string())
            .collect();
        routes.push(route(id, Mode::Rapid, count(trips), stops));
    }
    for &(id, trips, len) in COMMUTER {
        let line = id.trim_start_matches("CR-").to_uppercase();
        let prefix = &line[..3];
        let stops = (0..len)
            .map(|i| format!("{prefix}-{:04}", i * 173))
            .collect();
        routes.push(route(id, Mode::Commuter, count(trips), stops));
    }
    for &(id, trips, len) in FERRY {
        let stops = (0..len).map(|i| format!("Boat-{}-{i}", &id[5..])).collect();
        routes.push(route(id, Mode::Ferry, count(trips), stops));
    }
    let rail: f64 = RAPID.iter().map(|r| r.1).sum::<f64>()
        + COMMUTER.iter().map(|r| r.1).sum::<f64>()
        + FERRY.iter().map(|r| r.1).sum::<f64>();
    let weights: Vec<f64> = BUS.iter().map(|_| log_normal(rng, 0.9)).collect();
    let total: f64 = weights.iter().sum();
    let trips: Vec<usize> = weights
        .iter()
        .map(|w| count((TRIPS_AT_SCALE_1 - rail) * w / total))
        .collect();
    let lengths: Vec<f64> = BUS.iter().map(|_| rng.f64() * 30.0 + 17.0).collect();
    // Bus pattern lengths stretched so that the expected stop times hit the MBTA's count.
    let expected = |routes: &[Route]| -> f64 {
        routes
            .iter()
            .map(|r| r.trips as f64 * used(r.stops.len()))
            .sum()
    };
    let wanted = STOP_TIMES_AT_SCALE_1 * scale - expected(&routes);
    let drawn: f64 = trips
        .iter()
        .zip(&lengths)
        .map(|(&t, &l)| t as f64 * 0.95 * l)
        .sum();
    let stretch = (wanted / drawn).max(0.1);
    for ((id, trips), len) in BUS.iter().zip(trips).zip(lengths) {
        let len = ((len * stretch).round() as usize).max(3);
        let stops = (0..len).map(|_| rng.u32(1..30_000).to_string()).collect();
        routes.push(route(id, Mode::Bus, trips, stops));
    }
    routes
}

/// Expected stop times of a trip on a pattern of `len` stops (a quarter of the trips run a
/// short turn of 60–100% of the pattern: see `trips`).
fn used(len: usize) -> f64 {
    if len <= 2 {
        len as f64
    } else {
        0.95 * len as f64
    }
}

fn route(id: &str, mode: Mode, trips: usize, stops: Vec<String>) -> Route {
    Route {
        id: id.to_string(),
        mode,
        trips,
        stops,
    }
}

/// exp(N(0, sigma)) by Box-Muller, clamped so that no bus route outgrows the rail routes.
fn log_normal(rng: &mut Rng, sigma: f64) -> f64 {
    let u1 = rng.f64().max(f64::MIN_POSITIVE);
    let u2 = rng.f64();
    let n = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    (sigma * n).exp().clamp(0.15, 4.0)
}
