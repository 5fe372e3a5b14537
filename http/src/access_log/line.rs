//! The access-log line formats: Common and Combined Log Format (client text escaped so that a
//! client cannot forge lines) and JSON lines.

use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{Entry, Format};
use crate::http_date::civil_from_days;

/// One line (no newline) for `e` at `now` in format `f`.
pub(super) fn format_line(f: Format, e: &Entry<'_>, now: SystemTime) -> String {
    let mut line = String::with_capacity(192);
    match f {
        Format::Common => common(&mut line, e, now),
        Format::Combined => {
            common(&mut line, e, now);
            line.push_str(" \"");
            escaped(&mut line, e.referer.unwrap_or(b"-"));
            line.push_str("\" \"");
            escaped(&mut line, e.user_agent.unwrap_or(b"-"));
            line.push('"');
        }
        Format::Json => json(&mut line, e, now),
    }
    line
}

/// `host - - [day/Mon/year:hh:mm:ss +0000] "request" status bytes`.
fn common(line: &mut String, e: &Entry<'_>, now: SystemTime) {
    let _ = write!(line, "{} - - [", e.peer.ip());
    let _ = clf_time(line, now);
    line.push_str("] \"");
    escaped(line, e.method);
    line.push(' ');
    escaped(line, e.target);
    line.push(' ');
    line.push_str(e.version);
    let _ = write!(line, "\" {} ", e.status);
    match e.bytes {
        Some(n) => {
            let _ = write!(line, "{n}");
        }
        None => line.push('-'),
    }
}

/// `{"time":"…Z","remote":…,"method":…,"target":…,"version":…,"status":…,"bytes":…,
/// "duration_us":…,"route":…,"request_id":…,"referer":…,"user_agent":…}`; absent fields are
/// `null`.
fn json(line: &mut String, e: &Entry<'_>, now: SystemTime) {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, mo, d) = civil_from_days(secs / 86_400);
    let s = secs % 86_400;
    let _ = write!(
        line,
        "{{\"time\":\"{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z\",\"remote\":\"{}\",\"method\":",
        s / 3600,
        s / 60 % 60,
        s % 60,
        e.peer.ip()
    );
    json_str(line, Some(e.method));
    line.push_str(",\"target\":");
    json_str(line, Some(e.target));
    let _ = write!(
        line,
        ",\"version\":\"{}\",\"status\":{},\"bytes\":",
        e.version, e.status
    );
    json_num(line, e.bytes);
    line.push_str(",\"duration_us\":");
    json_num(
        line,
        e.duration
            .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
    );
    line.push_str(",\"route\":");
    json_str(line, e.route.map(str::as_bytes));
    line.push_str(",\"request_id\":");
    json_str(line, e.request_id);
    line.push_str(",\"referer\":");
    json_str(line, e.referer);
    line.push_str(",\"user_agent\":");
    json_str(line, e.user_agent);
    line.push('}');
}

fn json_num(line: &mut String, n: Option<u64>) {
    match n {
        Some(n) => {
            let _ = write!(line, "{n}");
        }
        None => line.push_str("null"),
    }
}

/// A JSON string of `b` (invalid UTF-8 replaced), or `null`.
fn json_str(line: &mut String, b: Option<&[u8]>) {
    let Some(b) = b else {
        line.push_str("null");
        return;
    };
    line.push('"');
    for c in String::from_utf8_lossy(b).chars() {
        match c {
            '"' => line.push_str("\\\""),
            '\\' => line.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(line, "\\u{:04x}", c as u32);
            }
            c => line.push(c),
        }
    }
    line.push('"');
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
    let (y, m, d) = civil_from_days(secs / 86_400);
    let s = secs % 86_400;
    write!(
        out,
        "{d:02}/{}/{y}:{:02}:{:02}:{:02} +0000",
        MONTHS[m - 1],
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn entry() -> Entry<'static> {
        Entry {
            peer: "127.0.0.1:9".parse().unwrap(),
            method: b"GET",
            target: b"/a?b=\"1\"",
            version: "HTTP/1.1",
            status: 200,
            bytes: Some(5),
            referer: None,
            user_agent: Some(b"ua\n"),
            route: Some("/a"),
            request_id: Some(b"r-1"),
            duration: Some(Duration::from_micros(1500)),
        }
    }

    const T: u64 = 971_186_136;

    #[test]
    fn common_log_time() {
        let mut s = String::new();
        clf_time(&mut s, UNIX_EPOCH + Duration::from_secs(T)).unwrap();
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

    #[test]
    fn the_three_formats() {
        let now = UNIX_EPOCH + Duration::from_secs(T);
        let common =
            "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a?b=\\\"1\\\" HTTP/1.1\" 200 5";
        assert_eq!(format_line(Format::Common, &entry(), now), common);
        assert_eq!(
            format_line(Format::Combined, &entry(), now),
            format!("{common} \"-\" \"ua\\x0a\"")
        );
        let json = format_line(Format::Json, &entry(), now);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["time"], "2000-10-10T13:55:36Z");
        assert_eq!(v["target"], "/a?b=\"1\"");
        assert_eq!(v["duration_us"], 1500);
        assert_eq!(v["route"], "/a");
        assert_eq!(v["request_id"], "r-1");
        assert_eq!(v["referer"], serde_json::Value::Null);
        assert_eq!(v["user_agent"], "ua\n");
    }
}
