//! Trap: a stack overflow in a fiber. What the user sees: the guard page catches it and the
//! engine prints "coroutine has overflowed its stack" on stderr. Then either the process exits
//! with status 1 ("stack overflow detected", when the stack was used to its last word), or
//! `join()` returns a `JoinError` with `is_stack_overflow()` whose message says the frames were
//! abandoned and how to raise the stack. Observed in a child process: this test binary re-runs
//! itself with `MORIA_CHILD`; the child exits with status 42 when it saw the `JoinError`.

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

#[test]
fn child_overflows_a_fiber_stack() {
    if std::env::var_os("MORIA_CHILD").is_none() {
        return; // only meaningful inside the child process started below
    }
    Runtime::builder().workers(1).build().expect("runtime");
    let err = spawn(|| recurse(0)).join().unwrap_err();
    eprintln!("{err}");
    std::process::exit(if err.is_stack_overflow() { 42 } else { 0 });
}

#[test]
fn a_stack_overflow_is_reported_and_exits_with_status_1() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", "child_overflows_a_fiber_stack", "--nocapture"])
        .env("MORIA_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        code == Some(1) || code == Some(42),
        "exit {code:?}, stderr: {stderr}"
    );
    assert!(stderr.contains("overflowed its stack"), "stderr: {stderr}");
    if code == Some(42) {
        assert!(stderr.contains("MORIA_STACK_SIZE"), "stderr: {stderr}");
    }
}
