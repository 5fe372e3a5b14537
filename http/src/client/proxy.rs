//! Proxies: which requests go through one (per scheme, minus `NO_PROXY`), HTTP proxies for
//! `http` URLs (absolute-form requests), `CONNECT` tunnels for `https` URLs, and Basic proxy
//! credentials.

use std::io::{BufReader, Write};

use moria_runtime::net::TcpStream;

use super::error::{Error, Result, Violation};
use super::timing::Timing;
use super::url::Url;
use crate::h1::{encode_request, read_response_head, HeadError, Length};
use crate::limits::Limits;
use crate::percent::decode_path_into;

/// Largest CONNECT answer read from a proxy.
const MAX_CONNECT_HEAD: usize = 16 * 1024;
/// Most bytes asked of the proxy in one read while its answer arrives.
const CONNECT_READ: usize = 1024;

/// One proxy server: where it is, and the `Proxy-Authorization` value its credentials make.
#[derive(Debug, Clone)]
pub(crate) struct ProxyServer {
    /// `http://host:port/`.
    pub url: Url,
    /// `Basic …`, when the proxy URL carried `user:password@`.
    pub authorization: Option<String>,
}

impl ProxyServer {
    /// Parses `[http://][user:password@]host[:port]` (percent-escapes in the credentials are
    /// decoded); https proxies are not supported.
    pub(crate) fn parse(spec: &str) -> std::result::Result<ProxyServer, &'static str> {
        let spec = spec.trim();
        let rest = match spec.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some(_) => return Err("only http:// proxies are supported"),
            None => spec,
        };
        let authority_end = rest.find('/').unwrap_or(rest.len());
        let (credentials, host) = match rest[..authority_end].rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, &rest[..authority_end]),
        };
        let url = Url::parse(&format!("http://{host}/"))?;
        let authorization = match credentials {
            None => None,
            Some(c) => {
                let mut plain = String::new();
                if !decode_path_into(c.as_bytes(), &mut plain) {
                    return Err("bad percent-escape in the proxy credentials");
                }
                Some(format!(
                    "Basic {}",
                    moria_crypto::encoding::base64(plain.as_bytes())
                ))
            }
        };
        Ok(ProxyServer { url, authorization })
    }
}

/// The proxy settings of a client.
#[derive(Debug, Clone, Default)]
pub(crate) struct Proxies {
    /// For `http` URLs.
    pub http: Option<ProxyServer>,
    /// For `https` URLs (through CONNECT).
    pub https: Option<ProxyServer>,
    /// Hosts reached directly: exact names, domain suffixes (`example.com` covers
    /// `a.example.com`), or `*` for all.
    pub no_proxy: Vec<String>,
}

impl Proxies {
    /// Reads `http_proxy`, `https_proxy` and `no_proxy` through `lookup` (the environment, for
    /// [`super::ClientBuilder::proxy_from_env`]): lowercase first (the uppercase `HTTP_PROXY`
    /// is what a CGI request header can set), then uppercase. A lowercase name that is set is the one read, even blank; a blank value
    /// means none.
    pub(crate) fn read_env(
        &mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> std::result::Result<(), &'static str> {
        let var = |name: &str| {
            lookup(&name.to_ascii_lowercase())
                .or_else(|| lookup(name))
                .filter(|v| !v.trim().is_empty())
        };
        if let Some(p) = var("HTTP_PROXY") {
            self.http = Some(ProxyServer::parse(&p)?);
        }
        if let Some(p) = var("HTTPS_PROXY") {
            self.https = Some(ProxyServer::parse(&p)?);
        }
        if let Some(list) = var("NO_PROXY") {
            self.set_no_proxy(&list);
        }
        Ok(())
    }

    /// Sets the hosts reached directly from a comma-separated list.
    pub(crate) fn set_no_proxy(&mut self, list: &str) {
        self.no_proxy = list
            .split(',')
            .map(|h| h.trim().trim_start_matches('.').to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
    }

    /// The proxy `url` goes through, if any.
    pub(crate) fn for_url(&self, url: &Url) -> Option<&ProxyServer> {
        let proxy = if url.is_https() {
            self.https.as_ref()
        } else {
            self.http.as_ref()
        }?;
        let host = url.host_bare();
        let bypass = self.no_proxy.iter().any(|entry| {
            let entry = entry.trim_start_matches('[').trim_end_matches(']');
            entry == "*"
                || host == entry
                || (host.len() > entry.len()
                    && host.ends_with(entry)
                    && host.as_bytes()[host.len() - entry.len() - 1] == b'.')
        });
        (!bypass).then_some(proxy)
    }
}

/// Asks `proxy` (already connected as `stream`) for a tunnel to `url`'s host and port.
pub(crate) fn tunnel(
    stream: &mut TcpStream,
    url: &Url,
    proxy: &ProxyServer,
    timing: &Timing,
) -> Result<()> {
    let name = url.to_string();
    let io_error = |source| Error::Io {
        url: name.clone(),
        source,
    };
    let target = format!("{}:{}", url.host(), url.port());
    let fields: Vec<(String, String)> = proxy
        .authorization
        .iter()
        .map(|a| ("Proxy-Authorization".to_owned(), a.clone()))
        .collect();
    let mut head = Vec::new();
    encode_request(
        &mut head,
        "CONNECT",
        &target,
        &target,
        &fields,
        Length::Bodyless,
    );
    let wait = timing.next_wait().map_err(|phase| Error::Timeout {
        url: name.clone(),
        phase,
    })?;
    stream.set_write_timeout(Some(wait)).map_err(io_error)?;
    stream.set_read_timeout(Some(wait)).map_err(io_error)?;
    stream.write_all(&head).map_err(io_error)?;
    let limits = Limits {
        max_head: MAX_CONNECT_HEAD,
        ..Limits::default()
    };
    let protocol = |violation| Error::Protocol {
        url: name.clone(),
        violation,
    };
    // Bytes after the answer's head, read with it, would be lost to the tunnel: refused below.
    let mut reader = BufReader::with_capacity(CONNECT_READ, &mut *stream);
    let mut buf = Vec::new();
    // Rule 2 of RFC 9112 §6.3: a 2xx answer to CONNECT has no body; the tunnel starts there.
    let answer = read_response_head(&mut reader, &mut buf, &limits, true, |_| Ok(())).map_err(
        |e| match e {
            HeadError::Io(e) => match e.kind() {
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => Error::Timeout {
                    url: name.clone(),
                    phase: timing.expired_phase(),
                },
                _ => io_error(e),
            },
            HeadError::Closed => protocol(Violation::TruncatedHead),
            HeadError::Violation(v) => protocol(v),
        },
    )?;
    if !(200..300).contains(&answer.status) {
        return Err(Error::Proxy {
            url: name,
            status: answer.status,
        });
    }
    if !reader.buffer().is_empty() {
        return Err(protocol(Violation::BadStatusLine));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_and_credentials() {
        let p = ProxyServer::parse("http://us%40er:p%3Ass@proxy.local:3128").unwrap();
        assert_eq!((p.url.host(), p.url.port()), ("proxy.local", 3128));
        let basic = moria_crypto::encoding::base64(b"us@er:p:ss");
        assert_eq!(p.authorization, Some(format!("Basic {basic}")));
        let p = ProxyServer::parse("proxy.local:8080").unwrap();
        assert_eq!((p.url.port(), p.authorization), (8080, None));
        assert!(ProxyServer::parse("https://proxy.local").is_err());
        assert!(ProxyServer::parse("socks5://proxy.local").is_err());
        assert!(ProxyServer::parse("http://a:%zz@proxy.local").is_err());
    }

    #[test]
    fn no_proxy_matches_names_and_domains() {
        let mut p = Proxies {
            http: Some(ProxyServer::parse("http://proxy:1").unwrap()),
            https: None,
            no_proxy: Vec::new(),
        };
        p.set_no_proxy("localhost, .internal.example,10.0.0.1,[::1]");
        let via = |u: &str| p.for_url(&Url::parse(u).unwrap()).is_some();
        assert!(!via("http://localhost/"));
        assert!(!via("http://a.internal.example/"));
        assert!(!via("http://internal.example/"));
        assert!(via("http://notinternal.example/"));
        assert!(!via("http://10.0.0.1:8080/"));
        assert!(!via("http://[::1]/"));
        assert!(via("http://example.com/"));
        assert!(!via("https://example.com/"), "no https proxy set");
        p.set_no_proxy("*");
        assert!(p
            .for_url(&Url::parse("http://example.com/").unwrap())
            .is_none());
    }

    /// A lookup over `vars`, standing in for the process environment.
    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn from_env(vars: &[(&str, &str)]) -> std::result::Result<Proxies, &'static str> {
        let mut p = Proxies::default();
        p.read_env(env(vars))?;
        Ok(p)
    }

    /// The proxy's `host:port` that `url` goes through, or `None` for a direct connection.
    fn via(p: &Proxies, url: &str) -> Option<String> {
        let url = Url::parse(url).unwrap();
        p.for_url(&url)
            .map(|s| format!("{}:{}", s.url.host(), s.url.port()))
    }

    #[test]
    fn lowercase_names_win_over_uppercase() {
        let p = from_env(&[
            ("http_proxy", "http://lower:1"),
            ("HTTP_PROXY", "http://upper:1"),
            ("https_proxy", "lower-tls:2"),
            ("HTTPS_PROXY", "upper-tls:2"),
            ("no_proxy", "direct.lower"),
            ("NO_PROXY", "direct.upper"),
        ])
        .unwrap();
        assert_eq!(via(&p, "http://example.com/").as_deref(), Some("lower:1"));
        assert_eq!(
            via(&p, "https://example.com/").as_deref(),
            Some("lower-tls:2")
        );
        assert_eq!(p.no_proxy, ["direct.lower"]);
        assert_eq!(via(&p, "http://direct.lower/"), None);
        assert!(via(&p, "http://direct.upper/").is_some());
    }

    #[test]
    fn uppercase_names_alone_are_read() {
        let p = from_env(&[
            ("HTTP_PROXY", "http://upper:3128"),
            ("HTTPS_PROXY", "http://upper-tls:3129"),
            ("NO_PROXY", "direct.example"),
        ])
        .unwrap();
        assert_eq!(
            via(&p, "http://example.com/").as_deref(),
            Some("upper:3128")
        );
        assert_eq!(
            via(&p, "https://example.com/").as_deref(),
            Some("upper-tls:3129")
        );
        assert_eq!(via(&p, "https://direct.example/"), None);
    }

    #[test]
    fn each_scheme_takes_its_own_proxy() {
        let p = from_env(&[
            ("HTTP_PROXY", "http://plain:1"),
            ("HTTPS_PROXY", "http://tls:2"),
        ])
        .unwrap();
        assert_eq!(via(&p, "http://example.com/").as_deref(), Some("plain:1"));
        assert_eq!(via(&p, "https://example.com/").as_deref(), Some("tls:2"));
        // An http proxy alone is not used for https URLs, nor an https one for http URLs.
        let p = from_env(&[("http_proxy", "http://plain:1")]).unwrap();
        assert_eq!(via(&p, "https://example.com/"), None);
        let p = from_env(&[("https_proxy", "http://tls:2")]).unwrap();
        assert_eq!(via(&p, "http://example.com/"), None);
        // Nothing set, or only blanks: no proxy.
        assert!(from_env(&[]).unwrap().http.is_none());
        let p = from_env(&[("http_proxy", " "), ("HTTPS_PROXY", "")]).unwrap();
        assert!(p.http.is_none() && p.https.is_none());
    }

    #[test]
    fn no_proxy_from_the_environment_bypasses_both_proxies() {
        let proxies = [
            ("http_proxy", "http://plain:1"),
            ("https_proxy", "http://tls:2"),
        ];
        let with = |list: &str| {
            let mut vars = proxies.to_vec();
            vars.push(("no_proxy", list));
            from_env(&vars).unwrap()
        };
        // A comma list with spaces and empty entries; names compare case-insensitively.
        let p = with(" localhost ,, Internal.Example , .corp.example,10.0.0.1,::1 ");
        for direct in [
            "http://localhost:8080/",
            "https://localhost/",
            "http://internal.example/",
            "https://a.b.internal.example/",
            "http://corp.example/",
            "http://host.corp.example/",
            "http://10.0.0.1/",
            "http://[::1]:8080/",
            "http://LOCALHOST/",
        ] {
            assert_eq!(via(&p, direct), None, "{direct}");
        }
        // A suffix matches at a dot only; an exact name or address covers only itself.
        for proxied in [
            "http://notinternal.example/",
            "http://example/",
            "http://localhost.example.com/",
            "http://10.0.0.10/",
            "http://[::2]/",
        ] {
            assert!(via(&p, proxied).is_some(), "{proxied}");
        }
        assert_eq!(via(&p, "https://elsewhere/").as_deref(), Some("tls:2"));
        // `*` sends everything direct.
        let p = with("*");
        assert_eq!(via(&p, "http://example.com/"), None);
        assert_eq!(via(&p, "https://example.com/"), None);
    }

    #[test]
    fn a_malformed_proxy_in_the_environment_is_an_error() {
        for (name, value) in [
            ("http_proxy", "https://proxy.local"),
            ("HTTPS_PROXY", "socks5://proxy.local:1080"),
            ("https_proxy", "http://"),
            ("http_proxy", "http://proxy.local:notaport"),
            ("HTTP_PROXY", "http://a:%zz@proxy.local"),
            ("http_proxy", "http://pro xy:1"),
        ] {
            assert!(from_env(&[(name, value)]).is_err(), "{name}={value}");
        }
        // A malformed lowercase value is not rescued by a good uppercase one.
        let vars = [("http_proxy", "ftp://x"), ("HTTP_PROXY", "http://good:1")];
        assert!(from_env(&vars).is_err());
    }
}
