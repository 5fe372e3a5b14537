//! What a shared connection's fibers share under its lock: the FIFO of requests, the bytes
//! not written yet, the in-flight bound, the statement cache; and the slot each fiber waits on.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::BytesMut;
use moria_runtime::sync::Semaphore;
use postgres_protocol::message::frontend;

use super::super::cache::StmtCache;
use super::super::codec::{encode_execute, encode_prepare, Params};
use super::super::connection::Connection;
use super::super::error::Result;
use super::super::row::{Column, Statement};
use super::super::rows::RowSet;

/// Most request bytes written to the server and not yet answered before the driver waits for
/// answers (a single larger request is still written, alone).
pub const MAX_IN_FLIGHT_BYTES: usize = 64 * 1024;

/// What the answer at the head of the FIFO is.
#[derive(Clone)]
pub(super) enum ExpectedReply {
    Prepare(Arc<str>),
    Execute(Arc<[Column]>),
}

/// A finished request.
pub(super) enum Done {
    Prepared(Statement),
    /// Rows another fiber read for this one, and the affected-row count.
    Rows(RowSet, u64),
    /// Rows this fiber handed to its own row handler as they arrived, and the count.
    Streamed(u64),
}

pub(super) enum SlotState {
    Waiting,
    Drive,
    Done(Result<Done>),
}

/// Where a fiber waits for its answer, or for the driver role.
pub(super) struct Slot {
    state: Mutex<SlotState>,
    /// Released once per `put`: an atomic when nobody waits yet.
    wake: Semaphore,
}

impl Slot {
    pub(super) fn new() -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(SlotState::Waiting),
            wake: Semaphore::new(0),
        })
    }

    pub(super) fn put(&self, s: SlotState) {
        *lock(&self.state) = s;
        self.wake.release();
    }

    pub(super) fn take(&self) -> SlotState {
        std::mem::replace(&mut *lock(&self.state), SlotState::Waiting)
    }

    /// Parks the fiber until the next `put`.
    pub(super) fn wait(&self) {
        self.wake.acquire();
    }
}

pub(super) struct Request {
    pub(super) slot: Arc<Slot>,
    pub(super) kind: ExpectedReply,
    pub(super) len: usize,
}

pub(super) struct State {
    /// The connection, here while no fiber drives.
    pub(super) client: Option<Connection>,
    /// Encoded requests `queue[sent..]`, in order.
    pub(super) out: BytesMut,
    /// Requests not answered yet, in wire order.
    pub(super) queue: VecDeque<Request>,
    /// Requests at the front of `queue` already written.
    pub(super) sent: usize,
    /// Bytes of those.
    pub(super) in_flight: usize,
    pub(super) driving: bool,
    pub(super) broken: bool,
    pub(super) cache: StmtCache,
    next_name: u64,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    /// A connection nobody drives, with a statement cache of `cache` entries.
    pub(super) fn new(client: Connection, cache: usize) -> State {
        State {
            client: Some(client),
            out: BytesMut::new(),
            queue: VecDeque::new(),
            sent: 0,
            in_flight: 0,
            driving: false,
            broken: false,
            cache: StmtCache::new(cache),
            next_name: 0,
        }
    }

    /// The queued bytes the driver may write now (whole requests, bounded by
    /// [`MAX_IN_FLIGHT_BYTES`]).
    pub(super) fn take_sendable(&mut self) -> BytesMut {
        let mut n = 0;
        while let Some(r) = self.queue.get(self.sent) {
            if self.in_flight > 0 && self.in_flight + r.len > MAX_IN_FLIGHT_BYTES {
                break;
            }
            self.in_flight += r.len;
            n += r.len;
            self.sent += 1;
        }
        self.out.split_to(n)
    }

    /// Removes the request at the head, whose answer has been read, from the window.
    pub(super) fn pop_answered(&mut self) -> Option<Request> {
        let r = self.queue.pop_front()?;
        self.sent -= 1;
        self.in_flight -= r.len;
        Some(r)
    }

    pub(super) fn prepare(&mut self, sql: &str) -> Result<ExpectedReply> {
        self.next_name += 1;
        let name: Arc<str> = format!("moria_p{}", self.next_name).into();
        encode_prepare(&mut self.out, &name, sql)?;
        frontend::sync(&mut self.out);
        Ok(ExpectedReply::Prepare(name))
    }

    pub(super) fn execute(
        &mut self,
        stmt: &Statement,
        params: Params<'_>,
    ) -> Result<ExpectedReply> {
        encode_execute(&mut self.out, stmt, params)?;
        Ok(ExpectedReply::Execute(stmt.columns.clone()))
    }

    /// The statement to use for `key` after preparing `ours`: the cached one when another
    /// fiber prepared it meanwhile (ours is closed), else ours, now cached.
    pub(super) fn adopt(&mut self, key: &str, ours: Statement) -> Result<Statement> {
        match self.cache.get(key) {
            Some(theirs) => {
                frontend::close(b'S', &ours.name, &mut self.out)?;
                Ok(theirs)
            }
            None => {
                self.cache.insert(key, &ours, &mut self.out)?;
                Ok(ours)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests of `lens` bytes through the real window: how many each successive
    /// `take_sendable` releases as the answers are read one by one, and the most bytes ever
    /// in flight.
    fn releases(lens: &[usize]) -> (Vec<usize>, usize) {
        let mut st = State {
            client: None,
            out: BytesMut::from(&vec![0u8; lens.iter().sum()][..]),
            queue: lens
                .iter()
                .map(|&len| Request {
                    slot: Slot::new(),
                    kind: ExpectedReply::Prepare("s".into()),
                    len,
                })
                .collect(),
            sent: 0,
            in_flight: 0,
            driving: true,
            broken: false,
            cache: StmtCache::new(1),
            next_name: 0,
        };
        let (mut out, mut most) = (Vec::new(), 0);
        while !st.queue.is_empty() {
            let before = st.sent;
            let bytes = st.take_sendable();
            assert_eq!(
                bytes.len(),
                st.queue
                    .range(before..st.sent)
                    .map(|r| r.len)
                    .sum::<usize>()
            );
            out.push(st.sent - before);
            most = most.max(st.in_flight);
            st.pop_answered();
        }
        assert!(st.out.is_empty() && st.in_flight == 0 && st.sent == 0);
        (out, most)
    }

    #[test]
    fn in_flight_bytes_stay_under_the_bound_but_one_large_request_always_goes() {
        let k = 1024;
        // 16 KiB requests: four fit, the fifth waits for the first answer.
        assert_eq!(
            releases(&[16 * k; 6]),
            (vec![4, 1, 1, 0, 0, 0], MAX_IN_FLIGHT_BYTES)
        );
        // A request larger than the bound goes alone, and only once the window is empty.
        assert_eq!(releases(&[k, 100 * k, k]), (vec![1, 1, 1], 100 * k));
        assert_eq!(releases(&[100 * k, 100 * k]), (vec![1, 1], 100 * k));
    }
}
