//! The driver: the one fiber at a time that writes a shared connection's queued requests and
//! reads the answers in order, handing each to its fiber; its own answer's rows go straight to
//! its own row handler as they arrive. And what happens when the connection dies.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::BytesMut;

use super::super::connection::Connection;
use super::super::error::{Error, Result};
use super::super::rows::{RowRef, RowSet};
use super::state::{lock, Done, ExpectedReply, Slot, SlotState};
use super::SharedClient;
use crate::metrics;

/// A fiber's handler for the rows of its own request.
pub(super) type RowSink<'s> = &'s mut dyn FnMut(RowRef<'_>) -> Result<()>;

/// A panic caught in a row handler, resumed once the connection is handed on.
pub(super) type Panic = Box<dyn Any + Send>;

impl SharedClient {
    /// Writes queued requests and reads answers in order until `own` is answered (its rows to
    /// `sink` when there is one), then hands the connection to the next waiting fiber. Returns
    /// the panic of `sink`, if it panicked, for the caller to resume.
    pub(super) fn drive(&self, own: &Arc<Slot>, sink: &mut Option<RowSink<'_>>) -> Option<Panic> {
        let Some(mut client) = lock(&self.inner.state).client.take() else {
            self.fail_all(None, Error::protocol("shared connection without a driver"));
            return None;
        };
        let mut panicked: Option<Panic> = None;
        loop {
            if !client.has_message() {
                // Before a write or a read that may wait, the fibers that are ready on this
                // worker run first and queue their statements, so those go out in this write
                // (tokio-postgres gets the same from its connection task running after the
                // tasks that are ready). Without it a server on the same CPU answers each
                // statement before the next is queued: one write per statement
                // (bench/results/2026-12-01-tfb-database-rows.md).
                moria_runtime::yield_now();
            }
            let (bytes, head) = {
                let mut st = lock(&self.inner.state);
                // Write only before the socket read would wait (or when the head is not
                // written yet): requests queued meanwhile then go out together.
                let bytes = if st.sent == 0 || !client.has_message() {
                    st.take_sendable()
                } else {
                    BytesMut::new()
                };
                let head = st.queue.front().map(|r| (r.slot.clone(), r.kind.clone()));
                (bytes, head)
            };
            let Some((slot, kind)) = head else {
                self.fail_all(
                    Some(client),
                    Error::protocol("shared connection lost a request"),
                );
                return panicked;
            };
            if !bytes.is_empty() {
                client.wbuf = bytes;
                if let Err(e) = client.flush() {
                    self.fail_all(Some(client), e);
                    return panicked;
                }
            }
            let mine = Arc::ptr_eq(&slot, own);
            let mut in_handler = false;
            let got = match catch_unwind(AssertUnwindSafe(|| {
                client.begin_op()?;
                match (&kind, sink.as_mut().filter(|_| mine)) {
                    (ExpectedReply::Execute(columns), Some(sink)) => client
                        .read_execute(columns, &mut |row| {
                            in_handler = true;
                            let r = sink(row);
                            in_handler = false;
                            r
                        })
                        .map(Done::Streamed),
                    _ => read(&mut client, &kind),
                }
            })) {
                Ok(got) => got,
                // The row handler panicked (its row is still unread in the buffer): the rest of
                // the answer is read for the requests behind it, the panic resumed later.
                Err(p) if in_handler => {
                    panicked = Some(p);
                    client
                        .drain(Some(Error::protocol("the row handler panicked")))
                        .map(|_| Done::Streamed(0))
                }
                // A panic of the reader itself (a bug) must not strand the fibers waiting on
                // this connection.
                Err(p) => {
                    self.fail_all(Some(client), Error::protocol("the reader panicked"));
                    resume_unwind(p)
                }
            };
            client.end_op();
            if client.is_broken() {
                self.fail_all(Some(client), got.err().unwrap_or(Error::Closed));
                return panicked;
            }
            let mut st = lock(&self.inner.state);
            if st.pop_answered().is_some() {
                self.inner.queued.fetch_sub(1, Ordering::Relaxed);
                metrics::PG_SHARED_QUEUED.fetch_sub(1, Ordering::Relaxed);
            }
            if mine {
                st.client = Some(client);
                // The newest request drives next: its answer comes last, so it reads every answer
                // before its own and wakes their fibers, instead of one driver per answer.
                let next = st.queue.back().map(|r| r.slot.clone());
                st.driving = next.is_some();
                // Wakes happen outside the state lock: setting an event may park this fiber,
                // and a worker blocked on a std lock held by a parked fiber would stall.
                drop(st);
                own.put(SlotState::Done(got));
                if let Some(next) = next {
                    next.put(SlotState::Drive);
                }
                return panicked;
            }
            drop(st);
            slot.put(SlotState::Done(got));
        }
    }

    /// The connection is gone: every request fails (the head with `e`), later calls get
    /// [`Error::Closed`].
    pub(super) fn fail_all(&self, client: Option<Connection>, e: Error) {
        drop(client);
        let queue = {
            let mut st = lock(&self.inner.state);
            st.broken = true;
            st.driving = false;
            st.out.clear();
            st.sent = 0;
            st.in_flight = 0;
            let was = self.inner.queued.swap(0, Ordering::Relaxed);
            metrics::PG_SHARED_QUEUED.fetch_sub(was as i64, Ordering::Relaxed);
            std::mem::take(&mut st.queue)
        };
        let mut e = Some(e);
        for r in queue {
            let err = match e.take() {
                Some(first) => first,
                None => Error::Closed,
            };
            r.slot.put(SlotState::Done(Err(err)));
        }
    }
}

/// Reads the answer to one request for the fiber that waits for it.
fn read(client: &mut Connection, kind: &ExpectedReply) -> Result<Done> {
    match kind {
        ExpectedReply::Prepare(name) => client.read_prepare_reply(name).map(Done::Prepared),
        ExpectedReply::Execute(columns) => {
            let mut rows = RowSet::new(columns.clone());
            let n = client.read_execute(columns, &mut |r| {
                rows.push(r);
                Ok(())
            })?;
            Ok(Done::Rows(rows, n))
        }
    }
}
