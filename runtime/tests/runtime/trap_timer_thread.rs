//! Trap: the engine resumes a fiber after `sleep` or a timed-out wait on its single timer
//! thread. Guard: Moria's `sleep` and timed waits hop back to a worker right after waking.
//! The test first observes the trap with the raw engine (to learn the timer thread's id), then
//! checks that code after Moria's `sleep` and after a timed-out `recv_timeout` never runs there.

use std::thread::ThreadId;
use std::time::Duration;

use moria_runtime::sync::{channel, RecvTimeoutError};
use moria_runtime::{sleep, spawn};

use crate::common;

fn timer_thread_id() -> ThreadId {
    spawn(|| {
        may::coroutine::sleep(Duration::from_millis(1));
        std::thread::current().id()
    })
    .join()
    .unwrap()
}

#[test]
fn code_after_sleep_and_timed_out_recv_runs_on_a_worker() {
    common::runtime();
    let timer = timer_thread_id();
    assert_eq!(
        timer,
        timer_thread_id(),
        "the engine's timer thread is one thread"
    );

    let fibers: Vec<_> = (0..100)
        .map(|_| {
            spawn(|| {
                sleep(Duration::from_millis(1));
                let after_sleep = std::thread::current().id();
                let (_tx, rx) = channel::<u8>();
                assert_eq!(
                    rx.recv_timeout(Duration::from_millis(1)),
                    Err(RecvTimeoutError::Timeout)
                );
                let after_recv = std::thread::current().id();
                (after_sleep, after_recv)
            })
        })
        .collect();
    for f in fibers {
        let (after_sleep, after_recv) = f.join().unwrap();
        assert_ne!(
            after_sleep, timer,
            "code after sleep ran on the timer thread"
        );
        assert_ne!(
            after_recv, timer,
            "code after recv_timeout ran on the timer thread"
        );
    }
}

/// Trap found while building Moria: the engine stores timeouts in whole milliseconds and reads 0
/// as "none", so a wait shorter than 1 ms parked forever. Guard: timeouts round up to 1 ms.
#[test]
fn sub_millisecond_timeouts_still_fire() {
    let fiber = spawn(|| {
        let (_tx, rx) = channel::<u8>();
        let a = rx.recv_timeout(Duration::from_micros(500));
        let sem = moria_runtime::sync::Semaphore::new(0);
        let b = sem.acquire_timeout(Duration::from_nanos(10));
        (a, b)
    });
    assert_eq!(
        fiber.join().unwrap(),
        (Err(RecvTimeoutError::Timeout), false)
    );
}
