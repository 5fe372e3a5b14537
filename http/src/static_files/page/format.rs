//! The listing's small texts: human sizes, UTC dates, an icon per kind of file, and names made
//! safe to show (bidirectional controls shown as their code points). Pure.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::http_date::civil_from_days;

/// `1023 B`, `1.5 KiB`, `12 MiB`: one decimal below 10, binary units.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// `(YYYY-MM-DD HH:MM, YYYY-MM-DDTHH:MM:SSZ)` in UTC.
pub(crate) fn date(t: SystemTime) -> (String, String) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    (
        format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}"),
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z"),
    )
}

/// The icon for the entry's kind (by its name's extension): the id of a symbol in `icons.svg`.
pub(crate) fn icon(name: &str, is_dir: bool) -> &'static str {
    if is_dir {
        return "dir";
    }
    let ext = name
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    match ext.as_str() {
        "zip" | "tar" | "gz" | "tgz" | "bz2" | "xz" | "zst" | "7z" | "rar" => "archive",
        "rs" | "c" | "h" | "cpp" | "py" | "js" | "ts" | "go" | "java" | "sh" | "html" | "css"
        | "json" | "toml" | "yaml" | "yml" | "xml" => "code",
        _ => match mime_guess::from_ext(&ext)
            .first()
            .as_ref()
            .map(|m| m.type_().as_str())
        {
            Some("image") => "image",
            Some("audio") => "audio",
            Some("video") => "video",
            _ => "file",
        },
    }
}

/// The name as shown: bidirectional controls (which could make `gpj.exe` read as `exe.jpg`)
/// and other invisible format characters written as `[U+XXXX]`.
pub(crate) fn visible_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
        {
            let _ = write!(out, "[U+{:04X}]", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(12 * 1024 * 1024 + 1), "12 MiB");
        assert_eq!(human_size(u64::MAX), "16 EiB");
    }

    #[test]
    fn dates_are_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(
            date(t),
            ("1994-11-06 08:49".into(), "1994-11-06T08:49:37Z".into())
        );
        assert_eq!(
            date(UNIX_EPOCH + Duration::from_secs(951_782_400)).0,
            "2000-02-29 00:00"
        );
    }

    #[test]
    fn icons_and_visible_names() {
        assert_eq!(icon("x", true), "dir");
        assert_eq!(icon("a.PNG", false), "image");
        assert_eq!(icon("a.tar.gz", false), "archive");
        assert_eq!(icon("b.mp3", false), "audio");
        assert_eq!(icon("notes", false), "file");
        assert_eq!(visible_name("a\u{202E}gpj.exe"), "a[U+202E]gpj.exe");
    }
}
