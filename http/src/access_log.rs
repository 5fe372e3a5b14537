//! The access log in combined log format, written through `log` under the target
//! [`ACCESS_LOG_TARGET`] at `info` level (formatted only when that target is enabled).

use std::fmt::{self, Write as _};
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

/// The `log` target of access-log lines.
pub const ACCESS_LOG_TARGET: &str = "moria_http::access";

/// What one access-log line says.
pub(crate) struct Entry<'a> {
    pub peer: SocketAddr,
    pub method: &'a [u8],
    pub target: &'a [u8],
    pub version: &'a str,
    pub status: u16,
    pub bytes: Option<u64>,
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
}

/// Whether access logging is on (the `log` target is enabled at info).
pub(crate) fn enabled() -> bool {
    log::log_enabled!(target: ACCESS_LOG_TARGET, log::Level::Info)
}

/// Logs one request in combined format:
/// `host - - [day/Mon/year:hh:mm:ss +0000] "request" status bytes "referer" "user-agent"`.
pub(crate) fn log(e: &Entry<'_>) {
    let mut line = String::with_capacity(160);
    let _ = write!(line, "{} - - [", e.peer.ip());
    let _ = clf_time(&mut line, SystemTime::now());
    line.push_str("] \"");
    escaped(&mut line, e.method);
    line.push(' ');
    escaped(&mut line, e.target);
    line.push(' ');
    line.push_str(e.version);
    let _ = write!(line, "\" {} ", e.status);
    match e.bytes {
        Some(n) => {
            let _ = write!(line, "{n}");
        }
        None => line.push('-'),
    }
    line.push_str(" \"");
    escaped(&mut line, e.referer.unwrap_or(b"-"));
    line.push_str("\" \"");
    escaped(&mut line, e.user_agent.unwrap_or(b"-"));
    line.push('"');
    log::info!(target: ACCESS_LOG_TARGET, "{line}");
}

/// Appends bytes with `"`, `\` and non-printable bytes escaped as `\xHH`, so a client cannot
/// forge log lines.
fn escaped(out: &mut String, b: &[u8]) {
    for &c in b {
        match c {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7e => out.push(c as char),
            _ => {
                let _ = write!(out, "\\x{c:02x}");
            }
        }
    }
}

/// Formats `t` as `10/Oct/2000:13:55:36 +0000` (UTC).
fn clf_time(out: &mut String, t: SystemTime) -> fmt::Result {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    write!(
        out,
        "{d:02}/{}/{y}:{:02}:{:02}:{:02} +0000",
        MONTHS[(m - 1) as usize],
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) — Howard Hinnant's algorithm.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn common_log_time() {
        let mut s = String::new();
        clf_time(&mut s, UNIX_EPOCH + Duration::from_secs(971_186_136)).unwrap();
        assert_eq!(s, "10/Oct/2000:13:55:36 +0000");
        let mut s = String::new();
        clf_time(&mut s, UNIX_EPOCH + Duration::from_secs(951_782_400)).unwrap();
        assert_eq!(s, "29/Feb/2000:00:00:00 +0000");
    }

    #[test]
    fn escaping_stops_forged_lines() {
        let mut s = String::new();
        escaped(&mut s, b"a\"b\n\\");
        assert_eq!(s, "a\\\"b\\x0a\\\\");
    }
}
