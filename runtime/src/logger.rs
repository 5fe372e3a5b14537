//! [`QueuedLogger`]: a `log` logger that never blocks the caller.
//!
//! A logger that writes in `log()` stalls the fiber's worker, and every socket it owns, as soon
//! as the write blocks (stderr is a pipe nobody reads, a full terminal, a slow disk). This one
//! formats the record on the caller and puts it on a bounded queue; one writer thread hands the
//! records to the wrapped logger (e.g. env_logger). When the queue is full the record is dropped
//! and counted; the next time the writer finds the queue empty it logs `dropped N log lines`.
//!
//! ```no_run
//! use moria_runtime::logger::{QueuedLogger, DEFAULT_CAPACITY};
//! let inner = env_logger::Builder::from_default_env().build();
//! let max = inner.filter();
//! QueuedLogger::start(inner, DEFAULT_CAPACITY)?.install(max)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use log::{Level, LevelFilter, Log, Metadata, Record, SetLoggerError};

/// Records the queue holds before it drops new ones.
pub const DEFAULT_CAPACITY: usize = 4096;
/// Longest `flush` waits for the writer.
pub const FLUSH_WAIT: Duration = Duration::from_secs(5);

/// One record, owned so that it can cross to the writer thread.
struct Line {
    level: Level,
    target: String,
    module_path: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    message: String,
}

enum Msg {
    Line(Line),
    /// Answered once every record queued before it has been written.
    Flush(SyncSender<()>),
}

/// A `log::Log` that queues records for a writer thread and drops them when the queue is full.
pub struct QueuedLogger {
    queue: SyncSender<Msg>,
    inner: Arc<dyn Log>,
    dropped: Arc<AtomicU64>,
}

impl std::fmt::Debug for QueuedLogger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueuedLogger")
            .field("dropped", &self.dropped.load(Relaxed))
            .finish()
    }
}

impl QueuedLogger {
    /// Wraps `inner` with a queue of `capacity` records (at least 1) and starts the writer thread.
    pub fn start(inner: impl Log + 'static, capacity: usize) -> io::Result<QueuedLogger> {
        let inner: Arc<dyn Log> = Arc::new(inner);
        let dropped = Arc::new(AtomicU64::new(0));
        let (queue, rx) = sync_channel(capacity.max(1));
        let (writer, counter) = (Arc::clone(&inner), Arc::clone(&dropped));
        std::thread::Builder::new()
            .name("moria-log".into())
            .spawn(move || write_all(rx, &*writer, &counter))?;
        Ok(QueuedLogger {
            queue,
            inner,
            dropped,
        })
    }

    /// Installs this logger for the `log` facade with `max` as the most verbose level.
    pub fn install(self, max: LevelFilter) -> Result<(), SetLoggerError> {
        log::set_logger(Box::leak(Box::new(self)))?;
        log::set_max_level(max);
        Ok(())
    }
}

impl Log for QueuedLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.inner.enabled(metadata)
    }

    fn log(&self, record: &Record<'_>) {
        if !self.inner.enabled(record.metadata()) {
            return;
        }
        let line = Line {
            level: record.level(),
            target: record.target().to_owned(),
            module_path: record.module_path().map(str::to_owned),
            file: record.file().map(str::to_owned),
            line: record.line(),
            message: record.args().to_string(),
        };
        if let Err(TrySendError::Full(_)) = self.queue.try_send(Msg::Line(line)) {
            self.dropped.fetch_add(1, Relaxed);
        }
    }

    /// Waits until every record queued so far has been written, at most [`FLUSH_WAIT`] (a
    /// stuck output cannot hold up an exit). Blocks the caller: call it at exit, not in a
    /// request.
    fn flush(&self) {
        let (done, wait) = sync_channel(1);
        let queue = self.queue.clone();
        // The queue may be full: the helper thread waits for room, this thread only for so long.
        let queued = std::thread::Builder::new()
            .name("moria-log-flush".into())
            .spawn(move || {
                let _ = queue.send(Msg::Flush(done));
            });
        if queued.is_ok() {
            let _ = wait.recv_timeout(FLUSH_WAIT);
        }
    }
}

/// The writer thread: records to `inner`; when the queue runs empty, the drop count.
fn write_all(rx: Receiver<Msg>, inner: &dyn Log, dropped: &AtomicU64) {
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(msg) = next {
            match msg {
                Msg::Line(l) => write_line(inner, &l),
                Msg::Flush(done) => {
                    report_dropped(inner, dropped);
                    inner.flush();
                    let _ = done.send(());
                }
            }
            next = rx.try_recv().ok();
        }
        report_dropped(inner, dropped);
        inner.flush();
    }
}

fn write_line(inner: &dyn Log, l: &Line) {
    inner.log(
        &Record::builder()
            .level(l.level)
            .target(&l.target)
            .module_path(l.module_path.as_deref())
            .file(l.file.as_deref())
            .line(l.line)
            .args(format_args!("{}", l.message))
            .build(),
    );
}

fn report_dropped(inner: &dyn Log, dropped: &AtomicU64) {
    let n = dropped.swap(0, Relaxed);
    if n > 0 {
        inner.log(
            &Record::builder()
                .level(Level::Warn)
                .target("moria_runtime::logger")
                .args(format_args!(
                    "dropped {n} log lines (the log output could not keep up)"
                ))
                .build(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Keeps lines; blocks in `log` while the gate is held.
    struct Gated {
        gate: Arc<Mutex<()>>,
        lines: Arc<Mutex<Vec<String>>>,
    }

    impl Log for Gated {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn log(&self, r: &Record<'_>) {
            let _held = self.gate.lock().unwrap();
            self.lines.lock().unwrap().push(r.args().to_string());
        }
        fn flush(&self) {}
    }

    fn record(logger: &QueuedLogger, text: &str) {
        logger.log(
            &Record::builder()
                .level(Level::Info)
                .args(format_args!("{text}"))
                .build(),
        );
    }

    #[test]
    fn a_blocked_writer_drops_and_counts_then_reports_when_drained() {
        let gate = Arc::new(Mutex::new(()));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let inner = Gated {
            gate: Arc::clone(&gate),
            lines: Arc::clone(&lines),
        };
        let logger = QueuedLogger::start(inner, 2).unwrap();
        let held = gate.lock().unwrap();
        // The writer takes at most one line and blocks on it; the queue holds two more.
        for i in 0..10 {
            record(&logger, &format!("line {i}"));
        }
        assert!(logger.dropped.load(Relaxed) >= 7, "{logger:?}");
        drop(held);
        logger.flush();
        let lines = lines.lock().unwrap();
        let kept = lines.iter().filter(|l| l.starts_with("line ")).count();
        let report = lines.last().unwrap();
        assert_eq!(
            *report,
            format!(
                "dropped {} log lines (the log output could not keep up)",
                10 - kept
            )
        );
        assert_eq!(logger.dropped.load(Relaxed), 0);
    }
}
