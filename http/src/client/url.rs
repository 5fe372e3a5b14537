//! The URLs the client requests: `http` and `https` only, parsed into what the wire and the
//! pool need, and resolved against a base for redirects (RFC 3986 §5.2, the common cases).

use std::fmt;

/// An `http` or `https` URL: scheme, host, port, and the request target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    https: bool,
    host: String,
    port: u16,
    explicit_port: bool,
    target: String,
}

/// Why a URL was refused.
pub(crate) type UrlError = &'static str;

impl Url {
    /// Parses an absolute `http://` or `https://` URL (the fragment is dropped).
    pub fn parse(s: &str) -> Result<Url, UrlError> {
        if s.bytes().any(|c| c <= b' ' || c == 0x7f) {
            return Err("whitespace or control character");
        }
        let (scheme, rest) = s.split_once("://").ok_or("not an absolute URL")?;
        let https = if scheme.eq_ignore_ascii_case("https") {
            true
        } else if scheme.eq_ignore_ascii_case("http") {
            false
        } else {
            return Err("scheme is neither http nor https");
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(split);
        if authority.contains('@') {
            return Err("credentials in the URL are not supported");
        }
        let (host, port) = split_port(authority)?;
        if host.is_empty() {
            return Err("empty host");
        }
        let target = match target {
            "" => "/".to_owned(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_owned(),
        };
        if !target.is_ascii() {
            return Err("non-ASCII character (percent-encode it)");
        }
        let default = if https { 443 } else { 80 };
        Ok(Url {
            https,
            host: host.to_ascii_lowercase(),
            port: port.unwrap_or(default),
            explicit_port: port.is_some_and(|p| p != default),
            target,
        })
    }

    /// Resolves `reference` (a Location value) against this URL.
    pub fn join(&self, reference: &str) -> Result<Url, UrlError> {
        if reference.contains("://") {
            return Url::parse(reference);
        }
        let scheme = if self.https { "https" } else { "http" };
        if let Some(rest) = reference.strip_prefix("//") {
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let target = if reference.starts_with('/') {
            reference.to_owned()
        } else if reference.starts_with('?') {
            format!("{}{reference}", self.path())
        } else if reference.is_empty() || reference.starts_with('#') {
            self.target.clone()
        } else {
            let dir = &self.path()[..self.path().rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{reference}")
        };
        Url::parse(&format!(
            "{scheme}://{}{}",
            self.authority(),
            remove_dots(&target)
        ))
    }

    /// Whether the scheme is `https`.
    pub fn is_https(&self) -> bool {
        self.https
    }

    /// The host, lowercase (an IPv6 literal keeps its brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The host without IPv6 brackets, for resolution and TLS.
    pub fn host_bare(&self) -> &str {
        self.host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(&self.host)
    }

    /// The port (the scheme's default when the URL has none).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The request target: path and query.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("/")
    }

    /// `host[:port]` as the Host header carries it (the port only when not the default).
    pub fn authority(&self) -> String {
        if self.explicit_port {
            format!("{}:{}", self.host, self.port)
        } else {
            self.host.clone()
        }
    }

    /// Whether `other` has the same scheme, host and port.
    pub fn same_origin(&self, other: &Url) -> bool {
        self.https == other.https && self.host == other.host && self.port == other.port
    }

    /// Appends `name=value` to the query, percent-encoding both.
    pub(crate) fn append_query(&mut self, name: &str, value: &str) {
        let sep = if self.target.contains('?') { '&' } else { '?' };
        self.target.push(sep);
        encode_component(name, &mut self.target);
        self.target.push('=');
        encode_component(value, &mut self.target);
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.authority(), self.target)
    }
}

/// Splits `host[:port]` (IPv6 literals in brackets).
fn split_port(authority: &str) -> Result<(&str, Option<u16>), UrlError> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']').ok_or("unclosed IPv6 literal")?;
        match &authority[end + 1..] {
            "" => (&authority[..=end], None),
            p => (
                &authority[..=end],
                Some(p.strip_prefix(':').ok_or("junk after IPv6 literal")?),
            ),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if !host
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._~[]:%".contains(&c))
    {
        return Err("invalid character in host");
    }
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or("invalid port")?,
        ),
    };
    Ok((host, port))
}

/// RFC 3986 §5.2.4: removes `.` and `..` segments from a path (the query is kept as is).
fn remove_dots(target: &str) -> String {
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." if last => out.push(""),
            "." => {}
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let mut s = String::with_capacity(target.len());
    for seg in &out {
        s.push('/');
        s.push_str(seg);
    }
    if s.is_empty() {
        s.push('/');
    }
    if let Some(q) = query {
        s.push('?');
        s.push_str(q);
    }
    s
}

/// Percent-encodes everything but unreserved characters (RFC 3986 §2.3).
fn encode_component(s: &str, out: &mut String) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_parts_and_defaults() {
        let u = Url::parse("HTTPS://Example.COM/a/b?x=1#frag").unwrap();
        assert!(u.is_https());
        assert_eq!(
            (u.host(), u.port(), u.target()),
            ("example.com", 443, "/a/b?x=1")
        );
        assert_eq!(u.authority(), "example.com");
        let u = Url::parse("http://127.0.0.1:8080?q").unwrap();
        assert_eq!(
            (u.port(), u.target(), u.authority().as_str()),
            (8080, "/?q", "127.0.0.1:8080")
        );
        let u = Url::parse("http://[::1]:81/").unwrap();
        assert_eq!((u.host(), u.host_bare(), u.port()), ("[::1]", "::1", 81));
    }

    #[test]
    fn refuses_what_cannot_be_requested() {
        for bad in [
            "ftp://x/",
            "x/y",
            "http:///a",
            "http://a b/",
            "http://h:0/",
            "http://h:99999/",
            "http://u:p@h/",
            "http://[::1/",
            "http://h/\r\nX: y",
            "http://h/é",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn joins_references() {
        let base = Url::parse("http://h:81/a/b/c?q=1").unwrap();
        let join = |r| base.join(r).unwrap().to_string();
        assert_eq!(join("https://o/x"), "https://o/x");
        assert_eq!(join("//o2/y"), "http://o2/y");
        assert_eq!(join("/z?k"), "http://h:81/z?k");
        assert_eq!(join("d"), "http://h:81/a/b/d");
        assert_eq!(join("../d"), "http://h:81/a/d");
        assert_eq!(join("../../../../d"), "http://h:81/d");
        assert_eq!(join("./"), "http://h:81/a/b/");
        assert_eq!(join("?n=2"), "http://h:81/a/b/c?n=2");
    }

    #[test]
    fn query_pairs_are_encoded() {
        let mut u = Url::parse("http://h/p").unwrap();
        u.append_query("a b", "x&y=z");
        u.append_query("k", "é");
        assert_eq!(u.target(), "/p?a%20b=x%26y%3Dz&k=%C3%A9");
    }
}
