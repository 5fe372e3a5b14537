//! [`Response`]: status, headers, and the body as a `Read`, with buffered conveniences bounded
//! by a size limit.

use std::io::{self, Read};

use moria_streams::chunked::TrailerField;
use serde::de::DeserializeOwned;

use super::body_reader::BodyReader;
use super::decode::Content;
use super::error::{Error, Result};
use super::url::Url;
use crate::method::Version;

/// Response header fields in the order received; names compare case-insensitively.
#[derive(Debug, Clone, Default)]
pub struct Headers {
    fields: Vec<(String, Vec<u8>)>,
}

impl Headers {
    pub(crate) fn new(fields: Vec<(String, Vec<u8>)>) -> Headers {
        Headers { fields }
    }

    /// The first value of `name`, if present and valid UTF-8.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_bytes(name)
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The first value of `name` as bytes.
    pub fn get_bytes(&self, name: &str) -> Option<&[u8]> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// Every value of `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// All fields, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.fields.iter().map(|(n, v)| (n.as_str(), v.as_slice()))
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there is no field.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// A response: its head, and its body as a `std::io::Read` (decoded when it had a
/// Content-Encoding the client decodes). Reading the body to its end hands the connection back
/// to the pool; dropping it earlier closes the connection.
pub struct Response {
    pub(crate) status: u16,
    pub(crate) reason: String,
    pub(crate) version: Version,
    pub(crate) headers: Headers,
    pub(crate) url: Url,
    pub(crate) body: Content,
    pub(crate) max_body: u64,
    pub(crate) tls_resumed: Option<bool>,
}

impl Response {
    /// Whether the TLS connection that carried this response had resumed an earlier session
    /// (a short handshake) when it was opened; `None` over plain HTTP.
    pub fn tls_resumed(&self) -> Option<bool> {
        self.tls_resumed
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The reason phrase as sent.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The HTTP version of the status line.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The header fields.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The URL this response came from (the last one, after redirects).
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The trailer fields of a chunked body, once the body has been read to its end.
    pub fn trailers(&self) -> &[TrailerField] {
        self.body.body_reader().map_or(&[], BodyReader::trailers)
    }

    /// The whole body, up to the client's `max_body_size`.
    pub fn bytes(mut self) -> Result<Vec<u8>> {
        let url = self.url.to_string();
        let limit = self.max_body;
        let mut out = Vec::new();
        let mut capped = (&mut self.body).take(limit.saturating_add(1));
        capped
            .read_to_end(&mut out)
            .map_err(|e| Error::take_io(e, &url))?;
        if out.len() as u64 > limit {
            return Err(Error::BodyTooLarge { url, limit });
        }
        Ok(out)
    }

    /// The whole body as UTF-8 text, up to the client's `max_body_size`.
    pub fn text(self) -> Result<String> {
        let url = self.url.to_string();
        String::from_utf8(self.bytes()?).map_err(|e| Error::Decode {
            url,
            reason: e.to_string(),
        })
    }

    /// The whole body parsed as JSON, up to the client's `max_body_size`.
    pub fn json<T: DeserializeOwned>(self) -> Result<T> {
        let url = self.url.to_string();
        serde_json::from_slice(&self.bytes()?).map_err(|e| Error::Decode {
            url,
            reason: e.to_string(),
        })
    }

    /// Reads and drops up to `max` bytes of body so a short body leaves its connection
    /// reusable; whatever is left closes with the response.
    pub(crate) fn discard(mut self, max: u64) {
        let _ = io::copy(&mut (&mut self.body).take(max), &mut io::sink());
    }
}

impl Read for Response {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.body.read(buf)
    }
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("url", &self.url.to_string())
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}
