//! REST over the ORM: a [`RestRequest`] in, a [`RestResponse`] out, independent of the server;
//! `Rest` is also a `moria_http::Handler`, mounted with [`Rest::routes`].
//!
//! | request | answer |
//! |---|---|
//! | `GET /root/T/ID` | 200, the row as a JSON object |
//! | `GET /root/T?select=&where=&sort=&limit=&offset=&format=` | 200, rows as JSON (see `params`) |
//! | `POST /root/T` + object | 201, `Location: /root/T/ID`, `{"id":ID}` |
//! | `PUT /root/T/ID` + object | 200, the updated row (only the fields given are written) |
//! | `DELETE /root/T/ID` | 204 |
//! | `PUT /root/Batch` + `{"T":["POST",{…},"PUT",{…},"DELETE",id,"SIMPLE",[…]],…}` | 200, `{"T":[ids…]}`, all-or-nothing |
//!
//! Errors are mORMot's `{"errorCode":N,"errorText":"…"}`: 400 malformed input (bad JSON,
//! unknown field, wrong type, bad parameter), 404 no
//! such table or row, 405 method, 409 unique violation, 413 body over the limit, 503 (with
//! `Retry-After`) the database is busy (SQLite locked past the busy timeout, or no pooled
//! PostgreSQL connection free in time), 504 statement timed out, 500 otherwise.
//!
//! Authentication is a moria-http layer on the router the routes are mounted on
//! (`moria_http::layer::BasicAuth`, `BearerAuth`); [`mormot_error`] renders the layers' errors
//! in the same format, and `moria_http::HttpError::from(orm_error)` maps an ORM error to its
//! status for handlers of one's own (`http_error.rs`).

mod http;
mod http_error;
mod ordered;
mod params;
mod resource;

use serde_json::Value as JsonValue;

pub use http_error::mormot_error;
use params::ListParams;
use resource::{Resource, Table};

use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::Model;

/// Largest request body accepted by default (16 MiB: a 10,000-row batch is about 1 MiB).
pub const DEFAULT_MAX_BODY: usize = 16 << 20;
/// Most rows a list request returns by default (and the implicit `limit`).
pub const DEFAULT_MAX_ROWS: i64 = 10_000;
/// The path segment of batch requests.
pub const BATCH: &str = "Batch";

/// What the REST layer needs from an HTTP request.
#[derive(Clone, Copy, Debug)]
pub struct RestRequest<'a> {
    /// Method, e.g. `GET`.
    pub method: &'a str,
    /// Path without the query string, e.g. `/root/Person/3`.
    pub path: &'a str,
    /// Raw query string without `?` (empty when absent).
    pub query: &'a str,
    /// Request body.
    pub body: &'a [u8],
}

/// What to send back; the body is JSON unless it is empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestResponse {
    /// Status code.
    pub status: u16,
    /// Extra headers (`Location`, `Allow`, `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
    /// Body bytes (`application/json` when non-empty).
    pub body: Vec<u8>,
}

impl RestResponse {
    fn json(status: u16, body: Vec<u8>) -> Self {
        RestResponse {
            status,
            headers: Vec::new(),
            body,
        }
    }

    /// A mORMot-style error body.
    pub fn error(status: u16, text: &str) -> Self {
        let body = serde_json::json!({ "errorCode": status, "errorText": text });
        RestResponse::json(status, body.to_string().into_bytes())
    }
}

/// Seconds a client is asked to wait (`Retry-After`) when the database is busy.
pub const RETRY_AFTER_SECS: u32 = 1;

/// The status an ORM error maps to (the one place this mapping lives).
pub fn status_of(e: &Error) -> u16 {
    match e {
        Error::NotFound { .. } | Error::NoSuchTable(_) => 404,
        e if e.is_busy() => 503,
        Error::Postgres(crate::pg::Error::Timeout(_)) => 504,
        Error::Conflict { .. } => 409,
        Error::TooLarge { .. } => 413,
        Error::Json(_)
        | Error::JsonShape(_)
        | Error::UnknownField { .. }
        | Error::WrongType { .. }
        | Error::UnsafeSql(_)
        | Error::ParamCount { .. }
        | Error::InvalidName(_)
        | Error::BadRequest(_)
        | Error::Constraint { .. } => 400,
        _ => 500,
    }
}

/// Tables of one database exposed under `/root/…`. Share it between connections with `Arc`.
pub struct Rest {
    db: Db,
    root: String,
    tables: Vec<Box<dyn Resource>>,
    max_body: usize,
    max_rows: i64,
}

impl Rest {
    /// Serves nothing yet, under `/{root}/`.
    pub fn new(db: Db, root: &str) -> Self {
        Rest {
            db,
            root: root.trim_matches('/').to_owned(),
            tables: Vec::new(),
            max_body: DEFAULT_MAX_BODY,
            max_rows: DEFAULT_MAX_ROWS,
        }
    }

    /// Exposes model `T` at `/{root}/{T::TABLE}`.
    pub fn table<T: Model>(mut self) -> Self {
        self.tables.push(Box::new(Table::<T>::new()));
        self
    }

    /// Largest accepted body. Default [`DEFAULT_MAX_BODY`].
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// Most rows per list. Default [`DEFAULT_MAX_ROWS`].
    pub fn max_rows(mut self, rows: i64) -> Self {
        self.max_rows = rows;
        self
    }

    /// The body limit, for the HTTP layer to check `Content-Length` before reading.
    pub fn body_limit(&self) -> usize {
        self.max_body
    }

    /// The database served.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Whether `path` is under this REST root.
    pub fn owns(&self, path: &str) -> bool {
        self.rest_of(path).is_some()
    }

    fn rest_of<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rest = path.strip_prefix('/')?.strip_prefix(self.root.as_str())?;
        match rest {
            "" => Some(""),
            r => r.strip_prefix('/'),
        }
    }

    fn resource(&self, name: &str) -> Result<&dyn Resource> {
        self.tables
            .iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
            .map(|t| &**t)
            .ok_or_else(|| Error::NoSuchTable(name.to_owned()))
    }

    /// Answers one request.
    pub fn handle(&self, req: &RestRequest<'_>) -> RestResponse {
        if req.body.len() > self.max_body {
            return self.too_large(req.body.len());
        }
        self.handle_within_limit(req)
    }

    fn too_large(&self, size: usize) -> RestResponse {
        let e = Error::TooLarge {
            size,
            limit: self.max_body,
        };
        RestResponse::error(status_of(&e), &e.to_string())
    }

    /// Answers a request whose body is within the limit.
    fn handle_within_limit(&self, req: &RestRequest<'_>) -> RestResponse {
        match self.route(req) {
            Ok(r) => r,
            Err(e) => {
                let status = status_of(&e);
                if status == 500 {
                    log::error!("{} {}: {e}", req.method, req.path);
                }
                let mut r = RestResponse::error(status, &e.to_string());
                if status == 503 {
                    r.headers
                        .push(("Retry-After", RETRY_AFTER_SECS.to_string()));
                }
                r
            }
        }
    }

    fn route(&self, req: &RestRequest<'_>) -> Result<RestResponse> {
        let rest = self
            .rest_of(req.path)
            .ok_or_else(|| Error::NoSuchTable(req.path.to_owned()))?;
        let mut parts = rest.split('/');
        let table = parts.next().unwrap_or_default();
        let id = parts.next();
        if parts.next().is_some() || table.is_empty() {
            return Err(Error::BadRequest(format!("unexpected path {}", req.path)));
        }
        if table == BATCH && id.is_none() {
            return match req.method {
                "PUT" | "POST" => self.batch(req.body),
                _ => Ok(method_not_allowed("PUT")),
            };
        }
        let res = self.resource(table)?;
        match id {
            None => match req.method {
                "GET" => {
                    let p = ListParams::parse(req.query)?;
                    Ok(RestResponse::json(
                        200,
                        res.list(&self.db, p, self.max_rows)?,
                    ))
                }
                "POST" => {
                    let new = res.create(&self.db, parse_body(req.body)?)?;
                    let mut r = RestResponse::json(201, format!("{{\"id\":{new}}}").into_bytes());
                    r.headers
                        .push(("Location", format!("/{}/{}/{new}", self.root, res.name())));
                    Ok(r)
                }
                _ => Ok(method_not_allowed("GET, POST")),
            },
            Some(id) => {
                let id: i64 = id
                    .parse()
                    .ok()
                    .filter(|id| *id > 0)
                    .ok_or_else(|| Error::BadRequest(format!("bad id {id:?}")))?;
                match req.method {
                    "GET" => Ok(RestResponse::json(200, res.get(&self.db, id)?)),
                    "PUT" => Ok(RestResponse::json(
                        200,
                        res.update(&self.db, id, parse_body(req.body)?)?,
                    )),
                    "DELETE" => {
                        res.delete(&self.db, id)?;
                        Ok(RestResponse::json(204, Vec::new()))
                    }
                    _ => Ok(method_not_allowed("GET, PUT, DELETE")),
                }
            }
        }
    }

    /// Runs every table's operations, tables in the order written, in one transaction.
    fn batch(&self, body: &[u8]) -> Result<RestResponse> {
        if body.is_empty() {
            return Err(Error::BadRequest("empty body".into()));
        }
        let tables: ordered::Ordered = serde_json::from_slice(body)?;
        let mut jobs = Vec::with_capacity(tables.0.len());
        for (name, ops) in &tables.0 {
            let res = self.resource(name)?;
            jobs.push((res.name(), res.prepare_batch(ops)?));
        }
        let results = self.db.transaction(move |c| {
            jobs.into_iter()
                .map(|(name, job)| Ok((name, job(c)?)))
                .collect::<Result<Vec<_>>>()
        })?;
        let mut out = Vec::with_capacity(64);
        out.push(b'{');
        for (i, (name, ids)) in results.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            serde_json::to_writer(&mut out, name)?;
            out.push(b':');
            serde_json::to_writer(&mut out, ids)?;
        }
        out.push(b'}');
        Ok(RestResponse::json(200, out))
    }
}

fn parse_body(body: &[u8]) -> Result<JsonValue> {
    if body.is_empty() {
        return Err(Error::BadRequest("empty body".into()));
    }
    Ok(serde_json::from_slice(body)?)
}

fn method_not_allowed(allow: &'static str) -> RestResponse {
    let mut r = RestResponse::error(405, "method not allowed");
    r.headers.push(("Allow", allow.to_owned()));
    r
}
