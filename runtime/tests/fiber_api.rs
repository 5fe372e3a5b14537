//! Fibers: values and panics through join, scoped borrowing, names and ids, fiber-local values.

use std::sync::atomic::{AtomicUsize, Ordering};

use moria_runtime::fiber::Builder;
use moria_runtime::{current, fiber_local, scope, spawn, stats, Runtime};

fn runtime() {
    Runtime::builder().workers(2).build().expect("runtime");
}

#[test]
fn join_returns_the_value_or_the_panic_message() {
    runtime();
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
    runtime();
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
    runtime();
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
    runtime();
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

#[test]
fn fiber_local_values_belong_to_one_fiber_across_yields() {
    runtime();
    let fibers: Vec<_> = (0..50u32)
        .map(|i| {
            spawn(move || {
                for _ in 0..=i {
                    COUNTER.with(|c| c.set(c.get() + 1));
                    moria_runtime::yield_now(); // may resume on another worker
                }
                COUNTER.with(|c| c.get())
            })
        })
        .collect();
    for (i, f) in fibers.into_iter().enumerate() {
        assert_eq!(f.join().unwrap(), i as u32 + 1);
    }
}

#[test]
fn stats_count_spawned_and_finished_fibers() {
    runtime();
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
