//! Channels: a bounded sender waits at capacity, every timed form fires, disconnection is
//! reported, and many producers/consumers across fibers and threads lose nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::spawn;
use moria_runtime::sync::{
    bounded, channel, Event, RecvTimeoutError, Reset, SendTimeoutError, TryRecvError, TrySendError,
};

use crate::common;

#[test]
fn bounded_sender_waits_at_capacity_until_a_receive() {
    common::runtime();
    let (tx, rx) = bounded::<u32>(2);
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    assert!(matches!(tx.try_send(3), Err(TrySendError::Full(3))));

    let about_to_send = Arc::new(Event::new(Reset::Manual));
    let sent = Arc::new(Event::new(Reset::Manual));
    let receiving = Arc::new(AtomicBool::new(false));
    let (signal, done, seen) = (about_to_send.clone(), sent.clone(), receiving.clone());
    let sender = spawn(move || {
        signal.set();
        tx.send(3).unwrap(); // must wait: the channel is full
        done.set();
        // Room appeared only through the receive below, which comes after the flag.
        (tx, seen.load(Ordering::SeqCst))
    });
    about_to_send.wait();
    // A waiting send cannot set `sent`, so this wait never fails a correct channel; its length
    // only decides how surely a send that does not wait is caught here rather than below.
    assert!(
        !sent.wait_timeout(Duration::from_millis(50)),
        "send returned while the channel was full"
    );
    receiving.store(true, Ordering::SeqCst);
    assert_eq!(rx.recv().unwrap(), 1);
    let (tx, sent_after_a_receive) = sender.join().unwrap();
    assert!(
        sent_after_a_receive,
        "send returned while the channel was full, before any receive"
    );
    assert_eq!(rx.recv().unwrap(), 2);
    assert_eq!(rx.recv().unwrap(), 3);
    drop(tx);
    assert_eq!(rx.recv(), Err(moria_runtime::sync::RecvError));
}

#[test]
fn timeouts_fire_in_fibers_and_threads() {
    common::runtime();
    let check = || {
        let (tx, rx) = bounded::<u8>(1);
        tx.send(0).unwrap();
        assert!(matches!(
            tx.send_timeout(1, Duration::from_millis(5)),
            Err(SendTimeoutError::Timeout(1))
        ));
        rx.recv().unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(5)),
            Err(RecvTimeoutError::Timeout)
        );
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        drop(tx);
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(5)),
            Err(RecvTimeoutError::Disconnected)
        );
    };
    spawn(check).join().unwrap();
    check();
}

#[test]
fn send_to_dropped_receiver_returns_the_message() {
    let (tx, rx) = channel::<String>();
    drop(rx);
    let err = tx.send("kept".to_string()).unwrap_err();
    assert_eq!(err.0, "kept");
    let (tx, rx) = bounded::<u8>(1);
    tx.send(1).unwrap();
    drop(rx);
    assert!(matches!(
        tx.send_timeout(2, Duration::from_secs(5)),
        Err(SendTimeoutError::Disconnected(2))
    ));
}

#[test]
fn many_producers_and_consumers_lose_and_duplicate_nothing() {
    common::runtime();
    const PRODUCERS: u64 = 8;
    const PER: u64 = 2_000;
    let (tx, rx) = bounded::<u64>(16);
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let tx = tx.clone();
            spawn(move || {
                for i in 0..PER {
                    tx.send(p * PER + i).unwrap();
                }
            })
        })
        .collect();
    // A plain thread produces too.
    let thread_tx = tx.clone();
    let thread = std::thread::spawn(move || {
        for i in 0..PER {
            thread_tx.send(PRODUCERS * PER + i).unwrap();
        }
    });
    drop(tx);
    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let rx = rx.clone();
            spawn(move || rx.iter().collect::<Vec<u64>>())
        })
        .collect();
    drop(rx);
    for p in producers {
        p.join().unwrap();
    }
    thread.join().unwrap();
    let mut all: Vec<u64> = consumers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    all.sort_unstable();
    let expected: Vec<u64> = (0..(PRODUCERS + 1) * PER).collect();
    assert_eq!(all, expected);
}
