//! Pooled stacks give back their pages once the process goes quiet. The engine's stack pool is
//! first in, first out, so a burst of short fibers passes through every pooled stack and leaves
//! each with the pages its fibers touched; stack trimming at a fiber's end takes only what lies
//! deeper than 32 KiB. Here each fiber of the burst touches 24 KiB, and once the burst is over
//! the sweep gives those pages back: no stack keeps a resident page between its top two and
//! its bottom four (the engine's sentinel), and `stats()` counts the sweep.
//!
//! A test binary of its own: it reads the residency of every fiber stack in the process, which
//! other tests' fibers would move, and it sets a pool of its own.

use std::time::{Duration, Instant};

use moria_runtime::{spawn, stats, Runtime};

const STACK: usize = 128 * 1024;
const POOL: usize = 64;
const PAGE: usize = 4096;
/// Stack bytes each fiber of the burst writes to (less than what a fiber's end trims past).
const TOUCHED: usize = 24 * 1024;
/// How long the test waits for a sweep before it fails (not a timing: a hang guard).
const HANG_GUARD: Duration = Duration::from_secs(60);

/// Writes to every page of `TOUCHED` bytes of stack in one frame.
#[inline(never)]
fn touch() -> u8 {
    let mut frame = [0u8; TOUCHED];
    for page in frame.chunks_mut(PAGE) {
        page[0] = 1;
    }
    std::hint::black_box(&mut frame);
    frame[0]
}

/// The fiber stacks of this process: read-write anonymous mappings of `STACK` bytes right
/// above a guard page, as (low, high) addresses.
fn stacks() -> Vec<(usize, usize)> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let mut out = Vec::new();
    let mut prev: Option<(usize, String)> = None;
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (lo, hi) = fields[0].split_once('-').expect("a range");
        let lo = usize::from_str_radix(lo, 16).expect("hex");
        let hi = usize::from_str_radix(hi, 16).expect("hex");
        let guarded = prev
            .as_ref()
            .is_some_and(|(end, prot)| *end == lo && prot == "---p");
        if hi - lo == STACK && fields[1] == "rw-p" && fields.len() == 5 && guarded {
            out.push((lo, hi));
        }
        prev = Some((hi, fields[1].to_string()));
    }
    out
}

/// How many stacks hold a resident page below their top two pages and above their bottom
/// four.
fn stacks_with_deep_pages() -> usize {
    let mut held = 0;
    for (lo, hi) in stacks() {
        let mut vec = vec![0u8; (hi - lo) / PAGE];
        // SAFETY: [lo, hi) is a mapping of this process (read from its maps just now, and
        // stacks are not unmapped while the pool keeps them); `vec` has a byte per page.
        let rc = unsafe { libc::mincore(lo as *mut libc::c_void, hi - lo, vec.as_mut_ptr()) };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        let n = vec.len();
        if vec[4..n - 2].iter().any(|v| v & 1 == 1) {
            held += 1;
        }
    }
    held
}

/// Runs `n` fibers one after the other from one fiber, each touching `TOUCHED` bytes.
fn burst(n: usize) {
    spawn(move || {
        for _ in 0..n {
            assert_eq!(spawn(touch).join().unwrap(), 1);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn pooled_stacks_give_their_pages_back_once_the_process_is_quiet() {
    Runtime::builder()
        .workers(1)
        .stack_size(STACK)
        .stack_pool(POOL)
        .build()
        .unwrap();
    let start = Instant::now();
    // A sweep that began during a burst (the machine stalled a burst fiber past the quiet
    // interval) may leave the burst's tail resident, with too few fibers after it for another:
    // it is counted from before the burst, so the wait ends and the burst runs again.
    loop {
        let sweeps = stats().stack_sweeps;
        burst(4 * POOL);
        while stats().stack_sweeps == sweeps {
            assert!(
                start.elapsed() < HANG_GUARD,
                "no stack sweep within {HANG_GUARD:?} of a burst of {} fibers; {} stacks hold deep pages",
                4 * POOL,
                stacks_with_deep_pages()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let held = stacks_with_deep_pages();
        if held == 0 {
            break;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "{held} stacks still hold deep pages after the sweeps"
        );
    }
    // The swept stacks serve fibers as before (the bottom sentinel is intact: a zeroed one
    // would end the process when the fiber ends).
    burst(2 * POOL);
    assert_eq!(spawn(|| 7).join().unwrap(), 7);
}
