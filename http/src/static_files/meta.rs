//! Representation metadata: the entity tag, the `Last-Modified` text and the media type.

use std::borrow::Cow;
use std::io::{Cursor, Write};

use super::open::Stat;

/// Longest entity tag produced: `W/"` + three 16-digit hex numbers, a dot, 8 digits, two
/// dashes, a suffix and the closing quote.
const ETAG_MAX: usize = 80;

/// A quoted entity tag held without allocating.
#[derive(Clone, Copy)]
pub(crate) struct ETag {
    buf: [u8; ETAG_MAX],
    len: usize,
}

impl ETag {
    /// A strong tag from the file's size, modification time (to the nanosecond) and inode, so
    /// a file replaced by rename with the same size and time still gets a new tag. `suffix`
    /// distinguishes encodings of the same file (`-gz`); `weak` marks a representation
    /// produced on the fly (not byte-for-byte stable).
    pub(crate) fn new(stat: &Stat, suffix: &str, weak: bool) -> ETag {
        let mut buf = [0u8; ETAG_MAX];
        let mut c = Cursor::new(&mut buf[..]);
        let w = if weak { "W/" } else { "" };
        // The widest values fit in ETAG_MAX, so the write cannot fail.
        let _ = write!(
            c,
            "{w}\"{:x}-{:x}.{:08x}-{:x}{suffix}\"",
            stat.size, stat.mtime_secs, stat.mtime_nanos, stat.ino
        );
        let len = c.position() as usize;
        ETag { buf, len }
    }

    /// The tag as sent, quotes included.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// Length of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
const HTTP_DATE_LEN: usize = 29;

/// An HTTP date as text, held without allocating.
pub(crate) struct HttpDateText {
    buf: [u8; HTTP_DATE_LEN + 3],
    len: usize,
}

impl HttpDateText {
    /// `t` as an IMF-fixdate.
    pub(crate) fn new(t: std::time::SystemTime) -> HttpDateText {
        let mut buf = [0u8; HTTP_DATE_LEN + 3];
        let mut c = Cursor::new(&mut buf[..]);
        let _ = write!(c, "{}", httpdate::HttpDate::from(t));
        let len = c.position() as usize;
        HttpDateText { buf, len }
    }

    /// The date text.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Media types sent with `charset=utf-8` besides `text/*`.
const UTF8_TYPES: [&str; 6] = [
    "application/javascript",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/manifest+json",
    "image/svg+xml",
];

/// The `Content-Type` for a file name, from its extension (`application/octet-stream` when
/// unknown); textual types get `; charset=utf-8`.
pub(crate) fn content_type(name: &str) -> Cow<'static, str> {
    let ext = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !stem.ends_with('/') => ext,
        _ => return Cow::Borrowed("application/octet-stream"),
    };
    let Some(mime) = mime_guess::from_ext(ext).first_raw() else {
        return Cow::Borrowed("application/octet-stream");
    };
    match mime {
        "text/html" => Cow::Borrowed("text/html; charset=utf-8"),
        "text/plain" => Cow::Borrowed("text/plain; charset=utf-8"),
        "text/css" => Cow::Borrowed("text/css; charset=utf-8"),
        "text/javascript" | "application/javascript" => {
            Cow::Borrowed("text/javascript; charset=utf-8")
        }
        m if m.starts_with("text/") || UTF8_TYPES.contains(&m) => {
            Cow::Owned(format!("{m}; charset=utf-8"))
        }
        m => Cow::Borrowed(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::static_files::open::Kind;

    fn stat(size: u64, secs: i64, nanos: u32, ino: u64) -> Stat {
        Stat {
            kind: Kind::File,
            size,
            mtime_secs: secs,
            mtime_nanos: nanos,
            ino,
            dev: 1,
        }
    }

    #[test]
    fn etags_change_with_size_time_inode_and_encoding() {
        let a = ETag::new(&stat(1312, 1_700_000_000, 5, 42), "", false);
        assert_eq!(a.as_str(), "\"520-6553f100.00000005-2a\"");
        let others = [
            ETag::new(&stat(1313, 1_700_000_000, 5, 42), "", false),
            ETag::new(&stat(1312, 1_700_000_000, 6, 42), "", false),
            ETag::new(&stat(1312, 1_700_000_000, 5, 43), "", false),
            ETag::new(&stat(1312, 1_700_000_000, 5, 42), "-gz", false),
        ];
        for o in others {
            assert_ne!(o.as_str(), a.as_str());
        }
        let w = ETag::new(&stat(1312, 1_700_000_000, 5, 42), "-gzip", true);
        assert!(w.as_str().starts_with("W/\""));
        let big = ETag::new(&stat(u64::MAX, i64::MIN, u32::MAX, u64::MAX), "-gzip", true);
        assert!(big.as_str().ends_with("-gzip\""), "{}", big.as_str());
    }

    #[test]
    fn http_dates() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(784_111_777);
        assert_eq!(
            HttpDateText::new(t).as_bytes(),
            b"Sun, 06 Nov 1994 08:49:37 GMT"
        );
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("a/b.TXT"), "text/plain; charset=utf-8");
        assert_eq!(content_type("x.json"), "application/json; charset=utf-8");
        assert_eq!(content_type("x.svg"), "image/svg+xml; charset=utf-8");
        assert_eq!(content_type("x.png"), "image/png");
        assert_eq!(content_type("x.unknownext"), "application/octet-stream");
        assert_eq!(content_type("Makefile"), "application/octet-stream");
        assert_eq!(content_type("dir/.hidden"), "application/octet-stream");
    }
}
