//! Fiber stacks give back their deep part: after fibers went deep, the pages below the kept
//! part are returned to the kernel, and the stacks stay sound (the engine's bottom sentinel
//! intact: a zeroed sentinel would make the engine exit the process). A running fiber gives
//! back what lies below its frame with `trim_stack`, down to its stack's bottom and no further;
//! with `wait_trimmed` the bottom page goes too while it waits, and the sentinel comes back.

use std::time::Duration;

use moria_runtime::fiber::{trim_stack, wait_trimmed, yield_now};
use moria_runtime::{sleep, spawn, stats};

use crate::common;

/// Uses 80 KiB of the fiber's stack in one frame, writing to every page of it (the bench's
/// `runtime` binary goes deep by recursion instead). Returns 1.
#[inline(never)]
fn deep() -> u64 {
    let mut frame = [0u8; 80 * 1024];
    for page in frame.chunks_mut(4096) {
        page[0] = 1;
    }
    std::hint::black_box(&mut frame);
    u64::from(frame[0])
}

#[test]
fn deep_fibers_give_their_stack_pages_back_and_the_stacks_stay_sound() {
    common::runtime();
    let before = stats().stack_bytes_trimmed;
    for _ in 0..200 {
        assert_eq!(spawn(deep).join().unwrap(), 1);
    }
    let trimmed = stats().stack_bytes_trimmed - before;
    assert!(trimmed > 0, "nothing given back after 200 deep fibers");
    // The trimmed stacks serve new fibers, deep and shallow, as before.
    for _ in 0..200 {
        assert_eq!(spawn(deep).join().unwrap(), 1);
        assert_eq!(spawn(|| 7).join().unwrap(), 7);
    }
}

/// Recursion in 1 KiB frames, `depth` of them, each written: touches `depth` KiB of stack.
#[inline(never)]
fn touch_kib(depth: usize) -> u64 {
    let mut frame = [0u8; 1024];
    frame[depth % 1024] = 1;
    std::hint::black_box(&mut frame);
    match depth {
        0 => 1,
        _ => std::hint::black_box(touch_kib(depth - 1)),
    }
}

#[test]
fn a_running_fiber_gives_back_the_pages_below_its_frame() {
    common::runtime();
    let kib = stats().stack_size as usize / 1024;
    // Shallow, then down to 24 KiB short of the stack's end: the run of resident pages then
    // reaches the bottom pages, which must stay (the sentinel) while the rest goes back.
    for depth in [40, kib - 24] {
        let given = spawn(move || {
            touch_kib(depth);
            let first = trim_stack();
            let again = trim_stack();
            // The stack is sound after it: deep again, then trimmed again.
            assert_eq!(touch_kib(depth), 1);
            (first, again, trim_stack())
        })
        .join()
        .unwrap();
        let (first, again, after) = given;
        assert!(
            first >= 24 * 1024,
            "{first} bytes given back after {depth} KiB"
        );
        assert_eq!(again, 0, "a second look finds nothing resident below");
        assert!(
            after >= 24 * 1024,
            "{after} bytes given back the second time"
        );
    }
    // Stacks trimmed to their bottom serve new fibers.
    for _ in 0..100 {
        assert_eq!(spawn(deep).join().unwrap(), 1);
    }
    assert_eq!(
        trim_stack(),
        0,
        "outside a fiber there is nothing to give back"
    );
}

/// The engine's marker in a stack's bottom words (it reads them when a fiber ends).
const SENTINEL: usize = 0xDEAD_BEEF;

/// The running fiber's stack bottom (the start of the mapping that holds its frame).
fn own_stack_bottom() -> usize {
    let local = 0u8;
    mapping_of(std::hint::black_box(&local as *const u8 as usize)).0
}

/// Whether the page at `addr` (page-aligned) is resident.
fn resident(addr: usize) -> bool {
    let mut vec = [0u8; 1];
    // SAFETY: one page of a mapping of this process; `vec` has room for its one entry.
    let rc = unsafe { libc::mincore(addr as *mut libc::c_void, 4096, vec.as_mut_ptr()) };
    assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
    vec[0] & 1 == 1
}

/// The first word of the page at `bottom`, the engine's first sentinel word.
fn first_word(bottom: usize) -> usize {
    // SAFETY: `bottom` is the lowest page of the running fiber's stack, mapped and readable.
    unsafe { std::ptr::read_volatile(bottom as *const usize) }
}

/// Fibers that gave their bottom page back while they waited end cleanly: more of them at
/// once than the stack pool holds, so some stacks go back to the pool and the rest are
/// unmapped, and the engine checks the sentinel on both paths (a zeroed one ends the process:
/// "stack overflow detected").
#[test]
fn fibers_that_waited_without_their_bottom_page_end_cleanly() {
    common::runtime();
    let fibers = stats().stack_pool as usize + 64;
    let handles: Vec<_> = (0..fibers)
        .map(|_| {
            spawn(|| {
                let bottom = own_stack_bottom();
                let gone = wait_trimmed(|| {
                    let gone = !resident(bottom);
                    sleep(Duration::from_millis(20));
                    gone
                });
                (gone, first_word(bottom))
            })
        })
        .collect();
    for handle in handles {
        let (gone, word) = handle.join().unwrap();
        assert!(gone, "the bottom page stayed resident during the wait");
        assert_eq!(word, SENTINEL, "the sentinel is back after the wait");
    }
    for _ in 0..100 {
        assert_eq!(spawn(deep).join().unwrap(), 1);
    }
}

/// A fiber that goes deep, waits trimmed and is woken, many times over, stays sound.
#[test]
fn a_fiber_trimmed_and_woken_many_times_stays_sound() {
    common::runtime();
    let before = stats().stack_bytes_trimmed;
    spawn(|| {
        let bottom = own_stack_bottom();
        for depth in 0..200 {
            assert_eq!(touch_kib(depth % 40), 1);
            wait_trimmed(yield_now);
            assert_eq!(first_word(bottom), SENTINEL);
        }
    })
    .join()
    .unwrap();
    assert!(stats().stack_bytes_trimmed - before >= 200 * 4096);
}

/// After a trimmed wait, a fiber can use its whole stack again (to 24 KiB short of its end),
/// and wait trimmed again.
#[test]
fn a_fiber_goes_deep_after_a_trimmed_wait() {
    common::runtime();
    let kib = stats().stack_size as usize / 1024;
    let words = spawn(move || {
        let bottom = own_stack_bottom();
        wait_trimmed(yield_now);
        assert_eq!(touch_kib(kib - 24), 1);
        let after_deep = first_word(bottom);
        wait_trimmed(|| sleep(Duration::from_millis(1)));
        (after_deep, first_word(bottom))
    })
    .join()
    .unwrap();
    assert_eq!(words, (SENTINEL, SENTINEL));
    // Outside a fiber it only runs the wait.
    assert_eq!(wait_trimmed(|| 5), 5);
}

/// The trimming reckons a stack's bottom from the address of the fiber's first frame and the
/// configured size, keeping 4 pages at the bottom: sound only while that frame sits less than
/// 3 pages below the top of the stack's mapping.
#[test]
fn a_fiber_starts_near_the_top_of_its_stack_mapping() {
    common::runtime();
    let (addr, (start, end)) = spawn(|| {
        let local = 0u8;
        let addr = std::hint::black_box(&local as *const u8 as usize);
        (addr, mapping_of(addr))
    })
    .join()
    .unwrap();
    let page = 4096;
    let stack = moria_runtime::stats().stack_size as usize;
    assert!(
        end - addr < 3 * page,
        "first frame {} bytes below the top",
        end - addr
    );
    assert!(
        end - start >= stack,
        "mapping of {} bytes for a {stack}-byte stack",
        end - start
    );
}

/// The `[start, end)` of the mapping in /proc/self/maps that holds `addr`.
fn mapping_of(addr: usize) -> (usize, usize) {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    maps.lines()
        .find_map(|line| {
            let range = line.split_whitespace().next()?;
            let (a, b) = range.split_once('-')?;
            let (a, b) = (
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            );
            (a <= addr && addr < b).then_some((a, b))
        })
        .expect("a mapping holds the fiber's stack")
}
