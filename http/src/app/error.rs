//! [`HttpError`]: an error a handler returns with `?` that becomes the right response (status,
//! message, optional JSON members, optional headers), and its conversions from the errors
//! Moria itself raises.

use std::borrow::Cow;
use std::fmt;
use std::io;

use crate::h1::Failure;
use crate::handler::BoxError;

/// An error that maps to one HTTP status; rendered by the router's error renderer
/// ([`crate::app::render`]; RFC 9457 problem details by default).
#[derive(Debug)]
pub struct HttpError {
    status: u16,
    message: Cow<'static, str>,
    members: Option<serde_json::Map<String, serde_json::Value>>,
    headers: Vec<(&'static str, String)>,
    source: Option<BoxError>,
}

impl HttpError {
    /// An error with `status` (400–599) and a message a client can act on.
    pub fn new(status: u16, message: impl Into<Cow<'static, str>>) -> HttpError {
        let status = if (400..600).contains(&status) {
            status
        } else {
            500
        };
        HttpError {
            status,
            message: message.into(),
            members: None,
            headers: Vec::new(),
            source: None,
        }
    }

    /// 400 Bad Request.
    pub fn bad_request(message: impl Into<Cow<'static, str>>) -> HttpError {
        HttpError::new(400, message)
    }

    /// 401 Unauthorized with the `WWW-Authenticate` challenge.
    pub fn unauthorized(message: impl Into<Cow<'static, str>>, challenge: &str) -> HttpError {
        HttpError::new(401, message).header("WWW-Authenticate", challenge)
    }

    /// 403 Forbidden.
    pub fn forbidden(message: impl Into<Cow<'static, str>>) -> HttpError {
        HttpError::new(403, message)
    }

    /// 404 Not Found.
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> HttpError {
        HttpError::new(404, message)
    }

    /// 405 Method Not Allowed with its `Allow` list.
    pub fn method_not_allowed(allow: &str) -> HttpError {
        HttpError::new(405, "method not allowed").header("Allow", allow)
    }

    /// 413 Content Too Large.
    pub fn payload_too_large(limit: u64) -> HttpError {
        HttpError::new(413, format!("request body over the {limit}-byte limit"))
    }

    /// 415 Unsupported Media Type, naming the type expected.
    pub fn unsupported_media_type(expected: &str) -> HttpError {
        HttpError::new(415, format!("expected Content-Type {expected}"))
    }

    /// 429 Too Many Requests with `Retry-After` in seconds.
    pub fn too_many_requests(retry_after_secs: u64) -> HttpError {
        HttpError::new(429, "too many requests").header("Retry-After", retry_after_secs.to_string())
    }

    /// 503 Service Unavailable with `Retry-After` in seconds.
    pub fn unavailable(message: impl Into<Cow<'static, str>>, retry_after_secs: u64) -> HttpError {
        HttpError::new(503, message).header("Retry-After", retry_after_secs.to_string())
    }

    /// 504 Gateway Timeout: the handler ran past its deadline.
    pub fn deadline_exceeded() -> HttpError {
        HttpError::new(504, "the handler ran past its deadline")
    }

    /// 500 whose cause is logged (with the request id and route) but never sent.
    pub fn internal(cause: impl Into<BoxError>) -> HttpError {
        let mut e = HttpError::new(500, "internal error");
        e.source = Some(cause.into());
        e
    }

    /// Adds a response header (e.g. `Allow`, `WWW-Authenticate`, `Retry-After`).
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> HttpError {
        self.headers.push((name, value.into()));
        self
    }

    /// Adds a member to the problem-details body (RFC 9457 extension member).
    pub fn member(mut self, name: &str, value: impl Into<serde_json::Value>) -> HttpError {
        self.members
            .get_or_insert_with(Default::default)
            .insert(name.to_string(), value.into());
        self
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The message sent to the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The extension members set with [`member`](Self::member).
    pub fn members(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.members.as_ref()
    }

    /// The headers the response carries.
    pub fn headers(&self) -> &[(&'static str, String)] {
        &self.headers
    }

    /// The cause, for the log (never sent to the client).
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    /// The error a failed body read leaves (413 over the limit, 400 malformed, 408 stalled).
    pub(crate) fn from_failure(f: Failure) -> HttpError {
        HttpError::new(f.status(), f.message())
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status, self.message)?;
        if let Some(cause) = &self.source {
            write!(f, ": {cause}")?;
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.source {
            Some(s) => Some(&**s),
            None => None,
        }
    }
}

/// A JSON body that does not parse or does not fit the type: 400 with the position.
impl From<serde_json::Error> for HttpError {
    fn from(e: serde_json::Error) -> HttpError {
        HttpError::bad_request(format!("invalid JSON body: {e}"))
            .member("line", e.line())
            .member("column", e.column())
    }
}

/// A URL-encoded query or form that does not fit the type: 400.
impl From<serde_urlencoded::de::Error> for HttpError {
    fn from(e: serde_urlencoded::de::Error) -> HttpError {
        HttpError::bad_request(format!("invalid form data: {e}"))
    }
}

/// An I/O error that is not a body failure (those are mapped where the body is read): 500.
impl From<io::Error> for HttpError {
    fn from(e: io::Error) -> HttpError {
        HttpError::internal(e)
    }
}

/// Any boxed error: the [`HttpError`] inside if it is one, else a 500.
impl From<BoxError> for HttpError {
    fn from(e: BoxError) -> HttpError {
        match e.downcast::<HttpError>() {
            Ok(h) => *h,
            Err(other) => HttpError::internal(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_carry_the_position() {
        let e: HttpError = serde_json::from_str::<Vec<u32>>("[1,").unwrap_err().into();
        assert_eq!(e.status(), 400);
        assert!(e.message().contains("line 1"), "{}", e.message());
        assert_eq!(e.members().unwrap()["column"], 3);
    }

    #[test]
    fn a_boxed_http_error_keeps_its_status() {
        let boxed: BoxError = HttpError::not_found("no such user").into();
        assert_eq!(HttpError::from(boxed).status(), 404);
        let other: BoxError = "disk on fire".into();
        let e = HttpError::from(other);
        assert_eq!((e.status(), e.message()), (500, "internal error"));
        assert!(e.to_string().contains("disk on fire"));
    }

    #[test]
    fn statuses_outside_the_error_range_become_500() {
        assert_eq!(HttpError::new(200, "x").status(), 500);
        assert_eq!(HttpError::new(700, "x").status(), 500);
    }
}
