//! Trap: stack sizes are in words, size 0 means 4 KiB, and only the default size is pooled.
//! Guard: the builder takes bytes, validates them, and makes them the engine's default, so a
//! fiber gets the size asked for and every spawn reuses pooled stacks: the process's memory-map
//! count stays flat over 10,000 spawns.
//!
//! A test binary of its own: the engine takes one configuration per process, and this one
//! (256 KiB stacks, a pool of 200) differs from the shared `runtime` binary's; and it counts
//! the whole process's memory maps, which other tests' stacks, sockets and threads would move.

use std::hint::black_box;

use moria_runtime::{spawn, stats, Runtime};

const STACK: usize = 256 * 1024;

fn map_count() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .expect("maps")
        .lines()
        .count()
}

/// Touches `n` bytes of stack in one frame.
#[inline(never)]
fn use_stack(n: usize) -> u8 {
    let mut buf = [0u8; 200 * 1024];
    for i in (0..n.min(buf.len())).step_by(512) {
        buf[i] = i as u8;
    }
    black_box(&mut buf);
    buf[n / 2]
}

#[test]
fn configured_stacks_hold_200_kib_and_are_reused() {
    let rt = Runtime::builder()
        .workers(2)
        .stack_size(STACK)
        .stack_pool(200)
        .build()
        .expect("runtime");
    assert_eq!(rt.config().stack_size, STACK);
    assert_eq!(stats().stack_size, STACK as u64);

    let v = spawn(|| use_stack(200 * 1024))
        .join()
        .expect("200 KiB fits in 256 KiB");
    black_box(v);

    // Warm the pool, then count maps across 10,000 spawns in batches of 100.
    let batch = || {
        let hs: Vec<_> = (0..100).map(|i| spawn(move || black_box(i) * 2)).collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum::<i32>()
    };
    batch();
    let before = map_count();
    let spawned_before = stats().fibers_spawned;
    for _ in 0..100 {
        black_box(batch());
    }
    let after = map_count();
    assert_eq!(stats().fibers_spawned - spawned_before, 10_000);
    assert!(
        after <= before + 20,
        "memory maps grew from {before} to {after} over 10,000 spawns: stacks not pooled"
    );
}
