//! The thread lane: dedicated OS threads each own a connection and take jobs from one shared
//! channel; the calling fiber parks on a one-message reply channel.

use std::thread::JoinHandle;

use moria_runtime::sync::{bounded, channel, Sender};

use super::{run_caught, Job, Opener};
use crate::conn::Conn;
use crate::error::{Error, Result};

/// Connection threads and the channel that feeds them; dropping it drains the queue, closes
/// the connections and joins the threads.
pub(crate) struct ThreadLane {
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl ThreadLane {
    pub(crate) fn open(n: usize, open: Opener, name: &str) -> Result<Self> {
        let (jobs, rx) = channel::<Job>();
        let mut lane = ThreadLane {
            jobs: Some(jobs),
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let (ready_tx, ready) = bounded::<Result<()>>(1);
            let rx = rx.clone();
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
            lane.threads.push(handle);
            ready
                .recv()
                .map_err(|_| Error::Offload("connection thread died while opening".into()))??;
        }
        Ok(lane)
    }

    pub(crate) fn call<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let (reply_tx, reply) = bounded::<Result<R>>(1);
        let job: Job = Box::new(move |conn| {
            let _ = reply_tx.send(run_caught(conn, f));
        });
        let jobs = self
            .jobs
            .as_ref()
            .ok_or_else(|| Error::Offload("database is closing".into()))?;
        jobs.send(job)
            .map_err(|_| Error::Offload("connection threads are gone".into()))?;
        reply
            .recv()
            .map_err(|_| Error::Offload("connection thread dropped the call".into()))?
    }
}

impl Drop for ThreadLane {
    fn drop(&mut self) {
        drop(self.jobs.take());
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                log::error!("a connection thread panicked");
            }
        }
    }
}
