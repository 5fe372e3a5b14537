//! Cookies: reading `Cookie` ([`crate::Request::cookie`]), writing `Set-Cookie` with every
//! attribute ([`Cookie`], [`crate::Response::set_cookie`]), and signed or encrypted values
//! with key rotation ([`SignedCookies`], [`EncryptedCookies`], in `sealed.rs`).

mod sealed;

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

pub use sealed::{EncryptedCookies, SignedCookies};

use crate::request::Request;
use crate::response::Response;
use moria_streams::http_grammar::is_token;

/// A cookie that cannot be written as asked (a programming error: reported, never sent).
#[derive(Debug, thiserror::Error)]
#[error("invalid cookie: {0}")]
pub struct CookieError(pub &'static str);

/// The `SameSite` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameSite {
    /// Sent on same-site requests only.
    Strict,
    /// Also sent on top-level cross-site navigations (the browsers' default).
    Lax,
    /// Sent on every request (needs `Secure`).
    None,
}

/// A `Set-Cookie` to send: `Cookie::new("sid", "abc").http_only().secure()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cookie {
    name: String,
    value: String,
    path: Option<String>,
    domain: Option<String>,
    max_age: Option<Duration>,
    expires: Option<SystemTime>,
    secure: bool,
    http_only: bool,
    same_site: Option<SameSite>,
    partitioned: bool,
}

/// RFC 6265 §4.1.1 cookie-octet.
fn is_cookie_octet(c: u8) -> bool {
    matches!(c, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e)
}

/// An attribute value: printable ASCII without `;`.
fn is_attr_value(v: &str) -> bool {
    v.bytes().all(|c| (0x20..0x7f).contains(&c) && c != b';')
}

impl Cookie {
    /// A session cookie `name=value` with no attributes.
    pub fn new(name: &str, value: &str) -> Cookie {
        Cookie {
            name: name.to_string(),
            value: value.to_string(),
            path: None,
            domain: None,
            max_age: None,
            expires: None,
            secure: false,
            http_only: false,
            same_site: None,
            partitioned: false,
        }
    }

    /// A cookie that deletes `name` (empty, `Max-Age=0`) at `path`.
    pub fn removal(name: &str, path: &str) -> Cookie {
        Cookie::new(name, "").path(path).max_age(Duration::ZERO)
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// `Path=`.
    pub fn path(mut self, path: &str) -> Cookie {
        self.path = Some(path.to_string());
        self
    }

    /// `Domain=`.
    pub fn domain(mut self, domain: &str) -> Cookie {
        self.domain = Some(domain.to_string());
        self
    }

    /// `Max-Age=` in whole seconds (signed and encrypted cookies also expire inside).
    pub fn max_age(mut self, age: Duration) -> Cookie {
        self.max_age = Some(age);
        self
    }

    /// `Expires=` (an HTTP date).
    pub fn expires(mut self, at: SystemTime) -> Cookie {
        self.expires = Some(at);
        self
    }

    /// `Secure`: HTTPS only.
    pub fn secure(mut self) -> Cookie {
        self.secure = true;
        self
    }

    /// `HttpOnly`: hidden from scripts.
    pub fn http_only(mut self) -> Cookie {
        self.http_only = true;
        self
    }

    /// `SameSite=`.
    pub fn same_site(mut self, s: SameSite) -> Cookie {
        self.same_site = Some(s);
        self
    }

    /// `Partitioned` (CHIPS; needs `Secure`).
    pub fn partitioned(mut self) -> Cookie {
        self.partitioned = true;
        self
    }

    /// The same cookie with another value (what sealing does).
    fn with_value(&self, value: String) -> Cookie {
        Cookie {
            value,
            ..self.clone()
        }
    }

    /// The `Set-Cookie` field value, or why the cookie cannot be sent.
    pub fn encode(&self) -> Result<String, CookieError> {
        if !is_token(self.name.as_bytes()) {
            return Err(CookieError("name is not a token"));
        }
        if !self.value.bytes().all(is_cookie_octet) {
            return Err(CookieError(
                "value has a space, quote, comma, semicolon, backslash or control character",
            ));
        }
        let needs_secure = self.partitioned || self.same_site == Some(SameSite::None);
        if needs_secure && !self.secure {
            return Err(CookieError("Partitioned and SameSite=None need Secure"));
        }
        let mut out = format!("{}={}", self.name, self.value);
        for (attr, value) in [("Path", &self.path), ("Domain", &self.domain)] {
            if let Some(v) = value {
                if !is_attr_value(v) {
                    return Err(CookieError("attribute with ';' or a control character"));
                }
                let _ = write!(out, "; {attr}={v}");
            }
        }
        if let Some(age) = self.max_age {
            let _ = write!(out, "; Max-Age={}", age.as_secs());
        }
        if let Some(at) = self.expires {
            out.push_str("; Expires=");
            out.push_str(&httpdate::fmt_http_date(at));
        }
        if self.secure {
            out.push_str("; Secure");
        }
        if self.http_only {
            out.push_str("; HttpOnly");
        }
        if let Some(s) = self.same_site {
            out.push_str(match s {
                SameSite::Strict => "; SameSite=Strict",
                SameSite::Lax => "; SameSite=Lax",
                SameSite::None => "; SameSite=None",
            });
        }
        if self.partitioned {
            out.push_str("; Partitioned");
        }
        Ok(out)
    }
}

/// The `name=value` pairs of `Cookie` header values, quotes around a value removed.
fn pairs<'h>(values: impl Iterator<Item = &'h [u8]>) -> impl Iterator<Item = (&'h str, &'h str)> {
    values
        .filter_map(|v| std::str::from_utf8(v).ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            Some((name.trim(), value))
        })
}

impl<'a> Request<'a> {
    /// The value of cookie `name` from the `Cookie` header(s), if sent.
    pub fn cookie(&self, name: &str) -> Option<&'a str> {
        self.cookies().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every cookie sent, as `(name, value)`.
    pub fn cookies(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        pairs(self.headers_named("cookie"))
    }
}

impl Response {
    /// Adds a `Set-Cookie` field for `cookie`.
    pub fn set_cookie(&mut self, cookie: &Cookie) -> Result<&mut Response, CookieError> {
        let value = cookie.encode()?;
        Ok(self.header("Set-Cookie", value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attribute_is_written() {
        let c = Cookie::new("sid", "a1")
            .path("/")
            .domain("example.com")
            .max_age(Duration::from_secs(60))
            .expires(SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777))
            .secure()
            .http_only()
            .same_site(SameSite::None)
            .partitioned();
        assert_eq!(
            c.encode().unwrap(),
            "sid=a1; Path=/; Domain=example.com; Max-Age=60; \
             Expires=Sun, 06 Nov 1994 08:49:37 GMT; Secure; HttpOnly; SameSite=None; Partitioned"
        );
        assert_eq!(
            Cookie::removal("sid", "/").encode().unwrap(),
            "sid=; Path=/; Max-Age=0"
        );
    }

    #[test]
    fn unsafe_cookies_are_refused() {
        assert!(Cookie::new("a b", "1").encode().is_err());
        assert!(Cookie::new("a", "x;y").encode().is_err());
        assert!(Cookie::new("a", "x\r\n").encode().is_err());
        assert!(Cookie::new("a", "1").path("/;x").encode().is_err());
        assert!(Cookie::new("a", "1").partitioned().encode().is_err());
        assert!(Cookie::new("a", "1")
            .same_site(SameSite::None)
            .encode()
            .is_err());
    }

    #[test]
    fn cookie_headers_are_split_into_pairs() {
        let headers: [&[u8]; 2] = [b"a=1; b=\"two\";c", b" d = 4 "];
        let got: Vec<_> = pairs(headers.into_iter()).collect();
        assert_eq!(got, [("a", "1"), ("b", "two"), ("d", "4")]);
    }
}
