//! [`AccessLogger`]: a `log::Log` that writes access-log records bare to their own [`Sink`] and
//! hands every other record to the application's logger.

use std::io::Write;

use log::{Level, Log, Metadata, Record};
use moria_runtime::log_file::LogFile;

use super::ACCESS_LOG_TARGET;

/// Where access-log lines go.
#[derive(Debug)]
pub enum Sink {
    /// Standard error, one line per request.
    Stderr,
    /// A file, reopened after `SIGHUP`.
    File(LogFile),
}

/// Access-log lines to a [`Sink`], everything else to `inner`. Writes block: install it behind
/// `QueuedLogger`, whose writer thread does the writing.
#[derive(Debug)]
pub struct AccessLogger<L> {
    inner: L,
    sink: Sink,
}

impl<L: Log> AccessLogger<L> {
    /// Splits access-log records off `inner` into `sink`.
    pub fn new(inner: L, sink: Sink) -> Self {
        AccessLogger { inner, sink }
    }
}

fn is_access(m: &Metadata<'_>) -> bool {
    m.target() == ACCESS_LOG_TARGET
}

impl<L: Log> Log for AccessLogger<L> {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        if is_access(m) {
            m.level() <= Level::Info
        } else {
            self.inner.enabled(m)
        }
    }

    fn log(&self, r: &Record<'_>) {
        if !is_access(r.metadata()) {
            return self.inner.log(r);
        }
        let line = r.args().to_string();
        let written = match &self.sink {
            Sink::Stderr => writeln!(std::io::stderr().lock(), "{line}"),
            Sink::File(f) => f.write_line(&line),
        };
        if let Err(e) = written {
            self.inner.log(
                &Record::builder()
                    .level(Level::Warn)
                    .target("moria_http::access_log")
                    .args(format_args!("cannot write the access log: {e}"))
                    .build(),
            );
        }
    }

    fn flush(&self) {
        self.inner.flush();
    }
}
