//! [`Outcome`] → response: error statuses, the redirect, the listing, and for files the
//! preconditions (304/412), then ranges through [`respond_stream`], on-the-fly compression
//! through the server's compressor, or the plain 200 with the small-file fast path.

use std::io;

use super::body::{read_small, SMALL_FILE_MAX};
use super::conditional::{evaluate, Conditions, Precondition};
use super::meta::ETag;
use super::resolve::{Encoding, Outcome, Served};
use super::Settings;
use crate::compress;
use crate::http_date;
use crate::limits::DEFAULT_MAX_RANGES;
use crate::method::Method;
use crate::request::Request;
use crate::response::{respond_error, Body, Response};
use crate::stream::{respond_stream, Source, StreamInfo};

/// The `Allow` value of a 405.
const ALLOW: &str = "GET, HEAD";
/// The `Allow` value of a 405 when uploads are on.
const ALLOW_UPLOADS: &str = "GET, HEAD, POST, PUT";

/// Fills `res` from `outcome`.
pub(crate) fn respond(
    req: &Request<'_>,
    res: &mut Response,
    outcome: Outcome,
    s: &Settings,
) -> io::Result<()> {
    match outcome {
        Outcome::MethodNotAllowed => {
            respond_error(res, 405);
            let allow = if s.uploads.is_some() {
                ALLOW_UPLOADS
            } else {
                ALLOW
            };
            res.header("Allow", allow);
        }
        Outcome::BadRequest => respond_error(res, 400),
        Outcome::NotFound => respond_error(res, 404),
        Outcome::Forbidden => respond_error(res, 403),
        Outcome::Redirect(location) => {
            respond_error(res, 301);
            res.header("Location", location);
        }
        Outcome::Listing(html) => {
            res.status(200)
                .content_type("text/html; charset=utf-8")
                .body(html);
        }
        Outcome::File(served) => file(req, res, served, s)?,
    }
    Ok(())
}

fn file(req: &Request<'_>, res: &mut Response, served: Served, s: &Settings) -> io::Result<()> {
    let Served {
        opened,
        content_type,
        encoding,
        vary,
    } = served;
    let stat = opened.stat;
    let etag = match encoding {
        Encoding::Identity => ETag::new(&stat, "", false),
        Encoding::Precompressed => ETag::new(&stat, "-gz", false),
        Encoding::Compress => ETag::new(&stat, "-z", true),
    };
    let mtime = u64::try_from(stat.mtime_secs).unwrap_or(0);
    let is_head = req.method() == Method::Head;
    match evaluate(&Conditions::of(req), true, etag.as_str(), mtime) {
        Precondition::Failed => {
            respond_error(res, 412);
            return Ok(());
        }
        Precondition::NotModified => {
            res.status(304)
                .own_header("ETag", etag.as_str().as_bytes())
                .own_header("Last-Modified", &http_date::format_time(stat.modified()));
            common_headers(res, s, vary);
            return Ok(());
        }
        Precondition::Proceed => {}
    }
    // The compressor adds its own Vary.
    common_headers(res, s, vary && encoding != Encoding::Compress);
    if encoding == Encoding::Precompressed {
        res.own_header("Content-Encoding", b"gzip");
    }
    let size = stat.size;
    let compress = encoding == Encoding::Compress;
    if !is_head && !compress && req.header("range").is_some() {
        let info = StreamInfo {
            size,
            content_type: &content_type,
            etag: Some(etag.as_str()),
            last_modified: Some(stat.modified()),
            max_ranges: DEFAULT_MAX_RANGES,
        };
        return respond_stream(req, res, Source::File(opened.into_stream()?), &info);
    }
    if !compress {
        // Compressed on the fly, the body has no stable byte positions: no ranges.
        res.own_header("Accept-Ranges", b"bytes");
    }
    res.own_header("ETag", etag.as_str().as_bytes())
        .own_header("Last-Modified", &http_date::format_time(stat.modified()))
        .own_header("Content-Type", content_type.as_bytes());
    if is_head {
        res.body(Body::reader(io::empty(), Some(size)));
    } else if size <= SMALL_FILE_MAX {
        read_small(&opened, size as usize, res.body_mut())?;
    } else if compress {
        res.body(Body::reader(opened.into_stream()?, Some(size)));
    } else {
        res.body(Body::file(opened.into_stream()?, 0, size));
    }
    if compress {
        let settings = s.gzip.clone().unwrap_or_default();
        let mut scratch = Vec::new();
        compress::apply(&settings, req.header("accept-encoding"), res, &mut scratch)?;
    }
    Ok(())
}

/// Headers every file answer carries, 304 included (RFC 9110 §15.4.5).
fn common_headers(res: &mut Response, s: &Settings, vary: bool) {
    if let Some(cc) = &s.cache_control {
        res.header("Cache-Control", cc);
    }
    if vary {
        res.own_header("Vary", b"Accept-Encoding");
    }
}
