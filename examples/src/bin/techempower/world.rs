//! The `World` row as TFB serialises it, the `queries` parameter rule and random numbers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// Rows in the World table; ids and random numbers are in `1..=WORLD_ROWS`.
pub const WORLD_ROWS: i32 = 10_000;
/// Most rows one `/queries`, `/cached-queries` or `/updates` request asks for.
pub const MAX_QUERIES: usize = 500;

/// One World row: `{"id":..,"randomNumber":..}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct World {
    /// Row id, 1..=10000.
    pub id: i32,
    /// The row's number, 1..=10000.
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

/// TFB's rule for `queries`/`count`: missing or not an integer → 1, then clamped to 1..=500.
pub fn query_count(raw: Option<&str>) -> usize {
    let Some(s) = raw.map(str::trim) else {
        return 1;
    };
    match s.parse::<i64>() {
        Ok(n) => n.clamp(1, MAX_QUERIES as i64) as usize,
        // An integer too large for i64 is still above the maximum.
        Err(_)
            if !s.is_empty()
                && s.trim_start_matches('+')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            MAX_QUERIES
        }
        Err(_) => 1,
    }
}

/// A small generator for one request (xorshift64*), seeded from a process-wide sequence so
/// fibers share no state across a yield.
pub struct Rng(u64);

impl Rng {
    /// A generator with a fresh seed.
    pub fn new() -> Rng {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        static BASE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let base = *BASE.get_or_init(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x9E37_79B9_7F4A_7C15)
        });
        // splitmix64 of (base + n): distinct, well-mixed, never zero in practice.
        let mut z = base.wrapping_add(
            SEQ.fetch_add(1, Ordering::Relaxed)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// A number in `1..=WORLD_ROWS`: a random id or a new random number.
    pub fn world_number(&mut self) -> i32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 32) % WORLD_ROWS as u64) as i32 + 1
    }

    /// `n` random ids.
    pub fn ids(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.world_number()).collect()
    }
}

/// Gives every row a new number different from its old one; rows read twice get the same
/// new number, so what is answered is what is stored.
pub fn renumber(rows: &mut [World], rng: &mut Rng) {
    let mut seen: std::collections::HashMap<i32, i32> = std::collections::HashMap::new();
    for w in rows.iter_mut() {
        let n = *seen.entry(w.id).or_insert_with(|| loop {
            let n = rng.world_number();
            if n != w.random_number {
                break n;
            }
        });
        w.random_number = n;
    }
}

/// The distinct rows of `rows` sorted by id (the order updates take their locks in).
pub fn distinct_by_id(rows: &[World]) -> Vec<World> {
    let mut out = rows.to_vec();
    out.sort_unstable_by_key(|w| w.id);
    out.dedup_by_key(|w| w.id);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_count_follows_tfb_rules() {
        for (raw, n) in [
            (None, 1),
            (Some(""), 1),
            (Some("foo"), 1),
            (Some("0"), 1),
            (Some("-5"), 1),
            (Some("1"), 1),
            (Some("20"), 20),
            (Some(" 7 "), 7),
            (Some("500"), 500),
            (Some("501"), 500),
            (Some("99999999999999999999999"), 500),
            (Some("-99999999999999999999999"), 1),
            (Some("3.5"), 1),
            (Some("+4"), 4),
        ] {
            assert_eq!(query_count(raw), n, "{raw:?}");
        }
    }

    #[test]
    fn numbers_stay_in_range() {
        let mut rng = Rng::new();
        for _ in 0..100_000 {
            assert!((1..=WORLD_ROWS).contains(&rng.world_number()));
        }
    }

    #[test]
    fn renumber_changes_every_row_and_keeps_duplicates_equal() {
        let mut rows: Vec<World> = [(3, 1), (5, 2), (3, 1)]
            .into_iter()
            .map(|(id, random_number)| World { id, random_number })
            .collect();
        let old = rows.clone();
        renumber(&mut rows, &mut Rng::new());
        for (a, b) in rows.iter().zip(&old) {
            assert_ne!(a.random_number, b.random_number);
        }
        assert_eq!(rows[0], rows[2]);
        assert_eq!(distinct_by_id(&rows), vec![rows[0], rows[1]]);
    }
}
