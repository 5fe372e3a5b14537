//! Shutdown: drain waits for fibers up to a deadline.
//!
//! A test binary of its own: `drain` waits for every fiber in the process, and in the shared
//! `runtime` binary other tests' fibers (echo servers, parking-lot shards) live on, so it could
//! never finish there and its straggler count would be theirs.

use std::time::Duration;

use moria_runtime::shutdown::drain;
use moria_runtime::sync::{Event, Reset};
use moria_runtime::{spawn, Deadline, Runtime};

#[test]
fn drain_waits_for_fibers_and_reports_stragglers() {
    Runtime::builder().workers(2).build().expect("runtime");
    let release = std::sync::Arc::new(Event::new(Reset::Manual));
    let r = release.clone();
    let straggler = spawn(move || r.wait());
    let err = drain(Deadline::after(Duration::from_millis(20))).unwrap_err();
    assert!(err.remaining >= 1, "{err}");
    release.set();
    straggler.join().unwrap();
    drain(Deadline::after(Duration::from_secs(10))).expect("all fibers finished");
}
