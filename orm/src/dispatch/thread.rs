//! The thread dispatcher: dedicated OS threads, each owning a connection and its own job channel; a
//! call goes to the least busy thread (so one caller keeps hitting the same warm thread, and
//! no two threads wait on one condition variable) and the calling fiber parks on a
//! one-message reply channel.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use moria_runtime::sync::{bounded, channel, Sender};

use super::{run_caught, Job, Opener};
use crate::conn::Conn;
use crate::error::{Error, Result};

/// One connection thread: its queue and how many calls it has in hand.
struct Worker {
    jobs: Sender<Job>,
    busy: Arc<AtomicUsize>,
}

/// Connection threads; dropping the dispatcher lets each drain its queue, close its connection and
/// exit, and joins them.
pub(crate) struct ThreadDispatcher {
    workers: Vec<Worker>,
    threads: Vec<JoinHandle<()>>,
}

impl ThreadDispatcher {
    pub(crate) fn open(n: usize, open: Opener, name: &str) -> Result<Self> {
        let mut dispatcher = ThreadDispatcher {
            workers: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let (jobs, rx) = channel::<Job>();
            let (ready_tx, ready) = bounded::<Result<()>>(1);
            let open = open.clone();
            let handle = std::thread::Builder::new()
                .name(format!("moria-orm-{name}{i}"))
                .spawn(move || {
                    let conn = match open() {
                        Ok(c) => {
                            let _ = ready_tx.send(Ok(()));
                            c
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    while let Ok(job) = rx.recv() {
                        job(&conn);
                    }
                })?;
            dispatcher.threads.push(handle);
            dispatcher.workers.push(Worker {
                jobs,
                busy: Arc::new(AtomicUsize::new(0)),
            });
            ready
                .recv()
                .map_err(|_| Error::Offload("connection thread died while opening".into()))??;
        }
        Ok(dispatcher)
    }

    /// The first idle thread, else the one with the fewest calls in hand.
    fn pick(&self) -> &Worker {
        let mut best = &self.workers[0];
        let mut least = usize::MAX;
        for w in &self.workers {
            let busy = w.busy.load(Ordering::Relaxed);
            if busy == 0 {
                return w;
            }
            if busy < least {
                (best, least) = (w, busy);
            }
        }
        best
    }

    pub(crate) fn call<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let worker = self.pick();
        let busy = Arc::clone(&worker.busy);
        busy.fetch_add(1, Ordering::Relaxed);
        let (reply_tx, reply) = bounded::<Result<R>>(1);
        let job: Job = Box::new(move |conn| {
            let out = run_caught(conn, f);
            busy.fetch_sub(1, Ordering::Relaxed);
            let _ = reply_tx.send(out);
        });
        if worker.jobs.send(job).is_err() {
            worker.busy.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::Offload("connection thread is gone".into()));
        }
        reply
            .recv()
            .map_err(|_| Error::Offload("connection thread dropped the call".into()))?
    }
}

impl Drop for ThreadDispatcher {
    fn drop(&mut self) {
        self.workers.clear();
        let threads = std::mem::take(&mut self.threads);
        // Joining waits for the queued calls: off the fiber's worker, like any blocking wait.
        let joined = moria_runtime::blocking(move || {
            for t in threads {
                if t.join().is_err() {
                    log::error!("a connection thread panicked");
                }
            }
        });
        if let Err(e) = joined {
            log::error!("closing the connection threads: {e}");
        }
    }
}
