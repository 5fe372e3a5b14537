//! WebSocket client: `ws://` and `wss://` through the client's connections (DNS on the
//! offload pool, connect timeout, TLS verified as for `https`, CONNECT through a proxy for
//! both schemes), the opening handshake with a random key, and the answer checked (status,
//! `Upgrade`, `Connection`, accept value, subprotocol, permessage-deflate) before the
//! [`WebSocket`] is handed over.

use std::io::{BufRead, BufReader, Write};

use moria_runtime::Deadline;
use moria_streams::http_grammar::{is_field_value, is_token};

use super::conn::{dial, secure, Transport};
use super::proxy::tunnel;
use super::read::read_response;
use super::timing::Timing;
use super::url::Url;
use super::Client;
use crate::ws::{self, Config, Error, Result, WebSocket};

/// The longest handshake answer read.
const MAX_ANSWER_BODY: u64 = 64 * 1024;

/// A WebSocket connection being set up ([`Client::websocket`]).
pub struct WebSocketBuilder {
    client: Client,
    url: String,
    config: Config,
    protocols: Vec<String>,
    headers: Vec<(String, String)>,
}

impl Client {
    /// A WebSocket to `url` (`ws://` or `wss://`), with the client's timeouts, TLS roots and
    /// proxies.
    pub fn websocket(&self, url: &str) -> WebSocketBuilder {
        WebSocketBuilder {
            client: self.clone(),
            url: url.to_string(),
            config: Config::new(),
            protocols: Vec::new(),
            headers: Vec::new(),
        }
    }
}

fn handshake_error(e: impl std::fmt::Display) -> Error {
    Error::Handshake(e.to_string())
}

impl WebSocketBuilder {
    /// The socket's limits, timers and compression offer.
    pub fn config(mut self, config: Config) -> WebSocketBuilder {
        self.config = config;
        self
    }

    /// Subprotocols to offer, in order of preference.
    pub fn protocols(mut self, protocols: &[&str]) -> WebSocketBuilder {
        self.protocols = protocols.iter().map(|p| p.to_string()).collect();
        self
    }

    /// Adds a header to the handshake request (`Origin`, `Authorization`, cookies).
    pub fn header(mut self, name: &str, value: &str) -> WebSocketBuilder {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Connects, runs the handshake and returns the open socket.
    pub fn connect(self) -> Result<WebSocket> {
        let http = match self.url.split_once("://") {
            Some((s, rest)) if s.eq_ignore_ascii_case("ws") => format!("http://{rest}"),
            Some((s, rest)) if s.eq_ignore_ascii_case("wss") => format!("https://{rest}"),
            _ => {
                return Err(handshake_error(format!(
                    "{}: not a ws:// or wss:// URL",
                    self.url
                )))
            }
        };
        let url = Url::parse(&http).map_err(|e| handshake_error(format!("{}: {e}", self.url)))?;
        let inner = &self.client.inner;
        let config = &inner.config;
        let timing = Timing {
            deadline: config.timeout.map(Deadline::after),
            idle: config.read_timeout,
        };
        let proxy = inner.proxies.for_url(&url);
        let mut tcp =
            dial(&url, proxy, config.connect_timeout, &timing).map_err(handshake_error)?;
        if let (Some(proxy), false) = (proxy, url.is_https()) {
            tunnel(&mut tcp, &url, proxy, &timing).map_err(handshake_error)?;
        }
        let wait = timing.next_wait().map_err(handshake_error)?;
        tcp.set_read_timeout(Some(wait))?;
        tcp.set_write_timeout(Some(wait))?;
        let mut transport = secure(&url, tcp, &inner.tls).map_err(handshake_error)?;

        if let Some((name, _)) = self
            .headers
            .iter()
            .find(|(n, v)| !is_token(n.as_bytes()) || !is_field_value(v.as_bytes()))
        {
            return Err(handshake_error(format!("invalid header {name:?}")));
        }
        let key = ws::client_key()?;
        let request = self.request(&url, &key, config.user_agent.as_deref());
        transport.write_all(request.as_bytes())?;
        let mut reader = BufReader::new(transport);
        let answer = read_response(&mut reader, false, MAX_ANSWER_BODY)?;
        let leftover = reader.buffer().to_vec();
        reader.consume(leftover.len());
        let transport = reader.into_inner();

        let h = &answer.headers;
        if answer.status != 101 {
            return Err(handshake_error(format!(
                "{}: status {}",
                self.url, answer.status
            )));
        }
        if !ws::has_token(h.get_all("upgrade"), "websocket")
            || !ws::has_token(h.get_all("connection"), "upgrade")
        {
            return Err(handshake_error("the 101 lacks Upgrade: websocket"));
        }
        if h.get("sec-websocket-accept") != Some(ws::accept_key(key.as_bytes())?.as_str()) {
            return Err(handshake_error("wrong Sec-WebSocket-Accept"));
        }
        let protocol = h.get("sec-websocket-protocol").map(str::to_string);
        if protocol
            .as_ref()
            .is_some_and(|p| !self.protocols.contains(p))
        {
            return Err(handshake_error(
                "the server chose a subprotocol not offered",
            ));
        }
        let extensions: Vec<&str> = h
            .get_all("sec-websocket-extensions")
            .filter_map(|v| std::str::from_utf8(v).ok())
            .collect();
        let agreed = match &self.config.deflate {
            Some(d) => ws::check_response(d, &extensions)?,
            None if extensions.is_empty() => None,
            None => return Err(handshake_error("an extension not offered")),
        };

        let stream = match transport {
            Transport::Plain(s) => ws::Stream::Tcp(s),
            Transport::Tls(t) => ws::Stream::Tls(t),
        };
        stream.set_timeouts(None, Some(wait))?;
        let cfg = &self.config;
        let inbound = ws::Inbound::new(
            false,
            cfg.max_frame,
            cfg.max_message,
            agreed.as_ref().map(ws::Inflater::new),
            leftover,
        );
        let out = ws::Outbound::new(true, agreed.as_ref().map(ws::Deflater::new));
        let read = ws::ReadSide::new(cfg, inbound, None);
        Ok(WebSocket::new(stream, read, out, protocol))
    }

    /// The handshake request.
    fn request(&self, url: &Url, key: &str, agent: Option<&str>) -> String {
        let mut r = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: {}\r\n",
            url.target(),
            url.authority(),
            ws::VERSION
        );
        if !self.protocols.is_empty() {
            r.push_str(&format!(
                "Sec-WebSocket-Protocol: {}\r\n",
                self.protocols.join(", ")
            ));
        }
        if let Some(d) = &self.config.deflate {
            r.push_str(&format!("Sec-WebSocket-Extensions: {}\r\n", d.offer()));
        }
        if let Some(agent) = agent {
            r.push_str(&format!("User-Agent: {agent}\r\n"));
        }
        for (name, value) in &self.headers {
            r.push_str(&format!("{name}: {value}\r\n"));
        }
        r.push_str("\r\n");
        r
    }
}
