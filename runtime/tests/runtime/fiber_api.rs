//! Fibers: values and panics through join, scoped borrowing, names and ids, fiber-local values
//! that stay with their fiber when it moves to another worker thread.

use std::sync::atomic::{AtomicUsize, Ordering};

use moria_runtime::fiber::Builder;
use moria_runtime::sync::channel;
use moria_runtime::{current, fiber_local, scope, spawn, stats};

use crate::common;

#[test]
fn join_returns_the_value_or_the_panic_message() {
    common::runtime();
    assert_eq!(spawn(|| 40 + 2).join().unwrap(), 42);
    let err = spawn(|| -> u8 { panic!("fiber exploded") })
        .join()
        .unwrap_err();
    assert_eq!(err.message(), "fiber exploded");
    // The process and other fibers keep going.
    assert_eq!(spawn(|| "still alive").join().unwrap(), "still alive");
}

#[test]
fn scoped_fibers_borrow_and_are_all_joined() {
    common::runtime();
    let mut data = vec![1u64, 2, 3, 4];
    let total = AtomicUsize::new(0);
    scope(|s| {
        for chunk in data.chunks_mut(2) {
            let total = &total;
            s.spawn(move || {
                for v in chunk.iter_mut() {
                    *v *= 10;
                    total.fetch_add(*v as usize, Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(data, vec![10, 20, 30, 40]);
    assert_eq!(total.load(Ordering::SeqCst), 100);

    let value = scope(|s| s.spawn(|| data.len()).join().unwrap());
    assert_eq!(value, 4);
}

#[test]
fn an_unjoined_scoped_panic_resumes_in_the_caller() {
    common::runtime();
    let caught = std::panic::catch_unwind(|| {
        scope(|s| {
            s.spawn(|| panic!("scoped boom"));
        })
    });
    let payload = caught.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(msg.contains("scoped boom"), "{msg}");
    // A joined panic is an error, not a scope failure.
    let r = scope(|s| s.spawn(|| panic!("observed")).join());
    assert!(r.unwrap_err().message().contains("observed"));
}

#[test]
fn current_names_and_ids_fibers() {
    common::runtime();
    let info = Builder::new()
        .name("worker-7")
        .spawn(current)
        .unwrap()
        .join()
        .unwrap();
    assert!(info.is_fiber);
    assert_eq!(info.name.as_deref(), Some("worker-7"));
    let other = spawn(current).join().unwrap();
    assert_ne!(info.id, other.id);
    assert!(!current().is_fiber);
}

fiber_local! {
    static COUNTER: std::cell::Cell<u32> = std::cell::Cell::new(0);
}

/// The OS thread running the caller, asked of the kernel: no thread-local the compiler could
/// cache across a yield.
fn os_thread() -> libc::c_long {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

#[test]
fn fiber_local_values_stay_with_their_fiber_when_it_changes_threads() {
    common::runtime();
    // Odd, so that the round-robin lands each fiber on the other worker from one round to the
    // next.
    const FIBERS: u32 = 7;
    /// Rounds allowed for every fiber to have run on two workers.
    const MAX_ROUNDS: u32 = 1_000;
    // A fiber woken from a plain thread is queued on a worker picked round-robin, so the wake-ups
    // sent from this thread move the fibers between the two workers. Each fiber starts its value
    // at its own base: a value shared by the fibers of one thread would show up as a wrong count.
    let (report_tx, report_rx) = channel::<(u32, u32, libc::c_long)>();
    let wakers: Vec<_> = (0..FIBERS)
        .map(|i| {
            let (wake_tx, wake_rx) = channel::<()>();
            let report = report_tx.clone();
            let fiber = spawn(move || {
                COUNTER.with(|c| c.set(i * 10_000));
                while wake_rx.recv().is_ok() {
                    COUNTER.with(|c| c.set(c.get() + 1));
                    moria_runtime::yield_now();
                    let value = COUNTER.with(|c| c.get());
                    report.send((i, value, os_thread())).unwrap();
                }
            });
            (wake_tx, fiber)
        })
        .collect();
    let mut first_thread = vec![None; FIBERS as usize];
    let mut moved = vec![false; FIBERS as usize];
    let mut rounds = 0;
    while rounds < MAX_ROUNDS && !(rounds >= 10 && moved.iter().all(|m| *m)) {
        rounds += 1;
        for (tx, _) in &wakers {
            tx.send(()).unwrap();
        }
        for _ in 0..FIBERS {
            let (i, value, thread) = report_rx.recv().unwrap();
            assert_eq!(value, i * 10_000 + rounds, "fiber {i}, round {rounds}");
            let first = *first_thread[i as usize].get_or_insert(thread);
            moved[i as usize] |= thread != first;
        }
    }
    for (tx, fiber) in wakers {
        drop(tx);
        fiber.join().unwrap();
    }
    assert!(
        moved.iter().all(|m| *m),
        "after {rounds} rounds some fibers never changed threads ({moved:?}): the check proved nothing"
    );
}

#[test]
fn stats_count_spawned_and_finished_fibers() {
    common::runtime();
    let before = stats();
    let hs: Vec<_> = (0..10).map(|_| spawn(|| ())).collect();
    for h in hs {
        h.join().unwrap();
    }
    let after = stats();
    assert!(after.fibers_spawned >= before.fibers_spawned + 10);
    assert!(after.fibers_finished >= before.fibers_finished + 10);
    let table = after.to_string();
    assert!(
        table.contains("fibers spawned") && table.contains("stack size"),
        "{table}"
    );
}
