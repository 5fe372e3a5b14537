//! `respond_stream` (Mordor's respondStream): serves any seekable source of known size with
//! HEAD, single and multiple byte ranges and If-Range; a file source keeps the zero-copy path.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::limits::DEFAULT_MAX_RANGES;
use crate::method::Method;
use crate::range::{parse_range, RangeOutcome};
use crate::request::Request;
use crate::response::{BodyKind, Response};
use crate::source::Ranges;
pub use crate::source::{ReadSeek, Source};

/// What `respond_stream` needs to know about the representation.
#[derive(Debug, Clone, Copy)]
pub struct StreamInfo<'a> {
    /// Size in bytes.
    pub size: u64,
    /// Content-Type of the whole representation.
    pub content_type: &'a str,
    /// Entity tag, quoted (`"abc"` or `W/"abc"`), if any.
    pub etag: Option<&'a str>,
    /// Last modification time, if known.
    pub last_modified: Option<SystemTime>,
    /// Most ranges served after merging (default [`DEFAULT_MAX_RANGES`]).
    pub max_ranges: usize,
}

impl<'a> StreamInfo<'a> {
    /// A representation of `size` bytes of `content_type`.
    pub fn new(size: u64, content_type: &'a str) -> Self {
        StreamInfo {
            size,
            content_type,
            etag: None,
            last_modified: None,
            max_ranges: DEFAULT_MAX_RANGES,
        }
    }
}

/// Fills `res` to serve `source` as `info` describes: 200 with the whole body, 206 with one
/// range or a multipart/byteranges body, or 416; HEAD gets the same headers (the connection
/// never sends a HEAD body). Range applies to GET only (RFC 9110 §14.2), and only when
/// If-Range, if present, still matches.
pub fn respond_stream(
    req: &Request<'_>,
    res: &mut Response,
    source: impl Into<Source>,
    info: &StreamInfo<'_>,
) -> io::Result<()> {
    let source = source.into();
    res.header("Accept-Ranges", "bytes");
    if let Some(etag) = info.etag {
        res.header("ETag", etag);
    }
    if let Some(t) = info.last_modified {
        res.header("Last-Modified", crate::http_date::format_time(t));
    }
    let outcome = match req.header("range") {
        Some(v) if req.method() == Method::Get && if_range_holds(req, info) => {
            parse_range(v, info.size, info.max_ranges)
        }
        _ => RangeOutcome::Full,
    };
    match outcome {
        RangeOutcome::Full => {
            res.status(200).content_type(info.content_type);
            res.body = body_of(source, 0, info.size)?;
        }
        RangeOutcome::Unsatisfiable => {
            res.status(416)
                .header("Content-Range", format!("bytes */{}", info.size));
            res.body = BodyKind::Empty;
        }
        RangeOutcome::Partial(r) if r.len() == 1 => {
            let (a, b) = r[0];
            res.status(206)
                .content_type(info.content_type)
                .header("Content-Range", format!("bytes {a}-{b}/{}", info.size));
            res.body = body_of(source, a, b - a + 1)?;
        }
        RangeOutcome::Partial(r) => {
            let boundary = boundary();
            res.status(206)
                .content_type(&format!("multipart/byteranges; boundary={boundary}"));
            let parts = r
                .into_iter()
                .map(|(a, b)| {
                    let head = format!(
                        "\r\n--{boundary}\r\nContent-Type: {}\r\nContent-Range: bytes {a}-{b}/{}\r\n\r\n",
                        info.content_type, info.size
                    );
                    (head.into_bytes(), a, b)
                })
                .collect();
            let trailer = format!("\r\n--{boundary}--\r\n").into_bytes();
            res.body = BodyKind::Ranges(Ranges {
                source,
                parts,
                trailer,
            });
        }
    }
    Ok(())
}

/// RFC 9110 §13.1.5: a Range applies only if If-Range is absent or names the current
/// representation (strong ETag match, or exactly the Last-Modified date).
fn if_range_holds(req: &Request<'_>, info: &StreamInfo<'_>) -> bool {
    let Some(v) = req.header("if-range") else {
        return true;
    };
    let v = v.trim_ascii();
    if v.starts_with(b"\"") || v.starts_with(b"W/") {
        return match info.etag {
            Some(tag) => !v.starts_with(b"W/") && !tag.starts_with("W/") && v == tag.as_bytes(),
            None => false,
        };
    }
    let (Some(lm), Ok(text)) = (info.last_modified, std::str::from_utf8(v)) else {
        return false;
    };
    match httpdate::parse_http_date(text) {
        Ok(t) => secs(t) == secs(lm),
        Err(_) => false,
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A multipart boundary unlikely to occur in any body: a per-process counter mixed with the
/// clock (splitmix64), as 20 hex digits.
fn boundary() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut z = nanos ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    format!("moria{z:016x}")
}

/// A body of `len` bytes from `offset` of `source`.
fn body_of(source: Source, offset: u64, len: u64) -> io::Result<BodyKind> {
    Ok(match source {
        Source::File(f) => BodyKind::File(f, offset, len),
        Source::Seekable(mut r) => {
            r.seek(SeekFrom::Start(offset))?;
            BodyKind::Reader(Box::new(r.take(len)), Some(len))
        }
    })
}
