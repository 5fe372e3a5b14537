//! Mutex, RwLock, Condvar, Semaphore, Event and WaitGroup from fibers and threads.

use std::sync::Arc;
use std::time::Duration;

use moria_runtime::sync::{Condvar, Event, Mutex, Reset, RwLock, Semaphore, WaitGroup};
use moria_runtime::{spawn, yield_now};

use crate::common;

#[test]
fn mutex_counts_exactly_across_fibers_that_yield_while_holding_it() {
    common::runtime();
    let m = Arc::new(Mutex::new(0u64));
    let fibers: Vec<_> = (0..16)
        .map(|_| {
            let m = m.clone();
            spawn(move || {
                for _ in 0..500 {
                    let mut g = m.lock();
                    let v = *g;
                    yield_now(); // another fiber runs while the lock is held
                    *g = v + 1;
                }
            })
        })
        .collect();
    for f in fibers {
        f.join().unwrap();
    }
    assert_eq!(*m.lock(), 16 * 500);
    assert!(m.try_lock().is_some());
}

#[test]
fn condvar_wakes_a_fiber_waiting_on_a_condition() {
    common::runtime();
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let theirs = pair.clone();
    let waiter = spawn(move || {
        let (m, c) = &*theirs;
        let mut ready = m.lock();
        c.wait_while(&mut ready, |r| !*r);
        *ready
    });
    {
        let (m, c) = &*pair;
        *m.lock() = true;
        c.notify_all();
    }
    assert!(waiter.join().unwrap());
    let (m, c) = &*pair;
    let mut g = m.lock();
    *g = false;
    assert!(
        c.wait_timeout(&mut g, Duration::from_millis(2)),
        "nobody notifies: time-out"
    );
}

#[test]
fn rwlock_allows_readers_together_and_writers_alone() {
    let l = RwLock::new(5);
    {
        let a = l.read();
        let b = l.try_read().expect("second reader");
        assert_eq!(*a + *b, 10);
        assert!(l.try_write().is_none());
    }
    *l.write() += 1;
    assert_eq!(l.into_inner(), 6);
}

#[test]
fn semaphore_limits_and_times_out() {
    common::runtime();
    let s = Semaphore::new(1);
    assert!(s.try_acquire());
    assert!(!s.try_acquire());
    assert!(!spawn({
        let s = Arc::new(Semaphore::new(0));
        move || s.acquire_timeout(Duration::from_millis(2))
    })
    .join()
    .unwrap());
    s.release();
    assert_eq!(s.available(), 1);
}

#[test]
fn manual_event_releases_everyone_and_auto_event_one() {
    common::runtime();
    let manual = Arc::new(Event::new(Reset::Manual));
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let e = manual.clone();
            spawn(move || e.wait())
        })
        .collect();
    manual.set();
    for w in waiters {
        w.join().unwrap();
    }
    assert!(manual.is_set());
    manual.reset();
    assert!(!manual.wait_timeout(Duration::from_millis(2)));

    let auto = Event::new(Reset::Auto);
    auto.set();
    assert!(auto.wait_timeout(Duration::from_millis(2)));
    assert!(
        !auto.is_set(),
        "an auto-reset event clears after one waiter"
    );
    assert!(!auto.wait_timeout(Duration::from_millis(2)));
}

#[test]
fn wait_group_waits_for_every_task() {
    common::runtime();
    let wg = Arc::new(WaitGroup::new());
    let done = Arc::new(Mutex::new(0));
    wg.add(10);
    for _ in 0..10 {
        let (wg, done) = (wg.clone(), done.clone());
        spawn(move || {
            *done.lock() += 1;
            wg.done();
        });
    }
    wg.wait();
    assert_eq!(*done.lock(), 10);
    assert_eq!(wg.pending(), 0);
    wg.add(1);
    assert!(!wg.wait_timeout(Duration::from_millis(2)));
}
