//! [`LogFile`]: a file that log lines are appended to, reopened by path after `SIGHUP` so that
//! logrotate can move it away (rename, then `kill -HUP`) without losing lines.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// An append-only log file, reopened at its path before the first write after a `SIGHUP`.
/// Writes block: use it from a logger's writer thread (e.g. behind
/// [`QueuedLogger`](crate::logger::QueuedLogger)), never from a fiber.
#[derive(Debug)]
pub struct LogFile {
    path: PathBuf,
    file: Mutex<File>,
    hangup: Arc<AtomicBool>,
}

impl LogFile {
    /// Opens (creates) `path` for appending and arranges for `SIGHUP` to reopen it; from then on
    /// `SIGHUP` no longer ends the process.
    pub fn open(path: impl AsRef<Path>) -> io::Result<LogFile> {
        let path = path.as_ref().to_path_buf();
        let file = append(&path)?;
        let hangup = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hangup))?;
        Ok(LogFile {
            path,
            file: Mutex::new(file),
            hangup,
        })
    }

    /// The path the file is (re)opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` and a newline, reopening the file first if a `SIGHUP` came since the last
    /// line (if reopening fails, the old file keeps the line and the error is returned).
    pub fn write_line(&self, line: &str) -> io::Result<()> {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let mut reopen_failed = None;
        if self.hangup.swap(false, Ordering::Relaxed) {
            match append(&self.path) {
                Ok(f) => *file = f,
                Err(e) => reopen_failed = Some(e),
            }
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        file.write_all(&buf)?;
        reopen_failed.map_or(Ok(()), Err)
    }
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}
