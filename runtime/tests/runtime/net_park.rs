//! ParkingLot: sockets wait for readability without a fiber and come back with the right reason.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use moria_runtime::net::{Parkable, ParkingLot, Wake};

use crate::common;

/// How long a test waits for a wake-up before failing (a bound, never a synchronisation).
const WAIT: Duration = Duration::from_secs(20);

/// A parked socket with a name.
struct Item {
    id: usize,
    sock: UnixStream,
    registered: bool,
}

/// A new socket's item.
fn item(id: usize, sock: UnixStream) -> Item {
    Item {
        id,
        sock,
        registered: false,
    }
}

impl AsRawFd for Item {
    fn as_raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

impl Parkable for Item {
    fn registered(&mut self) -> &mut bool {
        &mut self.registered
    }
}

fn lot() -> (ParkingLot<Item>, Receiver<(Item, Wake)>) {
    common::runtime();
    let (tx, rx) = channel();
    let lot = ParkingLot::new(move |item, why| tx.send((item, why)).unwrap()).unwrap();
    (lot, rx)
}

fn next(rx: &Receiver<(Item, Wake)>) -> (Item, Wake) {
    rx.recv_timeout(WAIT)
        .expect("no parked socket came back within 20 s")
}

#[test]
fn bytes_wake_exactly_the_socket_they_arrive_on() {
    let (lot, rx) = lot();
    let mut peers = Vec::new();
    for id in 0..50 {
        let (sock, peer) = UnixStream::pair().unwrap();
        lot.park(item(id, sock), None);
        peers.push(peer);
    }
    assert_eq!(lot.parked(), 50);
    peers[17].write_all(b"x").unwrap();
    let (mut item, why) = next(&rx);
    assert_eq!((item.id, why), (17, Wake::Readable));
    let mut byte = [0u8; 1];
    item.sock.read_exact(&mut byte).unwrap();
    assert_eq!(lot.parked(), 49);

    lot.close();
    let mut closed: Vec<usize> = (0..49)
        .map(|_| next(&rx))
        .map(|(item, why)| {
            assert_eq!(why, Wake::Closed);
            item.id
        })
        .collect();
    closed.sort_unstable();
    let expected: Vec<usize> = (0..50).filter(|&i| i != 17).collect();
    assert_eq!(closed, expected);
    assert_eq!(lot.parked(), 0);

    // After closing, a park comes back at once.
    lot.park(item, None);
    assert_eq!(next(&rx).1, Wake::Closed);
}

#[test]
fn bytes_already_there_and_a_hang_up_both_wake() {
    let (lot, rx) = lot();
    let (sock, mut peer) = UnixStream::pair().unwrap();
    peer.write_all(b"early").unwrap();
    lot.park(item(1, sock), None);
    assert_eq!(next(&rx).1, Wake::Readable);

    let (sock, peer) = UnixStream::pair().unwrap();
    lot.park(item(2, sock), None);
    drop(peer);
    let (mut item, why) = next(&rx);
    assert_eq!((item.id, why), (2, Wake::Readable));
    assert_eq!(item.sock.read(&mut [0u8; 8]).unwrap(), 0, "end of stream");
}

#[test]
fn one_socket_parks_a_thousand_times_and_every_byte_wakes_it() {
    let (lot, rx) = lot();
    let (sock, mut peer) = UnixStream::pair().unwrap();
    let mut parked = item(0, sock);
    for round in 0..1000u32 {
        lot.park(parked, None);
        peer.write_all(&round.to_le_bytes()).unwrap();
        let (back, why) = next(&rx);
        assert_eq!(why, Wake::Readable);
        parked = back;
        let mut got = [0u8; 4];
        parked.sock.read_exact(&mut got).unwrap();
        assert_eq!(u32::from_le_bytes(got), round);
    }
    assert_eq!(lot.registration_retries(), 0, "one epoll_ctl per park");
}

#[test]
fn a_reused_descriptor_number_parks_like_a_new_one() {
    let (lot, rx) = lot();
    let mut numbers = Vec::new();
    for id in 0..20 {
        let (sock, mut peer) = UnixStream::pair().unwrap();
        numbers.push(sock.as_raw_fd());
        lot.park(item(id, sock), None);
        peer.write_all(b"x").unwrap();
        let (back, why) = next(&rx);
        assert_eq!((back.id, why), (id, Wake::Readable));
        // Closing drops the registration; the next pair gets the same numbers, unless another
        // test of this binary took them meanwhile.
        drop(back);
    }
    numbers.sort_unstable();
    numbers.dedup();
    assert!(numbers.len() < 20, "no descriptor number was reused");
    // A reused number is a new socket: `ADD` at once, never a `MOD` failing first.
    assert_eq!(lot.registration_retries(), 0);
}

#[test]
fn a_socket_moved_to_another_lot_costs_one_retry_and_still_wakes() {
    let (first, rx_first) = lot();
    let (second, rx_second) = lot();
    let (sock, mut peer) = UnixStream::pair().unwrap();
    first.park(item(7, sock), None);
    peer.write_all(b"a").unwrap();
    let (mut back, why) = next(&rx_first);
    assert_eq!(why, Wake::Readable);
    back.sock.read_exact(&mut [0u8; 1]).unwrap();
    // Flagged as registered, but not with this lot's epoll: the `MOD` fails, the `ADD` works.
    second.park(back, None);
    peer.write_all(b"b").unwrap();
    assert_eq!(next(&rx_second).1, Wake::Readable);
    assert_eq!(first.registration_retries(), 0);
    assert_eq!(second.registration_retries(), 1);
}

#[test]
fn a_deadline_wakes_a_quiet_socket_not_before_it_passes() {
    let (lot, rx) = lot();
    let (quiet, _quiet_peer) = UnixStream::pair().unwrap();
    let (late, _late_peer) = UnixStream::pair().unwrap();
    let deadline = Instant::now() + Duration::from_millis(150);
    lot.park(item(1, late), None);
    lot.park(item(2, quiet), Some(deadline));
    let (item, why) = next(&rx);
    assert_eq!((item.id, why), (2, Wake::TimedOut));
    assert!(Instant::now() >= deadline, "woken before its deadline");
    assert_eq!(
        lot.parked(),
        1,
        "the socket without a deadline stays parked"
    );
    drop(lot);
    assert_eq!(next(&rx).1, Wake::Closed, "dropping the lot closes it");
}
