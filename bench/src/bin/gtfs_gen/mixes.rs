//! Chooses the route ids of the two load mixes from every route's answer size: the JSON-heavy
//! mix (about a hundred routes spread over every size, the biggest included, in seeded random
//! order) and the small mix (two dozen routes whose answers are 50–200 KB; when fewer exist at
//! this scale, the ones nearest that range).

use fastrand::Rng;

/// Routes in the JSON-heavy mix.
pub const HEAVY: usize = 100;
/// Routes in the small mix.
pub const SMALL: usize = 24;
/// The small mix's range of answer sizes, bytes.
pub const SMALL_RANGE: (u64, u64) = (50_000, 200_000);

/// Indexes of the heavy mix's routes: every route ranked by size, `HEAVY` of them taken at
/// even steps from the largest down, then shuffled.
pub fn heavy(rng: &mut Rng, sizes: &[u64]) -> Vec<usize> {
    let ranked = ranked(sizes);
    let n = HEAVY.min(ranked.len());
    let mut picked: Vec<usize> = (0..n).map(|i| ranked[i * ranked.len() / n]).collect();
    rng.shuffle(&mut picked);
    picked
}

/// Indexes of the small mix's routes: those in `SMALL_RANGE` (spread over it when more than
/// `SMALL`), else the nearest to it; largest first.
pub fn small(sizes: &[u64]) -> Vec<usize> {
    let (lo, hi) = SMALL_RANGE;
    let distance = |s: u64| lo.saturating_sub(s) + s.saturating_sub(hi);
    let mut by_distance: Vec<usize> = (0..sizes.len()).collect();
    by_distance.sort_by_key(|&i| (distance(sizes[i]), i));
    let inside = by_distance
        .iter()
        .filter(|&&i| distance(sizes[i]) == 0)
        .count();
    let mut picked: Vec<usize> = if inside > SMALL {
        let mut inside: Vec<usize> = by_distance[..inside].to_vec();
        inside.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
        (0..SMALL)
            .map(|k| inside[k * inside.len() / SMALL])
            .collect()
    } else {
        by_distance.into_iter().take(SMALL).collect()
    };
    picked.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    picked
}

fn ranked(sizes: &[u64]) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..sizes.len()).collect();
    ranked.sort_by_key(|&i| (std::cmp::Reverse(sizes[i]), i));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heavy_takes_the_largest_and_spreads() {
        let sizes: Vec<u64> = (0..300).map(|i| i * 1000).collect();
        let picked = heavy(&mut Rng::with_seed(1), &sizes);
        assert_eq!(picked.len(), HEAVY);
        assert!(picked.contains(&299));
        assert!(picked.iter().any(|&i| i < 10));
    }

    #[test]
    fn small_prefers_the_range() {
        let sizes: Vec<u64> = (0..100).map(|i| i * 5_000).collect();
        let picked = small(&sizes);
        assert_eq!(picked.len(), SMALL);
        assert!(picked
            .iter()
            .all(|&i| (50_000..=200_000).contains(&sizes[i])));
    }
}
