//! Grouping rows without hashing: trips by route with a stable counting sort, stop times by trip
//! from the runs they came in (no copy when the file is already grouped by trip).

use crate::store::StopTime;

/// Each trip key's range of `stops`, given the runs of rows of one key: the rows stay where
/// they are when each key has one run (the file is grouped by trip, as usual); otherwise they
/// are copied in key order, runs of one key in file order.
pub fn by_trip(
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

/// Stable counting sort of `items` into `groups` groups, item `i` going to group `of[i]`;
/// returns the sorted items and each group's end.
pub fn group<T: Copy>(items: &[T], of: &[u32], groups: usize) -> (Vec<T>, Vec<u32>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(n: u32) -> StopTime {
        StopTime {
            stop_id: n,
            arrival: n,
            departure: n,
        }
    }

    fn ids(stops: &[StopTime], (start, end): (u32, u32)) -> Vec<u32> {
        stops[start as usize..end as usize]
            .iter()
            .map(|s| s.stop_id)
            .collect()
    }

    #[test]
    fn counting_sort_is_stable() {
        let (out, ends) = group(&[10, 11, 12, 13, 14], &[2, 0, 2, 0, 1], 4);
        assert_eq!(out, [11, 13, 14, 10, 12]);
        assert_eq!(ends, [2, 3, 5, 5]);
    }

    #[test]
    fn runs_in_place_or_copied() {
        // Grouped: key 1's rows, then key 0's; key 2 has none.
        let stops: Vec<StopTime> = (0..5).map(stop).collect();
        let (out, ranges) = by_trip(stops, vec![(1, 0), (0, 3)], 3);
        assert_eq!(ranges, [(3, 5), (0, 3), (0, 0)]);
        assert_eq!(ids(&out, ranges[1]), [0, 1, 2]);
        // Interleaved: 0 0 1 0 1 → key 0: rows 0 1 3, key 1: rows 2 4.
        let stops: Vec<StopTime> = (0..5).map(stop).collect();
        let runs = vec![(0, 0), (1, 2), (0, 3), (1, 4)];
        let (out, ranges) = by_trip(stops, runs, 2);
        assert_eq!(ids(&out, ranges[0]), [0, 1, 3]);
        assert_eq!(ids(&out, ranges[1]), [2, 4]);
    }
}
