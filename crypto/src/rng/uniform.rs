//! Uniform integers below a bound without modulo bias: Lemire's multiply-and-reject
//! ("Fast Random Integer Generation in an Interval", 2019), one word per draw, and a division
//! only in the rare case a draw lands in the biased strip.

use crate::error::Result;

/// Defines `$name(n, next)`: uniform in `0..n` (n > 0) from uniform `$word`s drawn by `next`.
macro_rules! below {
    ($name:ident, $word:ty, $wide:ty) => {
        pub(crate) fn $name(n: $word, mut next: impl FnMut() -> Result<$word>) -> Result<$word> {
            let bits = <$word>::BITS;
            let mut m = <$wide>::from(next()?) * <$wide>::from(n);
            if (m as $word) < n {
                // 2^bits mod n: the low products below it would make some results likelier.
                let threshold = n.wrapping_neg() % n;
                while (m as $word) < threshold {
                    m = <$wide>::from(next()?) * <$wide>::from(n);
                }
            }
            Ok((m >> bits) as $word)
        }
    };
}

below!(below_u32, u32, u64);
below!(below_u64, u64, u128);
#[cfg(test)]
below!(below_u8, u8, u16);

#[cfg(test)]
mod tests {
    use super::*;

    /// Over every possible 8-bit draw, each result below `n` is accepted equally often: the
    /// same code at 32 and 64 bits has no bias either.
    #[test]
    fn every_result_equally_often_over_all_8_bit_draws() {
        for n in 1..=u8::MAX {
            let mut counts = vec![0u32; usize::from(n)];
            for x in 0..=u8::MAX {
                let mut draws = [x].into_iter().chain(std::iter::repeat(u8::MAX));
                // A rejected draw is followed by 255, which is always accepted: count only
                // the draws that were accepted themselves.
                let mut used = 0;
                let r = below_u8(n, || {
                    used += 1;
                    Ok(draws.next().unwrap_or(u8::MAX))
                })
                .unwrap();
                if used == 1 {
                    counts[usize::from(r)] += 1;
                }
            }
            let first = counts[0];
            assert!(counts.iter().all(|&c| c == first), "n = {n}: {counts:?}");
            assert_eq!(first, 256 / u32::from(n), "n = {n}");
        }
    }

    #[test]
    fn a_draw_in_the_biased_strip_is_drawn_again() {
        // n = 3: 2^64 mod 3 = 1, so the draw 0 (low product 0) is rejected.
        let mut draws = [0u64, u64::MAX].into_iter();
        assert_eq!(below_u64(3, || Ok(draws.next().unwrap())).unwrap(), 2);
        let mut draws = [0u32, u32::MAX].into_iter();
        assert_eq!(below_u32(3, || Ok(draws.next().unwrap())).unwrap(), 2);
    }

    #[test]
    fn results_stay_below_the_bound() {
        for (n, x) in [
            (1u64, u64::MAX),
            (u64::MAX, u64::MAX),
            (10, u64::MAX),
            (10, 1 << 60),
        ] {
            assert!(below_u64(n, || Ok(x)).unwrap() < n);
        }
    }
}
