//! NIST SP 800-22-style smoke statistics on 100 MB of `rng` output, drawn through every path
//! (16 B and 1 KiB from the buffer, 64 KiB straight from the cipher, odd sizes across the
//! buffer's end, `u64`s): the frequency (monobit) test, the runs test and a chi-square over
//! byte values. Each statistic is turned into a z-score (or the chi-square's distance from its
//! mean in standard deviations) and must stay below 5: a false failure once in ~3.5 million
//! runs, while a stuck bit, a repeated block or a biased byte fails by orders of magnitude.

use moria_crypto::rng;

const TOTAL: usize = 100_000_000;
const LIMIT: f64 = 5.0;

/// 100 MB drawn in a cycle of request sizes.
fn sample() -> Vec<u8> {
    let mut data = vec![0u8; TOTAL];
    let sizes = [16, 1024, 65536, 7, 4099];
    let mut at = 0;
    for (i, &size) in sizes.iter().cycle().enumerate() {
        if at == TOTAL {
            break;
        }
        let end = (at + size).min(TOTAL);
        if i % 7 == 6 && end - at >= 8 {
            let word = rng::u64().unwrap().to_ne_bytes();
            data[at..at + 8].copy_from_slice(&word);
            at += 8;
        } else {
            rng::fill(&mut data[at..end]).unwrap();
            at = end;
        }
    }
    data
}

/// (ones, runs) of the bit sequence, each byte read from its least significant bit.
fn ones_and_runs(data: &[u8]) -> (u64, u64) {
    let mut ones = 0u64;
    let mut changes = 0u64;
    let mut last_bit = None;
    for chunk in data.chunks_exact(8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap());
        ones += u64::from(w.count_ones());
        // Transitions between neighbouring bits inside the word, then across the boundary.
        changes += u64::from(((w ^ (w >> 1)) & (u64::MAX >> 1)).count_ones());
        if let Some(previous) = last_bit {
            changes += u64::from(previous != (w & 1));
        }
        last_bit = Some(w >> 63);
    }
    (ones, changes + 1)
}

/// Frequency (monobit), SP 800-22 §2.1: S = #1 - #0 over n bits, z = |S| / sqrt(n).
fn monobit_z(ones: u64, n: f64) -> f64 {
    (2.0 * ones as f64 - n).abs() / n.sqrt()
}

/// Runs, SP 800-22 §2.3: z = |V - 2 n pi (1 - pi)| / (2 sqrt(n) pi (1 - pi)), where pi is the
/// proportion of ones (the test's prerequisite, |pi - 1/2| < 2 / sqrt(n), is checked apart).
fn runs_z(ones: u64, runs: u64, n: f64) -> f64 {
    let pi = ones as f64 / n;
    let spread = pi * (1.0 - pi);
    (runs as f64 - 2.0 * n * spread).abs() / (2.0 * n.sqrt() * spread)
}

#[test]
fn a_hundred_megabytes_pass_monobit_runs_and_byte_frequency() {
    let data = sample();
    let n = (data.len() * 8) as f64;
    let (ones, runs) = ones_and_runs(&data);

    let monobit = monobit_z(ones, n);
    assert!(monobit < LIMIT, "monobit z = {monobit:.2}");
    let pi = ones as f64 / n;
    assert!((pi - 0.5).abs() < 2.0 / n.sqrt(), "pi = {pi}");
    let runs = runs_z(ones, runs, n);
    assert!(runs < LIMIT, "runs z = {runs:.2}");

    // Byte frequency: chi-square with 255 degrees of freedom (mean 255, variance 510).
    let mut counts = [0u64; 256];
    for &b in &data {
        counts[usize::from(b)] += 1;
    }
    let expected = data.len() as f64 / 256.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    let chi2_z = (chi2 - 255.0) / 510f64.sqrt();
    assert!(
        chi2_z.abs() < LIMIT,
        "chi-square {chi2:.1} (z = {chi2_z:.2})"
    );
}

#[test]
fn the_statistics_catch_broken_generators() {
    let n = 8.0 * 65536.0;
    // Too many ones: fails monobit.
    let (ones, _) = ones_and_runs(&[0xf7u8; 65536]);
    assert!(monobit_z(ones, n) > LIMIT);
    // Balanced but alternating (0101...): passes monobit, fails runs.
    let (ones, runs) = ones_and_runs(&[0x55u8; 65536]);
    assert!(monobit_z(ones, n) < LIMIT);
    assert!(runs_z(ones, runs, n) > LIMIT);
    // Balanced with too few runs (0x0f: 1111 0000 ...): fails runs.
    let (ones, runs) = ones_and_runs(&[0x0fu8; 65536]);
    assert!(runs_z(ones, runs, n) > LIMIT);
}
