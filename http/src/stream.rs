//! `respond_stream` (Mordor's respondStream): serves any seekable source of known size with
//! HEAD, single and multiple byte ranges and If-Range; a file source keeps the zero-copy path.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use moria_streams::File;

use crate::limits::DEFAULT_MAX_RANGES;
use crate::method::Method;
use crate::range::{parse_range, RangeOutcome};
use crate::request::Request;
use crate::response::{Kind, Response};
use crate::transport::Transport;

/// Anything readable and seekable.
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// The bytes `respond_stream` serves: a file (sent with `sendfile` on plain TCP) or any
/// seekable reader.
pub enum Source {
    /// A file; ranges are sent without copying through user space where the transport allows.
    File(File),
    /// Any seekable reader.
    Seekable(Box<dyn ReadSeek>),
}

impl From<File> for Source {
    fn from(f: File) -> Source {
        Source::File(f)
    }
}

impl Source {
    /// Wraps any seekable reader.
    pub fn seekable(r: impl ReadSeek + 'static) -> Source {
        Source::Seekable(Box::new(r))
    }

    /// A body of `len` bytes from `offset`.
    fn into_kind(self, offset: u64, len: u64) -> io::Result<Kind> {
        Ok(match self {
            Source::File(f) => Kind::File(f, offset, len),
            Source::Seekable(mut r) => {
                r.seek(SeekFrom::Start(offset))?;
                Kind::Reader(Box::new(r.take(len)), Some(len))
            }
        })
    }
}

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

/// A multipart/byteranges body.
pub(crate) struct Ranges {
    source: Source,
    parts: Vec<(Vec<u8>, u64, u64)>,
    trailer: Vec<u8>,
}

impl Ranges {
    /// Total body length.
    pub(crate) fn len(&self) -> u64 {
        self.parts
            .iter()
            .map(|(h, a, b)| h.len() as u64 + (b - a + 1))
            .sum::<u64>()
            + self.trailer.len() as u64
    }

    /// Writes every part to the transport (out of line: its copy buffer would make any caller's
    /// frame large).
    #[inline(never)]
    pub(crate) fn write_to(self, out: &mut dyn Transport) -> io::Result<()> {
        let Ranges {
            mut source,
            parts,
            trailer,
        } = self;
        for (head, a, b) in parts {
            out.write_all(&head)?;
            let len = b - a + 1;
            match &mut source {
                Source::File(f) => out.send_file(f, a, len)?,
                Source::Seekable(r) => {
                    r.seek(SeekFrom::Start(a))?;
                    let copied = io::copy(&mut r.take(len), &mut *out)?;
                    if copied != len {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "source shorter than its size",
                        ));
                    }
                }
            }
        }
        out.write_all(&trailer)
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
            res.body = source.into_kind(0, info.size)?;
        }
        RangeOutcome::Unsatisfiable => {
            res.status(416)
                .header("Content-Range", format!("bytes */{}", info.size));
            res.body = Kind::Empty;
        }
        RangeOutcome::Partial(r) if r.len() == 1 => {
            let (a, b) = r[0];
            res.status(206)
                .content_type(info.content_type)
                .header("Content-Range", format!("bytes {a}-{b}/{}", info.size));
            res.body = source.into_kind(a, b - a + 1)?;
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
            res.body = Kind::Ranges(Ranges {
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
