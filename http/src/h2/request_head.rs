//! A request's header list checked by RFC 9113 §8 and rewritten as an HTTP/1.1 head, so the
//! h1 parser (the one grammar of the crate) builds the same `Head` a handler sees over h1:
//! pseudo-header fields first, once each, only the four a request has; lowercase token names;
//! no connection-specific fields; `te` only `trailers`; no CR, LF or NUL in values and no
//! white space around them; `:authority` becomes `host` (a different `host` beside it is
//! malformed). Anything else is a malformed request: the stream is reset with PROTOCOL_ERROR.

use moria_streams::http_grammar::TCHAR;

/// Fields that only mean something on one HTTP/1.1 connection (RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC: [&[u8]; 5] = [
    b"connection",
    b"proxy-connection",
    b"keep-alive",
    b"transfer-encoding",
    b"upgrade",
];

/// A request's header list being checked, field by field as HPACK decodes them.
#[derive(Default)]
pub(crate) struct HeadBuilder {
    method: Option<Vec<u8>>,
    scheme: bool,
    path: Option<Vec<u8>>,
    authority: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    content_length: Option<u64>,
    lines: Vec<u8>,
    regular_seen: bool,
    malformed: bool,
}

impl HeadBuilder {
    /// Takes one decoded field.
    pub(crate) fn field(&mut self, name: &[u8], value: &[u8]) {
        if !valid_value(value) {
            self.malformed = true;
            return;
        }
        if let Some(pseudo) = name.strip_prefix(b":") {
            let slot = match pseudo {
                _ if self.regular_seen => None,
                b"method" => Some(&mut self.method),
                b"path" => Some(&mut self.path),
                b"authority" => Some(&mut self.authority),
                b"scheme" if !self.scheme => {
                    self.scheme = true;
                    return;
                }
                _ => None,
            };
            match slot {
                Some(s) if s.is_none() => *s = Some(value.to_vec()),
                _ => self.malformed = true,
            }
            return;
        }
        self.regular_seen = true;
        if !valid_name(name)
            || CONNECTION_SPECIFIC.contains(&name)
            || (name == b"te" && value != b"trailers")
        {
            self.malformed = true;
            return;
        }
        if name == b"host" {
            self.host = Some(value.to_vec());
        }
        if name == b"content-length" {
            let n = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            match (n, self.content_length) {
                (Some(n), None) => self.content_length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => self.malformed = true,
            }
        }
        self.lines.extend_from_slice(name);
        self.lines.extend_from_slice(b": ");
        self.lines.extend_from_slice(value);
        self.lines.extend_from_slice(b"\r\n");
    }

    /// Checks a trailer section: regular fields only (RFC 9113 §8.1).
    pub(crate) fn trailers_ok(&self) -> bool {
        !self.malformed && self.method.is_none() && self.path.is_none() && !self.scheme
    }

    /// The declared `content-length`, if any.
    pub(crate) fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// The request as an HTTP/1.1 head, or `None` when it is malformed.
    pub(crate) fn finish(self) -> Option<Vec<u8>> {
        let (Some(method), Some(path), true, false) =
            (self.method, self.path, self.scheme, self.malformed)
        else {
            return None;
        };
        if path.is_empty() || !method.iter().all(|&b| TCHAR[usize::from(b)]) {
            return None;
        }
        if let (Some(a), Some(h)) = (&self.authority, &self.host) {
            if !a.eq_ignore_ascii_case(h) {
                return None;
            }
        }
        let mut head = Vec::with_capacity(method.len() + path.len() + self.lines.len() + 64);
        head.extend_from_slice(&method);
        head.push(b' ');
        head.extend_from_slice(&path);
        head.extend_from_slice(b" HTTP/1.1\r\n");
        if let (Some(a), None) = (&self.authority, &self.host) {
            head.extend_from_slice(b"host: ");
            head.extend_from_slice(a);
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(&self.lines);
        head.extend_from_slice(b"\r\n");
        Some(head)
    }
}

/// A field name of lowercase token characters.
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|&b| TCHAR[usize::from(b)] && !b.is_ascii_uppercase())
}

/// A field value with no CR, LF or NUL, and no white space at either end (RFC 9113 §8.2.1).
fn valid_value(v: &[u8]) -> bool {
    let ws = |b: &u8| *b == b' ' || *b == b'\t';
    !v.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0)
        && !v.first().is_some_and(ws)
        && !v.last().is_some_and(ws)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(fields: &[(&str, &str)]) -> Option<String> {
        let mut b = HeadBuilder::default();
        for (n, v) in fields {
            b.field(n.as_bytes(), v.as_bytes());
        }
        b.finish().map(|h| String::from_utf8(h).unwrap())
    }

    const BASE: [(&str, &str); 4] = [
        (":method", "GET"),
        (":scheme", "https"),
        (":path", "/a?b"),
        (":authority", "example.com"),
    ];

    #[test]
    fn a_request_becomes_an_h1_head_with_host_from_authority() {
        let mut f = BASE.to_vec();
        f.push(("accept", "*/*"));
        assert_eq!(
            build(&f).unwrap(),
            "GET /a?b HTTP/1.1\r\nhost: example.com\r\naccept: */*\r\n\r\n"
        );
    }

    #[test]
    fn malformed_requests_are_refused() {
        let with = |extra: (&'static str, &'static str)| {
            let mut f = BASE.to_vec();
            f.push(extra);
            build(&f)
        };
        assert!(with(("Accept", "x")).is_none(), "uppercase name");
        assert!(with(("connection", "close")).is_none());
        assert!(with(("te", "gzip")).is_none());
        assert!(with(("te", "trailers")).is_some());
        assert!(with(("x", "a\r\nb: c")).is_none(), "CR LF in a value");
        assert!(with(("x", " a")).is_none(), "leading white space");
        assert!(with((":method", "GET")).is_none(), "pseudo after regular");
        assert!(
            with(("host", "other.example")).is_none(),
            "host beside :authority"
        );
        assert!(with(("host", "EXAMPLE.com")).is_some());
        assert!(build(&BASE[..2]).is_none(), "no :path");
        assert!(build(&[BASE[0], BASE[1], BASE[2], (":status", "200")]).is_none());
        assert!(
            build(&[BASE[0], BASE[1], BASE[2], (":path", "/")]).is_none(),
            "twice"
        );
    }
}
