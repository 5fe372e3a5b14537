//! Testing an application without a socket: build a request ([`TestRequest`]), send it to any
//! [`Handler`] (a router, say) in-process, and inspect the [`TestResponse`]. The request goes
//! through the server's own head parser and the same dispatch step as a connection (errors
//! rendered, panics and invalid responses turned into 500); only the connection itself
//! (keep-alive, server-wide compression, `Date`/`Server` headers) is not there.
//!
//! ```
//! use moria_http::testing::TestRequest;
//! use moria_http::{HandlerResult, Request, Response, Router};
//!
//! fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
//!     res.body(format!("hello {}", req.param("name").unwrap_or("?")));
//!     Ok(())
//! }
//! let app = Router::new().get("/hello/:name", hello);
//! let res = TestRequest::get("/hello/ada").send(&app);
//! assert_eq!((res.status(), res.text()), (200, "hello ada"));
//! ```

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::app::Extensions;
use crate::body::RequestBody;
use crate::counters::Counters;
use crate::dispatch::Dispatcher;
use crate::h1::{take_head, Head, HeadScan, Input};
use crate::handler::Handler;
use crate::limits::Limits;
use crate::method::Method;
use crate::percent::decode_path_into;
use crate::request::{Params, Request};
use crate::response::{respond_error, BodyKind, Response};
use crate::tracker::ConnState;
use crate::transport::Transport;

/// A request to send in-process.
#[derive(Debug, Clone)]
pub struct TestRequest {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    peer: SocketAddr,
}

impl TestRequest {
    /// `method target` with `Host: test`, no body, from 127.0.0.1:40000.
    pub fn new(method: &str, target: &str) -> TestRequest {
        TestRequest {
            method: method.to_string(),
            target: target.to_string(),
            headers: Vec::new(),
            body: Vec::new(),
            peer: SocketAddr::from((Ipv4Addr::LOCALHOST, 40000)),
        }
    }

    /// A GET.
    pub fn get(target: &str) -> TestRequest {
        TestRequest::new("GET", target)
    }

    /// A POST.
    pub fn post(target: &str) -> TestRequest {
        TestRequest::new("POST", target)
    }

    /// A PUT.
    pub fn put(target: &str) -> TestRequest {
        TestRequest::new("PUT", target)
    }

    /// A DELETE.
    pub fn delete(target: &str) -> TestRequest {
        TestRequest::new("DELETE", target)
    }

    /// Adds a header field.
    pub fn header(mut self, name: &str, value: &str) -> TestRequest {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the body (sent with its `Content-Length`).
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> TestRequest {
        self.body = body.into();
        self
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json(self, value: &impl Serialize) -> TestRequest {
        let body = serde_json::to_vec(value).unwrap_or_default();
        self.header("Content-Type", "application/json").body(body)
    }

    /// Sets the client address.
    pub fn peer(mut self, peer: SocketAddr) -> TestRequest {
        self.peer = peer;
        self
    }

    /// The request as bytes on the wire.
    fn encode(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\nHost: test\r\n", self.method, self.target);
        for (n, v) in &self.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        if !self.body.is_empty() {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }

    /// Runs `handler` on this request and returns what the client would receive.
    pub fn send(&self, handler: &dyn Handler) -> TestResponse {
        let mut bytes = self.encode();
        let limits = Limits::default();
        let mut head = Head::default();
        let mut res = Response::new();
        let bounds = match take_head(&mut HeadScan::default(), &bytes, &limits, &mut head) {
            Ok(Some(b)) => b,
            Ok(None) => return TestResponse::error(400),
            Err(f) => return TestResponse::error(f.status()),
        };
        let (head_bytes, rest) = bytes.split_at_mut(bounds.end);
        let mut path_buf = String::new();
        let raw_path = head.path.get(head_bytes);
        let path = if head.path_escaped {
            if !decode_path_into(raw_path, &mut path_buf) {
                return TestResponse::error(400);
            }
            path_buf.as_str()
        } else if raw_path.is_empty() {
            "/"
        } else {
            std::str::from_utf8(raw_path).unwrap_or("/")
        };
        let (mut params, mut ext, mut sink) =
            (Params::default(), Extensions::default(), Memory::default());
        let buffered = rest.len();
        let mut req = Request {
            raw: head_bytes,
            head: &head,
            path,
            peer: self.peer,
            tls: None,
            params: &mut params,
            body: RequestBody::new(
                Input::new(rest, buffered, &mut sink),
                head.framing,
                false,
                limits.max_body,
            ),
            ext: &mut ext,
        };
        let (state, counters) = (ConnState::default(), Counters::default());
        let dispatcher = Dispatcher {
            handler,
            peer: self.peer,
            tls: None,
            state: &state,
            counters: &counters,
        };
        let route = head.route();
        dispatcher.call(&head_bytes[route.clone()], true, &mut req, &mut res, || {
            String::from_utf8_lossy(&head_bytes[route.clone()]).into_owned()
        });
        if let (_, crate::body::BodyOutcome::Failed(f)) = req.body.finish(limits.max_drain) {
            respond_error(&mut res, f.status());
        }
        TestResponse::from_response(res, head.method == Method::Head)
    }
}

/// What the client would receive.
#[derive(Debug, Clone)]
pub struct TestResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl TestResponse {
    fn error(status: u16) -> TestResponse {
        let mut res = Response::new();
        respond_error(&mut res, status);
        TestResponse::from_response(res, false)
    }

    fn from_response(mut res: Response, is_head: bool) -> TestResponse {
        let headers = String::from_utf8_lossy(&res.head.fields)
            .lines()
            .filter_map(|l| l.split_once(": "))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let body = if is_head {
            Vec::new()
        } else {
            let kind = std::mem::replace(&mut res.body, BodyKind::Empty);
            read_body(kind, &res.buf).unwrap_or_else(|e| e.to_string().into_bytes())
        };
        TestResponse {
            status: res.head.status,
            headers,
            body,
        }
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name` (case-insensitive), in order.
    pub fn headers_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body bytes (empty for HEAD).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The body as text (empty when not UTF-8).
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap_or("")
    }

    /// The body parsed as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_slice(&self.body)
    }
}

/// The bytes of a response body, whatever its kind.
fn read_body(kind: BodyKind, buf: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    match kind {
        BodyKind::Empty => {}
        BodyKind::Static(s) => out.extend_from_slice(s),
        BodyKind::Bytes(b) => out.extend_from_slice(&b),
        BodyKind::Buffer => out.extend_from_slice(buf),
        BodyKind::Reader(mut r, _) => {
            r.read_to_end(&mut out)?;
        }
        BodyKind::File(mut f, offset, len) => {
            f.seek(SeekFrom::Start(offset))?;
            f.take(len).read_to_end(&mut out)?;
        }
        BodyKind::Stream(f) => f(&mut out)?,
        BodyKind::Ranges(r) => {
            let mut memory = Memory(out);
            r.write_to(&mut memory)?;
            out = memory.0;
        }
    }
    Ok(out)
}

/// An in-memory transport: nothing to read (the request is all buffered); what is written is
/// kept (a multipart body; an interim `100 Continue`, ignored).
#[derive(Default)]
struct Memory(Vec<u8>);

impl Read for Memory {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Ok(0)
    }
}

impl Write for Memory {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transport for Memory {
    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn read_within(&mut self, _: &mut [u8], _: Duration) -> io::Result<Option<usize>> {
        Ok(Some(0))
    }
}
