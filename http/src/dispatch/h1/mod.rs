//! HTTP/1.1 dispatch: for each head the codec's connection loop parsed, build the [`Request`]
//! over the read buffer (decoded path, body reader), run the handler through the
//! [`Dispatcher`], finish the body, and write the answer (`respond.rs`). Also the answer to a
//! request that broke a rule (`refuse`).

mod respond;

use std::cell::Cell;
use std::io;
use std::time::Instant;

use moria_runtime::ShutdownToken;

use super::Dispatcher;
use crate::access_log;
use crate::app::Extensions;
use crate::body::{BodyOutcome, RequestBody};
use crate::compress::Compression;
use crate::h1::{Conn, Dispatch, Failure, Framing, HeadBounds, Input, Next, Scratch};
use crate::h1::{INIT_READ_BUF, MIN_BODY_ROOM, WRITE_FLUSH_AT};
use crate::limits::Limits;
use crate::method::{Method, Version};
use crate::metrics::Tally;
use crate::percent::decode_path_into;
use crate::request::{Params, Request};
use crate::response::{respond_error, Response};
use crate::tracker::ConnState;
use crate::transport::Transport;
use crate::upgrade::OnUpgrade;

/// Server-wide settings an HTTP/1.1 connection needs.
pub(crate) struct ConnConfig {
    pub limits: Limits,
    /// The whole `Server: ...\r\n` line, if any.
    pub server_line: Option<Vec<u8>>,
    pub compression: Option<Compression>,
    /// Whether requests are counted and timed for metrics.
    pub metrics: bool,
}

/// One HTTP/1.1 connection's context: the [`Dispatch`] its loop calls.
pub(crate) struct ConnCtx<'c> {
    pub cfg: &'c ConnConfig,
    pub dispatcher: Dispatcher<'c>,
    pub token: &'c ShutdownToken,
    /// What takes the connection after a 101 the handler asked for (`Next::Upgrade`).
    pub upgrade: Cell<Option<OnUpgrade>>,
}

/// What dispatch keeps with each pooled working state: the response being built, the route's
/// parameters, the decoded path, and the compressor's scratch.
#[derive(Default)]
pub(crate) struct Exchange {
    res: Response,
    params: Params,
    ext: Extensions,
    path_buf: String,
    scratch: Vec<u8>,
    /// When the request's head was parsed, if the access log wants its duration.
    started: Option<Instant>,
    /// The metrics of the answers not yet written.
    tally: Tally,
}

impl Scratch for Exchange {
    fn clear(&mut self) {
        self.scratch.clear();
        if self.scratch.capacity() > WRITE_FLUSH_AT {
            self.scratch = Vec::new();
        }
        self.res.reset();
        self.res.trim(WRITE_FLUSH_AT);
        self.params.clear();
        self.ext.clear();
        self.path_buf.clear();
    }
}

impl Dispatch for ConnCtx<'_> {
    type Scratch = Exchange;

    fn limits(&self) -> &Limits {
        &self.cfg.limits
    }

    fn state(&self) -> &ConnState {
        self.dispatcher.state
    }

    fn token(&self) -> &ShutdownToken {
        self.token
    }

    fn serve<T: Transport>(
        &self,
        conn: &mut Conn<Exchange>,
        io: &mut T,
        bounds: HeadBounds,
    ) -> io::Result<Next> {
        let limits = &self.cfg.limits;
        let head_start = conn.start;
        let head_end = conn.start + bounds.end;
        let decoded = conn.head.path_escaped;
        if decoded
            && !decode_path_into(
                conn.head.path.get(&conn.rbuf[head_start..head_end]),
                &mut conn.app.path_buf,
            )
        {
            self.refuse(conn, io, Failure::BadPath)?;
            return Ok(Next::Close { linger: false });
        }

        let framing = conn.head.framing;
        let buffered = conn.filled - head_end;
        let body_buffered = match framing {
            Framing::Empty => true,
            Framing::Length(n) => n <= buffered as u64,
            Framing::Chunked => false,
        };
        if !body_buffered || conn.head.expect_continue {
            // Earlier answers go out before this request's body is awaited (and before any
            // 100 Continue), keeping order and never leaving a client waiting on us.
            self.sending(&mut conn.app);
            conn.flush(io)?;
            conn.set_read_timeout(io, limits.body_timeout)?;
            if conn.rbuf.len() - head_end < MIN_BODY_ROOM {
                conn.rbuf
                    .resize(head_end + MIN_BODY_ROOM.max(INIT_READ_BUF), 0);
            }
        }

        let fresh = conn.wbuf.is_empty();
        let app = &mut conn.app;
        if self.cfg.metrics {
            app.tally.start();
        }
        app.started = access_log::enabled().then(Instant::now);
        app.res.reset();
        let (head_part, rest) = conn.rbuf.split_at_mut(head_end);
        let raw = &head_part[head_start..];
        let raw_path = conn.head.path.get(raw);
        let path: &str = if decoded {
            &app.path_buf
        } else if raw_path.is_empty() || raw_path == b"/" {
            "/"
        } else {
            std::str::from_utf8(raw_path).unwrap_or("/")
        };
        let head = &conn.head;
        let mut req = Request {
            raw,
            head,
            path,
            peer: self.dispatcher.peer,
            tls: self.dispatcher.tls,
            params: &mut app.params,
            ext: &mut app.ext,
            body: RequestBody::new(
                Input::new(rest, buffered, io),
                framing,
                head.expect_continue,
                limits.max_body,
            ),
        };
        let log_route = || String::from_utf8_lossy(&raw[head.route()]).into_owned();
        self.dispatcher
            .call(&raw[head.route()], fresh, &mut req, &mut app.res, log_route);
        let ((pos, end), outcome) = req.body.finish(limits.max_drain);
        conn.start = head_end + pos;
        conn.filled = head_end + end;

        let mut keep = conn.head.keep_alive && !conn.app.res.close;
        let mut linger = false;
        match outcome {
            BodyOutcome::Complete => {}
            BodyOutcome::MustClose => {
                keep = false;
                linger = true;
            }
            BodyOutcome::Failed(f) => {
                log::debug!("{}: {f} -> {}", self.dispatcher.peer, f.status());
                respond_error(&mut conn.app.res, f.status());
                keep = false;
                linger = true;
            }
        }
        if self.token.is_triggered() {
            keep = false;
        }
        if conn.app.res.upgrade.is_some() {
            match (conn.app.res.head.status, keep) {
                (101, true) => {}
                (101, false) => respond_error(&mut conn.app.res, 503),
                _ => respond_error(&mut conn.app.res, 500),
            }
        }
        let version = conn.head.version;
        let is_head = conn.head.method == Method::Head;
        self.dispatcher.state.responding();
        let keep = self.write_response(
            conn,
            io,
            version,
            is_head,
            keep,
            Some((head_start, head_end)),
        )?;
        self.dispatcher.state.between();
        if self.cfg.metrics {
            let app = &mut conn.app;
            let status = app.res.status_code();
            app.tally
                .count(app.params.route.take(), conn.head.method, status);
        }
        if let Some(up) = conn.app.res.upgrade.take() {
            self.upgrade.set(Some(up));
            return Ok(Next::Upgrade);
        }
        Ok(match keep {
            true => Next::KeepAlive,
            false => Next::Close {
                linger: linger || conn.start < conn.filled,
            },
        })
    }

    fn sending(&self, app: &mut Exchange) {
        app.tally.commit(self.dispatcher.counters);
    }

    fn refuse<T: Transport>(
        &self,
        conn: &mut Conn<Exchange>,
        io: &mut T,
        f: Failure,
    ) -> io::Result<()> {
        log::debug!("{}: {f} -> {}", self.dispatcher.peer, f.status());
        respond_error(&mut conn.app.res, f.status());
        self.write_response(conn, io, Version::Http11, false, false, None)?;
        self.sending(&mut conn.app);
        conn.flush(io)?;
        conn.linger(io, self.dispatcher.state, self.token);
        Ok(())
    }
}
