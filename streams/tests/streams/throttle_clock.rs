//! Throttle against the clock, in fibers: the transfer takes at least the time its rate implies
//! (a generous lower bound only: no upper bound, which a loaded machine could break).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use moria_runtime::spawn;
use moria_streams::{pipe, Throttle};

use crate::common::runtime;

#[test]
fn a_throttled_writer_feeding_a_fiber_keeps_to_its_rate() {
    runtime();
    const RATE: u64 = 100_000;
    const LEN: usize = 30_000;
    let (w, mut r) = pipe();
    let start = Instant::now();
    let writer = spawn(move || {
        let mut w = Throttle::writes(w, RATE);
        // One large write: the throttle must cut it up and pace it, not burst it.
        w.write_all(&vec![3u8; LEN])
    });
    let reader = spawn(move || {
        let mut out = Vec::new();
        r.read_to_end(&mut out).map(|_| out)
    });
    writer.join().unwrap().unwrap();
    let out = reader.join().unwrap().unwrap();
    let elapsed = start.elapsed();
    assert_eq!(out.len(), LEN);
    // 30 kB at 100 kB/s is due at 300 ms; allow a third off for the first, unpaced quantum.
    assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
}
