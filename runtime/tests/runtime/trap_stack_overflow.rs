//! Trap: a stack overflow in a fiber. What the user sees: the guard page catches it, the engine
//! prints "coroutine has overflowed its stack" on stderr, and `join()` returns a `JoinError`
//! with `is_stack_overflow()` whose message says the frames were abandoned and how to raise the
//! stack; `stack_overflows()` counts it and the process goes on, whether the overflow came from
//! deep recursion (which uses the stack to its last word: the engine alone would exit with
//! status 1) or from one huge frame. Observed in a child process: the test binary re-runs
//! itself with `MORIA_CHILD`, running only `child_overflows_a_fiber_stack` (one worker, its own
//! configuration); the child exits with status 42 when every overflow came back as a
//! `JoinError` and other fibers kept running. The child is the process of its own, so the test
//! can share the `runtime` binary.

use std::process::Command;

use moria_runtime::{spawn, Runtime};

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let pad = std::hint::black_box([depth; 64]);
    if depth == u64::MAX {
        return 0;
    }
    recurse(depth + 1) + pad[7]
}

/// Recursion with small frames that write nearly every word on the way down: from one of
/// several starting offsets it writes the stack's very last word before it faults.
#[inline(never)]
fn dense(depth: u64) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    // Opaque after the call, so no optimiser turns the recursion into a loop.
    std::hint::black_box(1 + dense(std::hint::black_box(depth + 1)))
}

#[inline(never)]
fn dense_from_offset(words: usize) -> u64 {
    let pad = std::hint::black_box(vec![0u64; 0]);
    let mut frame = [0u64; 16];
    frame[words % 16] = std::hint::black_box(words as u64);
    std::hint::black_box(&frame);
    pad.len() as u64
        + if words == 0 {
            dense(0)
        } else {
            dense_from_offset(words - 1)
        }
}

#[inline(never)]
fn huge_frame() -> u8 {
    let frame = std::hint::black_box([1u8; 1 << 20]);
    frame[1 << 19]
}

#[test]
fn child_overflows_a_fiber_stack() {
    if std::env::var_os("MORIA_CHILD").is_none() {
        return; // only meaningful inside the child process started below
    }
    Runtime::builder().workers(1).build().expect("runtime");
    let mut all_caught = true;
    let mut overflows = 0;
    for round in 0..8usize {
        for err in [
            spawn(|| recurse(0)).join().map(|_| ()).unwrap_err(),
            spawn(move || dense_from_offset(round))
                .join()
                .map(|_| ())
                .unwrap_err(),
            spawn(huge_frame).join().map(|_| ()).unwrap_err(),
        ] {
            eprintln!("round {round}: {err}");
            all_caught &= err.is_stack_overflow();
            overflows += 1;
        }
        // Other fibers (on reused, recycled stacks) still run and finish normally.
        all_caught &= spawn(|| 40 + 2).join() == Ok(42);
    }
    all_caught &= moria_runtime::stack_overflows() == overflows;
    std::process::exit(if all_caught { 42 } else { 0 });
}

#[test]
fn a_stack_overflow_ends_the_fiber_never_the_process() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "trap_stack_overflow::child_overflows_a_fiber_stack",
            "--nocapture",
        ])
        .env("MORIA_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert_eq!(code, Some(42), "stderr: {stderr}");
    assert!(stderr.contains("overflowed its stack"), "stderr: {stderr}");
    assert!(stderr.contains("MORIA_STACK_SIZE"), "stderr: {stderr}");
}
