//! The request a handler receives: a view over the parsed head in the connection's buffer,
//! route parameters, and the body as a `Read`.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::app::Extensions;
use crate::body::RequestBody;
use crate::h1::Head;
use crate::method::{Method, Version};
use crate::metrics::RouteStat;
use crate::percent;
use crate::tls_info::TlsInfo;

/// Route parameters, kept in one reusable arena per connection.
#[derive(Debug, Default)]
pub(crate) struct Params {
    arena: String,
    spans: Vec<(usize, usize, usize)>,
    /// The route that matched, for its pattern and duration histogram.
    pub(crate) route: Option<Arc<RouteStat>>,
}

impl Params {
    pub(crate) fn clear(&mut self) {
        self.arena.clear();
        self.spans.clear();
        self.route = None;
    }

    pub(crate) fn push(&mut self, name: &str, value: &str) {
        let a = self.arena.len();
        self.arena.push_str(name);
        let b = self.arena.len();
        self.arena.push_str(value);
        self.spans.push((a, b, self.arena.len()));
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.spans
            .iter()
            .find(|(a, b, _)| &self.arena[*a..*b] == name)
            .map(|&(_, b, c)| &self.arena[b..c])
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans
            .iter()
            .map(|&(a, b, c)| (&self.arena[a..b], &self.arena[b..c]))
    }
}

/// One HTTP request, valid while its handler runs.
pub struct Request<'a> {
    pub(crate) raw: &'a [u8],
    pub(crate) head: &'a Head,
    pub(crate) path: &'a str,
    pub(crate) peer: SocketAddr,
    pub(crate) tls: Option<&'a TlsInfo>,
    pub(crate) params: &'a mut Params,
    pub(crate) body: RequestBody<'a>,
    pub(crate) ext: &'a mut Extensions,
}

impl<'a> Request<'a> {
    /// The method.
    pub fn method(&self) -> Method {
        self.head.method
    }

    /// The method as sent (useful for [`Method::Other`]).
    pub fn method_str(&self) -> &str {
        ascii(self.head.method_span.get(self.raw))
    }

    /// The request target exactly as sent (path and query, still percent-encoded).
    pub fn target(&self) -> &str {
        ascii(self.head.target.get(self.raw))
    }

    /// The path, percent-decoded once (valid UTF-8, no NUL); `/` for an absolute-form target
    /// without a path.
    pub fn path(&self) -> &str {
        self.path
    }

    /// The raw query string after `?`, if any.
    pub fn query(&self) -> Option<&str> {
        self.head.query.map(|q| ascii(q.get(self.raw)))
    }

    /// The decoded `name=value` pairs of the query string.
    pub fn query_pairs(&self) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
        percent::query_pairs(self.query().unwrap_or(""))
    }

    /// The first decoded query parameter called `name`.
    pub fn query_param(&self, name: &str) -> Option<Cow<'_, str>> {
        self.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The protocol version.
    pub fn version(&self) -> Version {
        self.head.version
    }

    /// The first value of header `name` (case-insensitive), OWS trimmed.
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        let raw = self.raw;
        self.head
            .fields
            .iter()
            .find(|(n, _)| n.get(raw).eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v.get(raw))
    }

    /// The first value of header `name` as text, when it is valid UTF-8.
    pub fn header_str(&self, name: &str) -> Option<&'a str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Every value of header `name` (case-insensitive), in order.
    pub fn headers_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'a [u8]> + 's {
        let raw = self.raw;
        self.head
            .fields
            .iter()
            .filter(move |(n, _)| n.get(raw).eq_ignore_ascii_case(name.as_bytes()))
            .map(move |(_, v)| v.get(raw))
    }

    /// Every header field as `(name, value)`, in the order received.
    pub fn headers(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> {
        let raw = self.raw;
        self.head
            .fields
            .iter()
            .map(move |(n, v)| (ascii(n.get(raw)), v.get(raw)))
    }

    /// The client's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// The TLS session, for requests that came over HTTPS.
    pub fn tls(&self) -> Option<&TlsInfo> {
        self.tls
    }

    /// A route parameter (`:name` or `*name` in the matched pattern).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name)
    }

    /// The pattern of the route that matched (`/users/:id`), once a [`Router`](crate::Router)
    /// routed the request: the label of its duration metrics and access-log field.
    pub fn route_pattern(&self) -> Option<&str> {
        self.params.route.as_deref().map(RouteStat::pattern)
    }

    /// Every route parameter as `(name, value)`.
    pub fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter()
    }

    /// Whether the client allows the connection to stay open after this request.
    pub fn keep_alive(&self) -> bool {
        self.head.keep_alive
    }

    /// The body, as a `Read` over exactly this request's body bytes.
    pub fn body(&mut self) -> &mut RequestBody<'a> {
        &mut self.body
    }

    /// The request id a layer set ([`crate::layer::RequestId`]), if any.
    pub fn request_id(&self) -> Option<&str> {
        Some(self.ext.request_id.as_str()).filter(|id| !id.is_empty())
    }

    /// Sets the request id (what access logs and error logs print).
    pub fn set_request_id(&mut self, id: &str) {
        let ext = self.ext.touch();
        ext.request_id.clear();
        ext.request_id.push_str(id);
    }

    /// The user an authentication layer accepted, if any.
    pub fn user(&self) -> Option<&str> {
        self.ext.user.as_deref()
    }

    /// Records the authenticated user (authentication layers call this).
    pub fn set_user(&mut self, user: &str) {
        self.ext.touch().user = Some(user.to_string());
    }

    /// When the answer is due, if a [`crate::layer::Deadline`] set one: code that can bound
    /// its waits (a query timeout, a client call) should finish by then.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.ext.deadline
    }

    /// Values layers left for the handler (JWT claims, say).
    pub fn extensions(&self) -> &Extensions {
        self.ext
    }

    /// Values layers left for the handler, to add to.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        self.ext
    }

    pub(crate) fn set_params(&mut self, f: impl FnOnce(&mut Params)) {
        self.params.clear();
        f(self.params);
    }

    pub(crate) fn set_route(&mut self, route: &Arc<RouteStat>) {
        self.params.route = Some(Arc::clone(route));
    }
}

/// Text of bytes the parser already restricted to ASCII.
fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}
