//! `Range: bytes=...` parsing against a known size (RFC 9110 §14.1.2): satisfiable ranges are
//! kept, overlapping or adjacent ones merged, too many refused.

/// What a Range header asks of a representation of known size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeOutcome {
    /// No usable Range header (absent, another unit, or invalid): send the whole body.
    Full,
    /// These inclusive `(first, last)` byte ranges, sorted and merged.
    Partial(Vec<(u64, u64)>),
    /// Nothing satisfiable, or more ranges than allowed: 416 with `Content-Range: bytes */size`.
    Unsatisfiable,
}

/// Resolves a Range header value against `size`, allowing at most `max_ranges` after merging.
pub fn parse_range(value: &[u8], size: u64, max_ranges: usize) -> RangeOutcome {
    let value = value.trim_ascii();
    let Some(eq) = value.iter().position(|&c| c == b'=') else {
        return RangeOutcome::Full;
    };
    if !value[..eq].trim_ascii().eq_ignore_ascii_case(b"bytes") {
        return RangeOutcome::Full;
    }
    let mut ranges = Vec::new();
    let mut any = false;
    for spec in value[eq + 1..].split(|&c| c == b',') {
        let spec = spec.trim_ascii();
        if spec.is_empty() {
            continue;
        }
        any = true;
        match resolve(spec, size) {
            Spec::Invalid => return RangeOutcome::Full,
            Spec::Unsatisfiable => {}
            Spec::Range(a, b) => ranges.push((a, b)),
        }
    }
    if !any {
        return RangeOutcome::Full;
    }
    if ranges.is_empty() {
        return RangeOutcome::Unsatisfiable;
    }
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    if merged.len() > max_ranges {
        return RangeOutcome::Unsatisfiable;
    }
    RangeOutcome::Partial(merged)
}

enum Spec {
    Invalid,
    Unsatisfiable,
    Range(u64, u64),
}

fn number(s: &[u8]) -> Option<u64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

fn resolve(spec: &[u8], size: u64) -> Spec {
    let Some(dash) = spec.iter().position(|&c| c == b'-') else {
        return Spec::Invalid;
    };
    let (first, last) = (spec[..dash].trim_ascii(), spec[dash + 1..].trim_ascii());
    if first.is_empty() {
        // suffix-range: the last N bytes
        return match number(last) {
            None => Spec::Invalid,
            Some(0) => Spec::Unsatisfiable,
            Some(_) if size == 0 => Spec::Unsatisfiable,
            Some(n) => Spec::Range(size - n.min(size), size - 1),
        };
    }
    let Some(a) = number(first) else {
        return Spec::Invalid;
    };
    let b = if last.is_empty() {
        u64::MAX
    } else {
        match number(last) {
            Some(b) if b >= a => b,
            _ => return Spec::Invalid,
        }
    };
    if a >= size {
        return Spec::Unsatisfiable;
    }
    Spec::Range(a, b.min(size - 1))
}

#[cfg(test)]
mod tests {
    use super::RangeOutcome::*;
    use super::*;

    fn p(v: &str, size: u64) -> RangeOutcome {
        parse_range(v.as_bytes(), size, 16)
    }

    #[test]
    fn single_ranges() {
        assert_eq!(p("bytes=0-499", 1000), Partial(vec![(0, 499)]));
        assert_eq!(p("bytes=500-", 1000), Partial(vec![(500, 999)]));
        assert_eq!(p("bytes=-200", 1000), Partial(vec![(800, 999)]));
        assert_eq!(p("bytes=-2000", 1000), Partial(vec![(0, 999)]));
        assert_eq!(p("bytes=900-5000", 1000), Partial(vec![(900, 999)]));
        assert_eq!(p("Bytes = 1-1", 10), Partial(vec![(1, 1)]));
    }

    #[test]
    fn invalid_headers_are_ignored() {
        for v in [
            "",
            "bytes",
            "items=0-1",
            "bytes=a-b",
            "bytes=5-1",
            "bytes=--1",
            "bytes=1",
            "bytes=,",
        ] {
            assert_eq!(p(v, 1000), Full, "{v:?}");
        }
    }

    #[test]
    fn unsatisfiable() {
        assert_eq!(p("bytes=1000-", 1000), Unsatisfiable);
        assert_eq!(p("bytes=-0", 1000), Unsatisfiable);
        assert_eq!(p("bytes=0-", 0), Unsatisfiable);
        assert_eq!(p("bytes=2000-3000, 5000-", 1000), Unsatisfiable);
    }

    #[test]
    fn unsatisfiable_parts_are_dropped() {
        assert_eq!(p("bytes=2000-3000, 0-0", 1000), Partial(vec![(0, 0)]));
    }

    #[test]
    fn overlapping_and_adjacent_ranges_merge() {
        assert_eq!(
            p("bytes=0-10, 5-20, 21-30, 50-60, -5", 100),
            Partial(vec![(0, 30), (50, 60), (95, 99)])
        );
        assert_eq!(
            p(
                "bytes=0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0",
                10
            ),
            Partial(vec![(0, 0)])
        );
    }

    #[test]
    fn too_many_ranges_are_refused() {
        let v: Vec<String> = (0..20).map(|i| format!("{}-{}", i * 10, i * 10)).collect();
        assert_eq!(p(&format!("bytes={}", v.join(",")), 1000), Unsatisfiable);
    }
}
