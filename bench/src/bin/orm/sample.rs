//! The `Sample` model (mORMot's `TOrmSample`), the values mORMot fills its rows with, and the
//! checks that a row read back holds them.

use moria_orm::{model, CreateTime, ModTime};

model! {
    /// mORMot's `TOrmSample`.
    pub struct Sample {
        pub first_name: String,
        pub last_name: String,
        pub amount: f64,
        pub birth_date: String,
        pub last_change: ModTime,
        pub created_at: CreateTime,
    }
}

/// Row mORMot leaves with an empty FirstName.
const VOID_INDEX: usize = 150;

/// Days since 1970-01-01 to (year, month, day) — Howard Hinnant's `civil_from_days`.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// TDateTime day `n` (0 = 1899-12-30) as ISO-8601 text, as mORMot stores BirthDate.
pub(crate) fn iso_date(n: i64) -> String {
    let (y, m, d) = civil(n - 25_569);
    format!("{y:04}-{m:02}-{d:02}")
}

/// FirstName of row `i` (empty for [`VOID_INDEX`]).
pub(crate) fn first_name(i: usize) -> String {
    if i == VOID_INDEX {
        String::new()
    } else {
        format!("Namé {}", i + 1)
    }
}

/// Row `i` as mORMot's `RunWrites` fills it.
pub(crate) fn sample(i: usize) -> Sample {
    Sample {
        first_name: first_name(i),
        last_name: (i + 1).to_string(),
        amount: (i + 1) as f64 * 0.01,
        birth_date: iso_date(i as i64 + 1),
        ..Default::default()
    }
}

/// mORMot's `ValueCheck`: id, amount (as cents), LastChange, FirstName.
pub(crate) fn check(s: &Sample, i: usize, id: i64, start: i64) {
    assert_eq!(s.id, id, "row {i}: id");
    assert_eq!(
        (s.amount * 100.0).round() as usize,
        i + 1,
        "row {i}: amount"
    );
    assert!(s.last_change.0 >= start, "row {i}: LastChange");
    assert_eq!(s.first_name, first_name(i), "row {i}: FirstName");
}
