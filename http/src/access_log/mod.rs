//! The access log: one line per request in Common or Combined Log Format (what web log tools
//! read) or JSON lines (with the route pattern, request id and duration), written through `log`
//! under the target [`ACCESS_LOG_TARGET`] at `info` (formatted only when that target is on).
//! [`AccessLogger`] sends those lines, bare, to stderr or a [`LogFile`] reopened on `SIGHUP`,
//! and every other record to the application's logger; put it behind moria-runtime's
//! `QueuedLogger` so that no worker ever waits on the output.
//!
//! - `line.rs`: the three line formats and their escaping.
//! - `sink.rs`: [`AccessLogger`] and [`Sink`].
//! - here: [`Format`] (process-wide, [`set_format`]) and the entry the dispatch logs.
//!
//! [`LogFile`]: moria_runtime::log_file::LogFile

mod line;
mod sink;

use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::Duration;

pub use sink::{AccessLogger, Sink};

/// The `log` target of access-log lines.
pub const ACCESS_LOG_TARGET: &str = "moria_http::access";

/// An access-log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Common Log Format: `host - - [time] "request" status bytes`.
    Common,
    /// Combined Log Format: Common plus `"referer" "user-agent"` (the default).
    Combined,
    /// One JSON object per line, with route pattern, request id and duration.
    Json,
}

impl FromStr for Format {
    type Err = String;

    /// `common`, `combined` or `json`.
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "common" => Ok(Format::Common),
            "combined" => Ok(Format::Combined),
            "json" => Ok(Format::Json),
            _ => Err(format!(
                "unknown access log format {s:?} (common, combined, json)"
            )),
        }
    }
}

/// The process's access-log format.
static FORMAT: AtomicU8 = AtomicU8::new(Format::Combined as u8);

/// Sets the format of every server's access-log lines in this process (default Combined).
pub fn set_format(f: Format) {
    FORMAT.store(f as u8, Relaxed);
}

/// The format lines are written in now.
pub fn format() -> Format {
    match FORMAT.load(Relaxed) {
        0 => Format::Common,
        2 => Format::Json,
        _ => Format::Combined,
    }
}

/// What one access-log line says.
pub(crate) struct Entry<'a> {
    pub peer: SocketAddr,
    pub method: &'a [u8],
    pub target: &'a [u8],
    pub version: &'a str,
    pub status: u16,
    pub bytes: Option<u64>,
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
    /// The matched route pattern, if a router matched one.
    pub route: Option<&'a str>,
    /// The response's (else the request's) `X-Request-Id`.
    pub request_id: Option<&'a [u8]>,
    /// From the parsed head to the response head.
    pub duration: Option<Duration>,
}

/// Whether access logging is on (the `log` target is enabled at info).
pub(crate) fn enabled() -> bool {
    log::log_enabled!(target: ACCESS_LOG_TARGET, log::Level::Info)
}

/// Logs one request in the process's [`format`].
pub(crate) fn log(e: &Entry<'_>) {
    let line = line::format_line(format(), e, std::time::SystemTime::now());
    log::info!(target: ACCESS_LOG_TARGET, "{line}");
}
