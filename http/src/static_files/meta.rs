//! Representation metadata: the entity tag and the media type.

use std::borrow::Cow;

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
        // Written by hand: `write!` costs several times more here, on every file answer.
        let mut tag = ETag {
            buf: [0u8; ETAG_MAX],
            len: 0,
        };
        if weak {
            tag.push(b"W/");
        }
        tag.push(b"\"");
        tag.push_hex(stat.size, 1);
        tag.push(b"-");
        // The two's complement bits, as `{:x}` prints a negative `i64`.
        tag.push_hex(stat.mtime_secs as u64, 1);
        tag.push(b".");
        tag.push_hex(u64::from(stat.mtime_nanos), 8);
        tag.push(b"-");
        tag.push_hex(stat.ino, 1);
        tag.push(suffix.as_bytes());
        tag.push(b"\"");
        tag
    }

    /// Appends `bytes` (cut at [`ETAG_MAX`]: the widest values and the suffixes used fit).
    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(ETAG_MAX - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    /// Appends `v` in lower-case hex, with at least `min_digits` digits.
    fn push_hex(&mut self, v: u64, min_digits: usize) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 16];
        let width = ((64 - v.leading_zeros() as usize).div_ceil(4))
            .max(min_digits)
            .max(1);
        for (i, d) in text[16 - width..].iter_mut().rev().enumerate() {
            *d = DIGITS[((v >> (4 * i)) & 0xf) as usize];
        }
        self.push(&text[16 - width..]);
    }

    /// The tag as sent, quotes included.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
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
    use crate::static_files::open::EntryKind;

    fn stat(size: u64, secs: i64, nanos: u32, ino: u64) -> Stat {
        Stat {
            kind: EntryKind::File,
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
        assert_eq!(
            big.as_str(),
            "W/\"ffffffffffffffff-8000000000000000.ffffffff-ffffffffffffffff-gzip\""
        );
        let zero = ETag::new(&stat(0, 0, 0, 0), "", false);
        assert_eq!(zero.as_str(), "\"0-0.00000000-0\"");
        // The same text as the format string it replaces.
        for (size, secs, nanos, ino) in [(1, -1, 1, 0x10), (0xabc, 1 << 40, 0x1234_5678, 7)] {
            let want = format!("\"{size:x}-{secs:x}.{nanos:08x}-{ino:x}-gz\"");
            let tag = ETag::new(&stat(size, secs, nanos, ino), "-gz", false);
            assert_eq!(tag.as_str(), want);
        }
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
