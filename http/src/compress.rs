//! Response compression: gzip or deflate negotiated by `Accept-Encoding` with q-values (RFC 9110
//! §12.5.3), above a minimum size, skipping already-compressed types, with
//! `Vary: Accept-Encoding`.

use std::io::{self, Read, Write};

use flate2::write::{GzEncoder, ZlibEncoder};
use moria_runtime::blocking_io;

use crate::response::{has, BodyKind, Response};

/// Smallest body compressed by default (smaller bodies gain little and cost CPU).
pub const DEFAULT_MIN_SIZE: usize = 1024;
/// Default compression level (1 = fastest, like nginx's default `gzip_comp_level`).
pub const DEFAULT_LEVEL: u32 = 1;
/// Most bytes one offloaded read of a compressing reader produces.
const OFFLOAD_READ_MAX: usize = 64 * 1024;

/// A content coding the server can apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// gzip (RFC 1952).
    Gzip,
    /// deflate: the zlib format (RFC 1950), as RFC 9110 §8.4.1.2 defines it.
    Deflate,
    /// No transformation.
    Identity,
}

/// Compression settings for a server.
#[derive(Debug, Clone)]
pub struct Compression {
    /// Bodies smaller than this are sent as they are (default [`DEFAULT_MIN_SIZE`]).
    pub min_size: usize,
    /// flate2 level, 0–9 (default [`DEFAULT_LEVEL`]).
    pub level: u32,
}

impl Default for Compression {
    fn default() -> Self {
        Compression {
            min_size: DEFAULT_MIN_SIZE,
            level: DEFAULT_LEVEL,
        }
    }
}

/// Picks the coding for a response from the request's `Accept-Encoding` (`None`: header
/// absent, any coding acceptable, identity preferred). Ties go to gzip.
pub fn negotiate(accept: Option<&[u8]>) -> Coding {
    let Some(accept) = accept else {
        return Coding::Identity;
    };
    let (mut gzip, mut deflate, mut star, mut identity) = (None, None, None, None);
    for item in accept.split(|&c| c == b',') {
        let mut parts = item.split(|&c| c == b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        if name.is_empty() {
            continue;
        }
        let q = parts.find_map(|p| {
            let p = p.trim_ascii();
            let v = p.strip_prefix(b"q=").or_else(|| p.strip_prefix(b"Q="))?;
            Some(qvalue(v.trim_ascii()).unwrap_or(0))
        });
        let q = q.unwrap_or(1000);
        if name.eq_ignore_ascii_case(b"gzip") || name.eq_ignore_ascii_case(b"x-gzip") {
            gzip = Some(q);
        } else if name.eq_ignore_ascii_case(b"deflate") {
            deflate = Some(q);
        } else if name == b"*" {
            star = Some(q);
        } else if name.eq_ignore_ascii_case(b"identity") {
            identity = Some(q);
        }
    }
    let g = gzip.or(star).unwrap_or(0);
    let d = deflate.or(star).unwrap_or(0);
    if g == 0 && d == 0 {
        return Coding::Identity;
    }
    // Prefer the coding with the higher weight; identity only wins when weighted above both.
    let best = g.max(d);
    if identity.is_some_and(|i| i > best) {
        return Coding::Identity;
    }
    if g >= d {
        Coding::Gzip
    } else {
        Coding::Deflate
    }
}

/// A q-value (`0`, `0.5`, `1.000`) in thousandths; `None` if malformed.
fn qvalue(v: &[u8]) -> Option<u32> {
    match v {
        [b'0'] | [b'0', b'.'] => Some(0),
        [b'1'] | [b'1', b'.'] => Some(1000),
        [b'1', b'.', rest @ ..] if rest.len() <= 3 && rest.iter().all(|&c| c == b'0') => Some(1000),
        [b'0', b'.', rest @ ..]
            if (1..=3).contains(&rest.len()) && rest.iter().all(u8::is_ascii_digit) =>
        {
            let mut n = 0u32;
            for i in 0..3 {
                n = n * 10 + rest.get(i).map_or(0, |&c| u32::from(c - b'0'));
            }
            Some(n)
        }
        _ => None,
    }
}

/// Whether a media type is worth compressing (not already compressed, not opaque binary).
pub fn is_compressible(content_type: &[u8]) -> bool {
    let t = content_type
        .split(|&c| c == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    let lower = |p: &[u8]| t.len() >= p.len() && t[..p.len()].eq_ignore_ascii_case(p);
    if lower(b"image/svg+xml") {
        return true;
    }
    if lower(b"image/") || lower(b"audio/") || lower(b"video/") || lower(b"font/woff") {
        return false;
    }
    const PACKED: [&[u8]; 10] = [
        b"application/zip",
        b"application/gzip",
        b"application/x-gzip",
        b"application/zstd",
        b"application/x-bzip2",
        b"application/x-xz",
        b"application/x-7z-compressed",
        b"application/x-rar-compressed",
        b"application/pdf",
        b"application/octet-stream",
    ];
    !PACKED.iter().any(|p| t.eq_ignore_ascii_case(p))
}

/// Compresses the body of `res` if the settings, the status, the type and the client allow;
/// `scratch` is a reusable buffer swapped with the response's own.
pub(crate) fn apply(
    cfg: &Compression,
    accept: Option<&[u8]>,
    res: &mut Response,
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    if res.head.status != 200 || res.has(has::CONTENT_ENCODING) {
        return Ok(());
    }
    match res.get_header("content-type") {
        Some(t) if is_compressible(t) => {}
        _ => return Ok(()),
    }
    let eligible = match &res.body {
        BodyKind::Reader(_, len) => len.is_none_or(|n| n >= cfg.min_size as u64),
        _ => res.memory_body().is_some_and(|b| b.len() >= cfg.min_size),
    };
    if !eligible {
        return Ok(());
    }
    res.header("Vary", "Accept-Encoding");
    let coding = negotiate(accept);
    let level = flate2::Compression::new(cfg.level.min(9));
    let name = match coding {
        Coding::Identity => return Ok(()),
        Coding::Gzip => "gzip",
        Coding::Deflate => "deflate",
    };
    // Encoders are built and run on the offload pool: their state is large (miniz builds
    // ~160 KiB of tables, on the stack in debug builds), too large for a fiber stack.
    if matches!(res.body, BodyKind::Reader(..)) {
        if let BodyKind::Reader(r, _) = std::mem::replace(&mut res.body, BodyKind::Empty) {
            let encoder = blocking_io(move || Ok(encoder(coding, r, level)))?;
            res.body = BodyKind::Reader(
                Box::new(OffloadedRead {
                    inner: Some(encoder),
                    buf: Vec::new(),
                }),
                None,
            );
        }
    } else {
        let body: Vec<u8> = match std::mem::replace(&mut res.body, BodyKind::Empty) {
            BodyKind::Static(s) => s.to_vec(),
            BodyKind::Bytes(v) => Vec::from(v),
            _ => std::mem::take(&mut res.buf),
        };
        let out = std::mem::take(scratch);
        let (out, body) = blocking_io(move || {
            let mut out = out;
            out.clear();
            match coding {
                Coding::Gzip => {
                    let mut e = GzEncoder::new(out, level);
                    e.write_all(&body)?;
                    out = e.finish()?;
                }
                _ => {
                    let mut e = ZlibEncoder::new(out, level);
                    e.write_all(&body)?;
                    out = e.finish()?;
                }
            }
            Ok((out, body))
        })?;
        res.buf = out;
        *scratch = body;
        res.body = BodyKind::Buffer;
    }
    res.header("Content-Encoding", name);
    Ok(())
}

/// A compressing reader over `r`.
fn encoder(
    coding: Coding,
    r: Box<dyn Read + Send>,
    level: flate2::Compression,
) -> Box<dyn Read + Send> {
    match coding {
        Coding::Gzip => Box::new(flate2::read::GzEncoder::new(r, level)),
        _ => Box::new(flate2::read::ZlibEncoder::new(r, level)),
    }
}

/// A reader whose every read runs on the offload pool (for readers with large stack needs).
struct OffloadedRead {
    inner: Option<Box<dyn Read + Send>>,
    buf: Vec<u8>,
}

impl Read for OffloadedRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(mut inner) = self.inner.take() else {
            return Err(io::Error::other(
                "compressing reader lost after an offload failure",
            ));
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(out.len().min(OFFLOAD_READ_MAX), 0);
        let (inner, buf, n) = blocking_io(move || {
            let n = inner.read(&mut buf);
            Ok((inner, buf, n))
        })?;
        self.inner = Some(inner);
        let n = n?;
        out[..n].copy_from_slice(&buf[..n]);
        self.buf = buf;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn n(s: &str) -> Coding {
        negotiate(Some(s.as_bytes()))
    }

    #[test]
    fn negotiation() {
        assert_eq!(negotiate(None), Coding::Identity);
        assert_eq!(n(""), Coding::Identity);
        assert_eq!(n("gzip"), Coding::Gzip);
        assert_eq!(n("deflate"), Coding::Deflate);
        assert_eq!(n("gzip, deflate, br"), Coding::Gzip);
        assert_eq!(n("gzip;q=0.5, deflate;q=0.8"), Coding::Deflate);
        assert_eq!(n("gzip;q=0, deflate;q=0"), Coding::Identity);
        assert_eq!(n("*"), Coding::Gzip);
        assert_eq!(n("*;q=0.1, gzip;q=0"), Coding::Deflate);
        assert_eq!(n("br"), Coding::Identity);
        assert_eq!(n("identity;q=1, gzip;q=0.5"), Coding::Identity);
        assert_eq!(n("x-gzip ; q=0.9"), Coding::Gzip);
        assert_eq!(n("gzip;q=garbage"), Coding::Identity);
    }

    #[test]
    fn qvalues() {
        assert_eq!(qvalue(b"0.125"), Some(125));
        assert_eq!(qvalue(b"0.5"), Some(500));
        assert_eq!(qvalue(b"1.000"), Some(1000));
        assert_eq!(qvalue(b"1.5"), None);
        assert_eq!(qvalue(b"0.1234"), None);
    }

    #[test]
    fn compressible_types() {
        assert!(is_compressible(b"text/html; charset=utf-8"));
        assert!(is_compressible(b"application/json"));
        assert!(is_compressible(b"image/svg+xml"));
        assert!(!is_compressible(b"image/png"));
        assert!(!is_compressible(b"Application/Zip"));
        assert!(!is_compressible(b"video/mp4"));
    }

    #[test]
    fn apply_compresses_and_varies() {
        let cfg = Compression::default();
        let text = "hello world ".repeat(200);
        let mut res = Response::new();
        res.content_type("text/plain").body(text.clone());
        let mut scratch = Vec::new();
        apply(&cfg, Some(b"gzip"), &mut res, &mut scratch).unwrap();
        assert_eq!(res.get_header("content-encoding"), Some(&b"gzip"[..]));
        assert_eq!(res.get_header("vary"), Some(&b"Accept-Encoding"[..]));
        let mut out = String::new();
        flate2::read::GzDecoder::new(res.memory_body().unwrap())
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
    }

    #[test]
    fn apply_skips_small_packed_and_unaccepted() {
        let cfg = Compression::default();
        let mut scratch = Vec::new();
        let mut res = Response::new();
        res.content_type("text/plain").body("small");
        apply(&cfg, Some(b"gzip"), &mut res, &mut scratch).unwrap();
        assert!(res.get_header("content-encoding").is_none());
        assert!(res.get_header("vary").is_none());
        let mut res = Response::new();
        res.content_type("image/png").body(vec![0u8; 4096]);
        apply(&cfg, Some(b"gzip"), &mut res, &mut scratch).unwrap();
        assert!(res.get_header("content-encoding").is_none());
        let mut res = Response::new();
        res.content_type("text/plain").body(vec![b'a'; 4096]);
        apply(&cfg, Some(b"br"), &mut res, &mut scratch).unwrap();
        assert!(res.get_header("content-encoding").is_none());
        assert_eq!(res.get_header("vary"), Some(&b"Accept-Encoding"[..]));
    }
}
