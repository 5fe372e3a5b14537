//! The server side of the WebSocket handshake, where requests meet the protocol: an
//! [`Acceptor`] checks a request (method, version, `Upgrade`, `Connection`, key, version 13,
//! origin), picks a subprotocol and permessage-deflate parameters, fills the 101, and leaves
//! on the response what runs on the connection once the 101 is out (`upgrade.rs`). A bad
//! handshake gets 400 (426 for another version), with `Sec-WebSocket-Version: 13`.

use std::sync::Arc;

use crate::method::{Method, Version};
use crate::request::Request;
use crate::response::Response;
use crate::upgrade::Upgraded;
use crate::ws::{self, Config, WebSocket};

type OriginCheck = dyn Fn(Option<&str>) -> bool + Send + Sync;

/// Accepts WebSocket handshakes: settings shared by every upgrade of a route (build one, use it
/// from the handler).
#[derive(Clone, Default)]
pub struct Acceptor {
    config: Config,
    protocols: Vec<String>,
    origin: Option<Arc<OriginCheck>>,
}

impl Acceptor {
    /// Accepts any origin and no subprotocol, with [`Config::new`].
    pub fn new() -> Acceptor {
        Acceptor::default()
    }

    /// The socket's limits, timers and compression.
    pub fn config(mut self, config: Config) -> Acceptor {
        self.config = config;
        self
    }

    /// The subprotocols served; the first one the client lists that is here is agreed (none
    /// agreed is not an error: the client decides).
    pub fn protocols(mut self, protocols: &[&str]) -> Acceptor {
        self.protocols = protocols.iter().map(|p| p.to_string()).collect();
        self
    }

    /// Refuses (403) a handshake whose `Origin` (absent: `None`) `check` rejects.
    pub fn check_origin(
        mut self,
        check: impl Fn(Option<&str>) -> bool + Send + Sync + 'static,
    ) -> Acceptor {
        self.origin = Some(Arc::new(check));
        self
    }

    /// Answers the handshake in `req`: a 101 that hands the connection to `on_open` (run in
    /// a fiber of its own once the 101 is sent), or the refusal, and says which.
    pub fn accept(
        &self,
        req: &Request<'_>,
        res: &mut Response,
        on_open: impl FnOnce(WebSocket) + Send + 'static,
    ) -> bool {
        let refuse = |res: &mut Response, status: u16, why: &'static str| {
            res.status(status)
                .header("Sec-WebSocket-Version", ws::VERSION)
                .content_type("text/plain")
                .body(why);
            false
        };
        if req.method() != Method::Get || req.version() != Version::Http11 {
            return refuse(res, 400, "a WebSocket handshake is an HTTP/1.1 GET\n");
        }
        if !ws::has_token(req.headers_named("upgrade"), "websocket")
            || !ws::has_token(req.headers_named("connection"), "upgrade")
        {
            return refuse(res, 426, "this resource is a WebSocket: upgrade required\n");
        }
        if req.header("sec-websocket-version") != Some(ws::VERSION.as_bytes()) {
            return refuse(res, 426, "WebSocket version 13 only\n");
        }
        let key = match req.header("sec-websocket-key") {
            Some(k) if ws::is_valid_key(k) => k,
            _ => return refuse(res, 400, "missing or invalid Sec-WebSocket-Key\n"),
        };
        if let Some(check) = &self.origin {
            if !check(req.header_str("origin")) {
                res.status(403)
                    .content_type("text/plain")
                    .body("origin refused\n");
                return false;
            }
        }
        let Ok(accept) = ws::accept_key(key.trim_ascii()) else {
            res.status(500);
            return false;
        };
        let protocol =
            ws::choose_protocol(req.headers_named("sec-websocket-protocol"), &self.protocols);
        let agreed = self.config.deflate.as_ref().and_then(|d| {
            let offers: Vec<&str> = req
                .headers_named("sec-websocket-extensions")
                .filter_map(|v| std::str::from_utf8(v).ok())
                .collect();
            ws::accept_offer(d, &offers)
        });
        res.status(101).header("Sec-WebSocket-Accept", accept);
        if let Some(p) = &protocol {
            res.header("Sec-WebSocket-Protocol", p);
        }
        if let Some((text, _)) = &agreed {
            res.header("Sec-WebSocket-Extensions", text);
        }
        let cfg = self.config.clone();
        res.upgrade(Box::new(move |up: Upgraded| {
            let agreed = agreed.map(|(_, a)| a);
            let inbound = ws::Inbound::new(
                true,
                cfg.max_frame,
                cfg.max_message,
                agreed.as_ref().map(ws::Inflater::new),
                up.leftover,
            );
            let out = ws::Outbound::new(false, agreed.as_ref().map(ws::Deflater::new));
            let read = ws::ReadSide::new(&cfg, inbound, Some(up.link));
            on_open(WebSocket::new(up.stream, read, out, protocol));
        }));
        true
    }

    /// Like [`accept`](Self::accept), but the socket waits between messages without a fiber
    /// (parked, its buffers released): `on_message` runs in a fresh fiber for each message
    /// (pings and the peer's close included, already answered) and may send on the socket.
    /// An idle socket then costs a few hundred bytes instead of a fiber's stack; only the
    /// handler can send (no other fiber holds the socket).
    pub fn accept_parked(
        &self,
        req: &Request<'_>,
        res: &mut Response,
        on_message: impl Fn(&mut WebSocket, ws::Message) + Send + Sync + 'static,
    ) -> bool {
        let on_message = Arc::new(on_message);
        self.accept(req, res, move |socket| ws::serve_parked(socket, on_message))
    }
}
