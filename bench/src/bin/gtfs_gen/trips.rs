//! The trips of the generated feed: for every route, its trips with MBTA-shaped ids, service
//! ids, headsigns, directions and blocks, and what their stop times will be (start time, the
//! slice of the route's stop pattern, a seed for the rest). Trip numbers are unique and in no
//! particular order, so a route's trips in file order are not in trip id order.

use fastrand::Rng;

use crate::catalogue::{Mode, Route};

/// One trip: the trips.txt row plus the plan of its stop times.
pub struct Trip {
    /// Index of its route in the catalogue.
    pub route: usize,
    /// The trip id.
    pub id: String,
    /// The service id.
    pub service_id: String,
    /// The headsign (a few contain commas, so the file quotes them).
    pub headsign: String,
    /// 0 or 1; 1 runs the pattern backwards.
    pub direction: u8,
    /// The block id.
    pub block_id: String,
    /// First stop time, in seconds after midnight of the service day (may pass 24:00).
    pub start: u32,
    /// First index into the route's stop pattern.
    pub first_stop: usize,
    /// Number of stops, 0 for the few trips without stop times.
    pub stops: usize,
    /// Seed of the trip's own stop-time details.
    pub seed: u64,
}

/// Long suffixes of rapid-transit trip ids, as the MBTA builds them during diversions.
const SUFFIXES: &[&str] = &[
    "KenLechSuspendDKenmoreRiversideLechUnionSuspendDNoGLX",
    "AlewifeBraintreeShuttleJFKUMassNorthQuincyWeekend",
    "OakGroveForestHillsWellingtonMalden",
    "WonderlandBowdoinAirportSuspendMaverick",
    "HeathStreetNortheasternCopleyPrudential",
    "BostonCollegeKenmoreBlandfordStreetWeekday",
    "ClevelandCircleCoolidgeCornerSaintMarysStreet",
    "AshmontMattapanTrolleyCedarGroveMilton",
];

/// Places for headsigns.
const PLACES: &[&str] = &[
    "Harvard",
    "Dudley",
    "Ashmont",
    "Braintree",
    "Alewife",
    "Forest Hills",
    "Oak Grove",
    "Wonderland",
    "Bowdoin",
    "Kenmore",
    "Union Square",
    "Medford/Tufts",
    "South Station",
    "North Station",
    "Back Bay",
    "Kenmore, via Brookline Village",
    "Central Square, Cambridge",
    "Malden Center",
    "Wellington",
    "Quincy Center",
    "Mattapan",
    "Hingham",
    "Long Wharf",
    "Worcester",
    "Providence",
    "Lowell",
    "Haverhill",
    "Newburyport",
    "Kingston",
    "Needham Heights",
];

/// The trips of every route, route by route, each route's trips by service and start time.
pub fn trips(rng: &mut Rng, routes: &[Route]) -> Vec<Trip> {
    let total: usize = routes.iter().map(|r| r.trips).sum();
    let offset = rng.u64(0..20_000_000);
    let mut all = Vec::with_capacity(total);
    let mut n = 0u64;
    for (ri, route) in routes.iter().enumerate() {
        let services = services(route);
        let heads = [place(rng), place(rng)];
        let mut these: Vec<Trip> = (0..route.trips)
            .map(|_| {
                n += 1;
                let number = 50_000_000 + (n * 7919 + offset) % 20_000_000;
                trip(rng, ri, route, number, &services, heads)
            })
            .collect();
        these.sort_by(|a, b| (&a.service_id, a.start).cmp(&(&b.service_id, b.start)));
        all.extend(these);
    }
    for (i, t) in all.iter_mut().enumerate() {
        if i % 2000 == 1999 {
            t.stops = 0;
        }
    }
    all
}

fn trip(
    rng: &mut Rng,
    ri: usize,
    route: &Route,
    number: u64,
    services: &[String],
    heads: [&str; 2],
) -> Trip {
    let len = route.stops.len();
    let (first_stop, stops) = if len <= 2 || rng.u8(0..4) != 0 {
        (0, len)
    } else {
        let stops = rng.usize((len * 3 / 5).max(2)..len);
        (rng.usize(0..=len - stops), stops)
    };
    let direction = rng.u8(0..2);
    let id = match route.mode {
        Mode::Rapid if rng.bool() => format!("{number}-{}", SUFFIXES[rng.usize(..SUFFIXES.len())]),
        Mode::Rapid | Mode::Bus => number.to_string(),
        Mode::Commuter => format!("CR-{number}-{}", rng.u16(100..2400)),
        Mode::Ferry => format!("Boat-{}-{number}-Weekday", &route.id[5..]),
    };
    Trip {
        route: ri,
        id,
        service_id: services[rng.usize(..services.len())].clone(),
        headsign: heads[direction as usize].to_string(),
        direction,
        block_id: format!(
            "{}-{}",
            route.id.chars().take(3).collect::<String>(),
            rng.u16(1..300)
        ),
        start: rng.u32(4 * 3600 + 1800..25 * 3600 + 1800) / 60 * 60,
        first_stop,
        stops,
        seed: rng.u64(..),
    }
}

fn place(rng: &mut Rng) -> &'static str {
    PLACES[rng.usize(..PLACES.len())]
}

/// The service ids a route's trips run on, by mode.
fn services(route: &Route) -> Vec<String> {
    let days = ["Weekday", "Saturday", "Sunday"];
    match route.mode {
        Mode::Rapid => [
            "RTL424-2-Wdy-02",
            "RTL424-2-Sa-02",
            "RTL424-2-Su-02",
            "canonical",
        ]
        .map(String::from)
        .to_vec(),
        Mode::Commuter => days.map(|d| format!("CR-{d}-Fall-24")).to_vec(),
        Mode::Ferry => days.map(|d| format!("Boat-{d}-Fall-24")).to_vec(),
        Mode::Bus => ["hbc44011", "hba44016", "hbb44017"]
            .iter()
            .zip(days)
            .map(|(g, d)| format!("BUS424-{g}-{d}-02"))
            .collect(),
    }
}
