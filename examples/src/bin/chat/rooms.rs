//! The rooms: who is in each, and a message from one member sent to all of them.
//!
//! A message is framed once ([`Prepared`]) and written to every member from the sender's own
//! fiber, straight into each member's socket (the shared frame, one write each, under that
//! member's writer lock), over a snapshot of the room taken without holding the room's lock
//! while writing.
//! The sender's own copy goes first: a client that keeps a few messages in flight and waits
//! for their copies (the bench's publisher) is not held up by a walk over 10,000 members. The trade-off: no fiber and no
//! queue per member (a member costs its reading fiber and its socket only, and one message to
//! 10,000 members is 10,000 writes with no wake-up between), but a member whose socket buffer
//! is full holds the sender until that write fails; the member is then dropped from the room.
//! A queue and a writing fiber per member would cap that wait at the price of both.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use moria_http::ws::{Prepared, WsWriter};

/// One member's way to be written to.
#[derive(Clone)]
struct Member {
    id: u64,
    writer: WsWriter,
}

/// The members of one room, and a snapshot of them that senders share until someone joins or
/// leaves (rebuilt then on the next send, not on every join: 10,000 joins copy nothing).
#[derive(Default)]
struct Members {
    list: Vec<Member>,
    snapshot: Option<Arc<[Member]>>,
}

/// One room.
#[derive(Default)]
pub struct Room {
    members: Mutex<Members>,
}

/// Every room, by name; a room exists while it has members.
#[derive(Default)]
pub struct Rooms {
    rooms: Mutex<HashMap<String, Arc<Room>>>,
    next_id: AtomicU64,
}

/// A member's place in a room: leaves the room when dropped.
pub struct Membership {
    rooms: Arc<Rooms>,
    name: String,
    room: Arc<Room>,
    me: Member,
}

/// A lock whose holder never panics while holding it: a poisoned one is still consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Rooms {
    /// Adds `writer` to room `name` (created if new); returns the membership and how many
    /// members the room has now.
    pub fn join(self: &Arc<Self>, name: &str, writer: WsWriter) -> (Membership, usize) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let room = lock(&self.rooms)
            .entry(name.to_string())
            .or_default()
            .clone();
        let count = {
            let mut m = lock(&room.members);
            m.list.push(Member {
                id,
                writer: writer.clone(),
            });
            m.snapshot = None;
            m.list.len()
        };
        let membership = Membership {
            rooms: self.clone(),
            name: name.to_string(),
            room,
            me: Member { id, writer },
        };
        (membership, count)
    }
}

impl Membership {
    /// Sends `msg` to every member of the room, this one first (its copy confirms the message
    /// without waiting for the walk over the room); a member whose socket fails is dropped
    /// from the room.
    pub fn broadcast(&self, msg: &Prepared) {
        self.deliver(&self.me, msg);
        let members = {
            let mut m = lock(&self.room.members);
            match &m.snapshot {
                Some(s) => s.clone(),
                None => {
                    let s: Arc<[Member]> = m.list.clone().into();
                    m.snapshot = Some(s.clone());
                    s
                }
            }
        };
        for member in members.iter().filter(|m| m.id != self.me.id) {
            self.deliver(member, msg);
        }
    }

    fn deliver(&self, member: &Member, msg: &Prepared) {
        if let Err(e) = member.writer.send_prepared(msg) {
            log::debug!("room {}: member {} dropped: {e}", self.name, member.id);
            self.room.remove(member.id);
        }
    }
}

impl Room {
    fn remove(&self, id: u64) {
        let mut m = lock(&self.members);
        m.list.retain(|x| x.id != id);
        m.snapshot = None;
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        let mut rooms = lock(&self.rooms.rooms);
        self.room.remove(self.me.id);
        // Under the rooms' lock, so no one joins the room between the check and the removal.
        if lock(&self.room.members).list.is_empty() {
            rooms.remove(&self.name);
        }
    }
}
