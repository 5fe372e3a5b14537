//! Typed requests and responses: [`Request::json`], [`Request::query_as`], [`Request::form`],
//! [`Request::param_as`] and [`Response::json`]. Each extractor refuses bad input with the
//! right 4xx and a message a client can act on: 415 for the wrong `Content-Type`, 413 for a
//! body over the limit, 400 (with the position, for JSON) for input that does not fit the type.

use std::io::{BufRead, Read};
use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::HttpError;
use crate::body::RequestBody;
use crate::h1::Failure;
use crate::request::Request;
use crate::response::Response;

/// Largest JSON or form body the extractors read by default (the server's `max_body` applies
/// too, whichever is lower).
pub const DEFAULT_EXTRACT_LIMIT: u64 = 1 << 20;

/// Whether the `Content-Type` value names `essence` (`application/json`) or, with `suffix`, a
/// `+json` type; parameters are ignored, case-insensitively.
fn type_is(value: Option<&[u8]>, essence: &str, suffix: Option<&str>) -> bool {
    let Some(v) = value else { return false };
    let t = v
        .split(|&c| c == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    t.eq_ignore_ascii_case(essence.as_bytes())
        || suffix.is_some_and(|s| {
            t.len() > s.len() && t[t.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes())
        })
}

impl Request<'_> {
    /// The body parsed as JSON into `T` (`Content-Type: application/json` or `*/*+json`, at
    /// most [`DEFAULT_EXTRACT_LIMIT`] bytes). A body already in the read buffer is parsed
    /// where it lies, without a copy.
    pub fn json<T: DeserializeOwned>(&mut self) -> Result<T, HttpError> {
        self.json_limited(DEFAULT_EXTRACT_LIMIT)
    }

    /// [`json`](Self::json) with a body limit of `limit` bytes.
    pub fn json_limited<T: DeserializeOwned>(&mut self, limit: u64) -> Result<T, HttpError> {
        if !type_is(
            self.header("content-type"),
            "application/json",
            Some("+json"),
        ) {
            return Err(HttpError::unsupported_media_type("application/json"));
        }
        self.with_body(limit, |b| {
            serde_json::from_slice(b).map_err(HttpError::from)
        })?
    }

    /// The URL-encoded body (`application/x-www-form-urlencoded`) decoded into `T`.
    pub fn form<T: DeserializeOwned>(&mut self) -> Result<T, HttpError> {
        let form = "application/x-www-form-urlencoded";
        if !type_is(self.header("content-type"), form, None) {
            return Err(HttpError::unsupported_media_type(form));
        }
        self.with_body(DEFAULT_EXTRACT_LIMIT, |b| {
            serde_urlencoded::from_bytes(b).map_err(HttpError::from)
        })?
    }

    /// The query string decoded into `T` (an absent query decodes as empty).
    pub fn query_as<T: DeserializeOwned>(&self) -> Result<T, HttpError> {
        serde_urlencoded::from_str(self.query().unwrap_or(""))
            .map_err(|e| HttpError::bad_request(format!("invalid query string: {e}")))
    }

    /// Route parameter `name` parsed as `T` (`req.param_as::<u64>("id")`); 400 when it does
    /// not parse, 500 when the route has no such parameter (a programming error).
    pub fn param_as<T: FromStr>(&self, name: &str) -> Result<T, HttpError>
    where
        T::Err: std::fmt::Display,
    {
        let Some(raw) = self.param(name) else {
            return Err(HttpError::internal(format!(
                "route has no parameter {name:?}"
            )));
        };
        raw.parse().map_err(|e| {
            HttpError::bad_request(format!("path parameter {name}: {e}")).member("parameter", name)
        })
    }

    /// Runs `f` over the whole body (at most `limit` bytes): in place when the read buffer
    /// already holds it, else read into a vector first.
    fn with_body<R>(&mut self, limit: u64, f: impl FnOnce(&[u8]) -> R) -> Result<R, HttpError> {
        let body = &mut self.body;
        let declared = body.content_length();
        if declared.is_some_and(|n| n > limit) {
            return Err(HttpError::payload_too_large(limit));
        }
        if let Some(n) = declared.filter(|_| body.received() == 0) {
            let n = n as usize;
            let buffered = match body.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(body_error(body.failure(), e)),
            };
            if buffered.len() == n {
                let out = f(buffered);
                body.consume(n);
                return Ok(out);
            }
            let mut buf = Vec::with_capacity(n);
            return read_all(body, limit, &mut buf).map(|()| f(&buf));
        }
        let mut buf = Vec::new();
        read_all(body, limit, &mut buf).map(|()| f(&buf))
    }
}

/// Reads the rest of `body` into `buf`, refusing more than `limit` bytes.
fn read_all(body: &mut RequestBody<'_>, limit: u64, buf: &mut Vec<u8>) -> Result<(), HttpError> {
    if let Err(e) = Read::take(&mut *body, limit + 1).read_to_end(buf) {
        return Err(body_error(body.failure(), e));
    }
    if buf.len() as u64 > limit {
        return Err(HttpError::payload_too_large(limit));
    }
    Ok(())
}

/// What a failed body read answers: the broken rule's status, else a 400.
fn body_error(failure: Option<Failure>, e: std::io::Error) -> HttpError {
    match failure {
        Some(f) => HttpError::from_failure(f),
        None => HttpError::bad_request(format!("cannot read the request body: {e}")),
    }
}

impl Response {
    /// Serialises `value` as `application/json` into the response's reusable body buffer.
    pub fn json(&mut self, value: &impl Serialize) -> Result<&mut Response, HttpError> {
        self.content_type("application/json");
        serde_json::to_writer(self.body_mut(), value).map_err(HttpError::internal)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::type_is;

    #[test]
    fn media_types_match_by_essence_and_suffix() {
        let json = |v: &[u8]| type_is(Some(v), "application/json", Some("+json"));
        assert!(json(b"application/json"));
        assert!(json(b"Application/JSON; charset=utf-8"));
        assert!(json(b"application/problem+json"));
        assert!(!json(b"text/plain"));
        assert!(!json(b"+json"));
        assert!(!type_is(None, "application/json", None));
    }
}
