//! IMF-fixdate text (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) written into a fixed
//! array: the `Date` of every answer and the `Last-Modified` of every file answer. The
//! `httpdate` crate formats through `core::fmt` (and a `String` in `fmt_http_date`), several
//! times the cost of this on the static-file path; parsing stays with `httpdate`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate.
pub(crate) const LEN: usize = 29;

/// The last second an IMF-fixdate can show (9999-12-31 23:59:59); later times show as it.
const MAX_SECS: u64 = 253_402_300_799;

const WEEKDAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// `secs` after the epoch as an IMF-fixdate (clamped to the year 9999).
pub(crate) fn format(secs: u64) -> [u8; LEN] {
    let secs = secs.min(MAX_SECS);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    // 1970-01-01 was a Thursday.
    out[0..3].copy_from_slice(WEEKDAYS[(days % 7) as usize]);
    digits(&mut out[5..7], day);
    out[8..11].copy_from_slice(MONTHS[month - 1]);
    digits(&mut out[12..16], year);
    digits(&mut out[17..19], rem / 3_600);
    digits(&mut out[20..22], rem / 60 % 60);
    digits(&mut out[23..25], rem % 60);
    out
}

/// `t` as an IMF-fixdate (a time before the epoch as the epoch).
pub(crate) fn format_time(t: SystemTime) -> [u8; LEN] {
    format(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// `v` in decimal, right-aligned with leading zeros, in all of `out`.
fn digits(out: &mut [u8], mut v: u64) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// (year, month 1..=12, day 1..=31) of the day `days` after 1970-01-01: Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch.
pub(crate) fn civil_from_days(days: u64) -> (u64, usize, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + u64::from(month <= 2), month as usize, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn reference(secs: u64) -> String {
        httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs))
    }

    #[test]
    fn the_rfc_example_and_the_edges() {
        assert_eq!(&format(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(&format(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(&format(MAX_SECS), b"Fri, 31 Dec 9999 23:59:59 GMT");
        assert_eq!(format(u64::MAX), format(MAX_SECS), "clamped, not wrapped");
        assert_eq!(
            format_time(UNIX_EPOCH - Duration::from_secs(1)),
            format(0),
            "before the epoch: the epoch"
        );
    }

    #[test]
    fn agrees_with_httpdate_across_the_whole_range() {
        // Leap days, century years and a spread of seconds over every representable year.
        let mut cases = vec![
            951_782_400,
            951_868_799,
            4_107_542_400,
            4_107_628_800,
            946_684_800,
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(x % (MAX_SECS + 1));
        }
        for secs in cases {
            assert_eq!(
                std::str::from_utf8(&format(secs)).unwrap(),
                reference(secs),
                "{secs}"
            );
        }
    }
}
