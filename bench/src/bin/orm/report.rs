//! Rates, medians and the printed tables.

use std::time::Duration;

/// Rows per second, as mORMot's `TPrecisionTimer.PerSec` computes it.
pub(crate) fn rate(rows: usize, d: Duration) -> u64 {
    (rows as u128 * 1_000_000 / d.as_micros().max(1)) as u64
}

/// The median of `v` (the upper one of an even count).
pub(crate) fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// A row of rates: one label, several columns (0 prints as `-`).
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) cols: Vec<u64>,
}

/// Prints `lines` under `title` with column `heads`, in mORMot's layout.
pub(crate) fn print_table(title: &str, heads: &[&str], lines: &[Line]) {
    println!("\n{title}");
    print!("{:<36}", "");
    for h in heads {
        print!("{h:>13}");
    }
    println!();
    for l in lines {
        print!("{:<36}", l.label);
        for c in &l.cols {
            match c {
                0 => print!("{:>13}", "-"),
                c => print!("{c:>13}"),
            }
        }
        println!();
    }
}
