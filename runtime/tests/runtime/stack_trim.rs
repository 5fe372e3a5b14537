//! Fiber stacks give back their deep part: after fibers went deep, the pages below the kept
//! part are returned to the kernel, and the stacks stay sound (the engine's bottom sentinel
//! intact: a zeroed sentinel would make the engine exit the process). A running fiber gives
//! back what lies below its frame with `trim_stack`, down to its stack's bottom and no further.

use moria_runtime::fiber::trim_stack;
use moria_runtime::{spawn, stats};

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
