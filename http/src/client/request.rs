//! [`RequestBuilder`]: method, URL, headers, query and body; `send` follows redirects.

use std::collections::HashSet;
use std::io::{Read, Seek};
use std::time::Duration;

use moria_runtime::Deadline;
use moria_streams::http_grammar::{is_field_value, is_token};
use moria_streams::File;
use serde::Serialize;

use super::auth::{self, Credentials};
use super::error::{Error, Result};
use super::exchange::{perform, Outgoing};
use super::response::Response;
use super::send::RequestBody;
use super::timing::Timing;
use super::url::Url;
use super::Client;
use crate::h1::is_framing_field;

/// Most bytes of a redirect's own body read so its connection can be reused.
const REDIRECT_DRAIN: u64 = 64 * 1024;

/// Fields that belong to one origin and are dropped when a redirect leaves it.
const ORIGIN_BOUND: [&str; 3] = ["authorization", "cookie", "host"];

/// A request being built; [`RequestBuilder::send`] sends it. Errors in what was given (URL,
/// header) are reported by `send`.
pub struct RequestBuilder {
    client: Client,
    method: String,
    url: std::result::Result<Url, Error>,
    fields: Vec<(String, String)>,
    body: RequestBody,
    timeout: Option<Duration>,
    credentials: Option<Credentials>,
    error: Option<Error>,
}

impl RequestBuilder {
    pub(crate) fn new(client: Client, method: &str, url: &str) -> RequestBuilder {
        let parsed = Url::parse(url).map_err(|reason| Error::InvalidUrl {
            url: url.to_owned(),
            reason,
        });
        let error = (!is_token(method.as_bytes())).then(|| Error::InvalidHeader {
            url: url.to_owned(),
            name: method.to_owned(),
            reason: "the method is not a token",
        });
        RequestBuilder {
            client,
            method: method.to_owned(),
            url: parsed,
            fields: Vec::new(),
            body: RequestBody::Empty,
            timeout: None,
            credentials: None,
            error,
        }
    }

    fn url_text(&self) -> String {
        self.url.as_ref().map(Url::to_string).unwrap_or_default()
    }

    /// Adds a header field (several with one name are all sent). Content-Length and
    /// Transfer-Encoding come from the body and are refused here; a Host given here replaces
    /// the URL's.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let reason = if !is_token(name.as_bytes()) {
            Some("the name is not a token")
        } else if !is_field_value(value.as_bytes()) {
            Some("the value holds a control character")
        } else if is_framing_field(name) {
            Some("framing comes from the body")
        } else {
            None
        };
        match reason {
            Some(reason) => {
                self.error.get_or_insert(Error::InvalidHeader {
                    url: self.url_text(),
                    name: name.to_owned(),
                    reason,
                });
            }
            None => self.fields.push((name.to_owned(), value.to_owned())),
        }
        self
    }

    /// Appends `name=value` to the URL's query, percent-encoded.
    pub fn query(mut self, name: &str, value: &str) -> Self {
        if let Ok(url) = &mut self.url {
            url.append_query(name, value);
        }
        self
    }

    /// Sends `bytes` as the body (with Content-Length; resent on redirects and retries).
    pub fn body(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.body = RequestBody::Bytes(bytes.into());
        self
    }

    /// Streams `reader` as the body: with Content-Length when `len` is known (the reader must
    /// yield that many bytes), chunked otherwise. Sent once: not retried, and a 307/308
    /// redirect is returned as it is.
    pub fn body_reader(mut self, reader: impl Read + Send + 'static, len: Option<u64>) -> Self {
        self.body = RequestBody::Reader {
            reader: Box::new(reader),
            len,
        };
        self
    }

    /// Sends a `multipart/form-data` body (fields, and files streamed from disk) with its
    /// Content-Type, and a Content-Length when every part's size is known. Sent once, like
    /// [`RequestBuilder::body_reader`].
    pub fn multipart(self, form: crate::multipart::Form) -> Self {
        let (content_type, len) = (form.content_type(), form.len());
        self.header("Content-Type", &content_type)
            .body_reader(form.into_reader(), len)
    }

    /// Sends `file` from its current position to its end, with Content-Length: by `sendfile`
    /// on plain TCP (the bytes never enter user space), by reads under TLS. Sent once, like
    /// [`RequestBuilder::body_reader`].
    pub fn body_file(mut self, mut file: File) -> Self {
        let len = file
            .size()
            .and_then(|size| Ok(size.saturating_sub(file.stream_position()?)));
        match len {
            Ok(len) => self.body = RequestBody::File { file, len },
            Err(source) => {
                let url = self.url_text();
                self.error.get_or_insert(Error::RequestBody { url, source });
            }
        }
        self
    }

    /// Sends `value` as a JSON body with `Content-Type: application/json`.
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(bytes) => {
                self.body = RequestBody::Bytes(bytes);
                self.fields
                    .push(("Content-Type".to_owned(), "application/json".to_owned()));
            }
            Err(e) => {
                self.error.get_or_insert(Error::Json(e));
            }
        }
        self
    }

    /// Answers a `401` with these credentials: Digest (SHA-256 or MD5, `qop=auth`) when the
    /// server offers it, else Basic. Once per URL, only on this request's origin, and only with
    /// a replayable body.
    pub fn auth(mut self, user: &str, password: &str) -> Self {
        self.credentials = Some(Credentials {
            user: user.to_owned(),
            password: password.to_owned(),
        });
        self
    }

    /// A deadline for this request (redirects and body included), replacing the client's.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    fn has(&self, name: &str) -> bool {
        self.fields
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// Sends the request and returns the response head, following redirects; the body is read
    /// from the [`Response`].
    pub fn send(mut self) -> Result<Response> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let decode = self.client.inner.config.decompress && !self.has("accept-encoding");
        let agent = match &self.client.inner.config.user_agent {
            Some(agent) if !self.has("user-agent") => Some(agent.clone()),
            _ => None,
        };
        let RequestBuilder {
            client,
            mut method,
            url,
            mut fields,
            mut body,
            timeout,
            credentials,
            ..
        } = self;
        let mut url = url?;
        let inner = &*client.inner;
        let config = &inner.config;
        let timing = Timing {
            deadline: timeout.or(config.timeout).map(Deadline::after),
            idle: config.read_timeout,
        };
        if decode {
            fields.push(("Accept-Encoding".to_owned(), "gzip, deflate".to_owned()));
        }
        if let Some(agent) = agent {
            fields.push(("User-Agent".to_owned(), agent));
        }
        let mut seen = HashSet::new();
        seen.insert((method.clone(), url.to_string()));
        let mut hops = 0;
        // Credentials answer a 401 once per URL, and only on the origin they were given for.
        let auth_origin = url.clone();
        let mut answered: Option<String> = None;
        loop {
            let out = Outgoing {
                method: &method,
                url: &url,
                fields: &fields,
                body: &mut body,
                decode,
            };
            let response = perform(inner, out, &timing)?;
            if response.status() == 401 && body.replayable() && url.same_origin(&auth_origin) {
                let here = url.to_string();
                let value = credentials.as_ref().and_then(|c| {
                    let challenges = response.headers().get_all("www-authenticate");
                    auth::answer(c, challenges, &method, url.target())
                });
                if let Some(value) = value.filter(|_| answered.as_ref() != Some(&here)) {
                    answered = Some(here);
                    response.discard(REDIRECT_DRAIN);
                    fields.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
                    fields.push(("Authorization".to_owned(), value));
                    continue;
                }
            }
            let Some(next) = redirect(&response, &body, &url, config.max_redirects)? else {
                return Ok(response);
            };
            if hops == config.max_redirects {
                return Err(Error::TooManyRedirects {
                    url: url.to_string(),
                    limit: config.max_redirects,
                });
            }
            hops += 1;
            response.discard(REDIRECT_DRAIN);
            if next.get {
                if method != "HEAD" {
                    method = "GET".to_owned();
                }
                body = RequestBody::Empty;
                fields.retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
            }
            // Credentials for one origin are never sent to another, nor its Host.
            if !next.url.same_origin(&url) {
                fields.retain(|(n, _)| !ORIGIN_BOUND.iter().any(|o| n.eq_ignore_ascii_case(o)));
            }
            if !seen.insert((method.clone(), next.url.to_string())) {
                return Err(Error::RedirectLoop {
                    url: next.url.to_string(),
                });
            }
            url = next.url;
        }
    }
}

/// Where a redirect leads and whether it turns the request into a GET without body.
struct Redirect {
    url: Url,
    get: bool,
}

/// The redirect `response` asks for, if it is one this request follows (RFC 9110 §15.4).
fn redirect(
    response: &Response,
    body: &RequestBody,
    url: &Url,
    max: usize,
) -> Result<Option<Redirect>> {
    if max == 0 {
        return Ok(None);
    }
    let get = match response.status() {
        301..=303 => true,
        // 307 and 308 repeat the method and body: only possible with a body we still have.
        307 | 308 if body.replayable() => false,
        _ => return Ok(None),
    };
    let Some(location) = response.headers().get("location") else {
        return Ok(None);
    };
    let next = url.join(location).map_err(|reason| Error::InvalidUrl {
        url: location.to_owned(),
        reason,
    })?;
    Ok(Some(Redirect { url: next, get }))
}
