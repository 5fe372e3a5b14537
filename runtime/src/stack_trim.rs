//! Giving back the deep part of fiber stacks: a stack returns to the engine's pool with every
//! page a fiber ever touched still resident, so one deep call (a large parse, a TLS handshake
//! in a big frame, a recursive walk) would otherwise cost its stack's full size in memory for
//! as long as the process runs, times the pool's capacity.
//!
//! When a fiber ends, what lies more than [`KEEP`] below its first frame is asked back from
//! the kernel (`madvise(MADV_DONTNEED)`) if any of it is resident (`mincore`). The next fiber
//! on that stack gets zero pages there on first touch. The shallow part, where nearly every
//! fiber runs, stays as it is.
//!
//! Trade-offs:
//! - A look costs a `mincore` (about 1 µs on the 2-core box, four times a pooled spawn and
//!   join), so only one fiber end in [`EVERY`] looks. Once a look gives pages back, the next
//!   [`BURST`] ends on that worker all look: deep fibers come in bursts, and a deep stack not
//!   caught as its fiber ends can sit in the pool, resident, for a long time (in the
//!   measurement below, 8,192 later fibers did not reuse the stacks of a burst of 256).
//!
//! Measured with `cargo run --release -p moria-bench --bin runtime`. 256 fibers, alive at once,
//! each went 96 KiB deep on 128 KiB stacks and ended. Without trimming the pool then kept
//! 24,584 KiB resident, and still did after 8,192 more short fibers. With trimming it kept
//! 9,348 KiB, then 8,196 KiB. A pooled spawn and join cost 231 ns before and 303–311 ns after.
//!
//! A fiber about to wait long after running deep (a WebSocket handler that answered an HTTP
//! request before its upgrade, then waits for a message) gives back the pages below its own
//! frame with [`below_here`] ([`crate::fiber::trim_stack`]).
//! - The bottom [`BOTTOM_KEEP_PAGES`] pages stay: the engine's sentinel words live at the very
//!   bottom (zeroing them would read as an overflow), and a fiber's first frame sits a little
//!   below the stack's true top, so the bottom is known only to within a page.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::sync::PerWorker;

/// Bytes below a fiber's first frame that are never given back.
pub(crate) const KEEP: usize = 32 * 1024;
/// One fiber end in this many looks at its stack.
pub(crate) const EVERY: u32 = 16;
/// After a look that gave pages back, this many fiber ends on the same worker look too: deep
/// fibers come in bursts (a deep request type under load), and each one's stack is caught as
/// it ends rather than left resident in the pool.
const BURST: u32 = 256;
/// Pages at the bottom of a stack that are never given back.
const BOTTOM_KEEP_PAGES: usize = 4;
/// Pages whose residency one `mincore` call reads.
const PAGES_PER_CALL: usize = 256;

/// When one worker's fiber ends look at their stack: ends counted, and looks still owed after a
/// burst began.
#[derive(Default)]
struct LookSchedule {
    count: AtomicU32,
    burst: AtomicU32,
}

/// The configured stack size in bytes (0: not configured yet, nothing is trimmed).
static STACK_BYTES: AtomicUsize = AtomicUsize::new(0);
/// Bytes given back since start.
static TRIMMED: AtomicU64 = AtomicU64::new(0);

/// Records the stack size the engine was configured with.
pub(crate) fn set_stack_size(bytes: usize) {
    STACK_BYTES.store(bytes, Relaxed);
}

/// Bytes of fiber stacks given back to the kernel since start.
pub(crate) fn trimmed_bytes() -> u64 {
    TRIMMED.load(Relaxed)
}

fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    // SAFETY: `sysconf` has no preconditions.
    *PAGE.get_or_init(|| {
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
    })
}

/// Runs a fiber's body `f`, then (on one end in [`EVERY`]) gives back what this or an earlier
/// fiber left resident on the stack deeper than [`KEEP`]. Called first thing in the fiber.
///
/// The stack's bottom is reckoned from this frame's address and the configured size: the
/// engine keeps the fiber's closure at the top of its stack, then come its own first frames,
/// then this one, so a closure or result larger than [`MAX_TOP`] could put this frame too far
/// below the top for that reckoning; such fibers are never trimmed.
#[inline(never)]
pub(crate) fn run<F: FnOnce() -> T, T>(f: F) -> T {
    let marker = 0u8;
    let entry = std::hint::black_box(std::ptr::addr_of!(marker) as usize);
    let out = call(f);
    if std::mem::size_of::<F>() + std::mem::size_of::<T>() <= MAX_TOP {
        fiber_ends(entry);
    }
    out
}

/// Runs `f` in a frame of its own, below [`run`]'s (whose frame stays small).
#[inline(never)]
fn call<F: FnOnce() -> T, T>(f: F) -> T {
    f()
}

/// The largest closure plus result a trimmed fiber may have (see [`run`]).
const MAX_TOP: usize = 4096;

/// A fiber whose first frame is at `entry` (an address in it) ends.
#[inline(never)]
fn fiber_ends(entry: usize) {
    static SCHEDULES: OnceLock<PerWorker<LookSchedule>> = OnceLock::new();
    let schedule = SCHEDULES.get_or_init(PerWorker::default).get();
    let burst = schedule.burst.load(Relaxed);
    if burst > 0 {
        schedule.burst.store(burst - 1, Relaxed);
    } else if !schedule.count.fetch_add(1, Relaxed).is_multiple_of(EVERY) {
        return;
    }
    let stack = STACK_BYTES.load(Relaxed);
    let page = page_size();
    let low = (entry.saturating_sub(stack) + BOTTOM_KEEP_PAGES * page).next_multiple_of(page);
    let high = entry.saturating_sub(KEEP) / page * page;
    if stack == 0 || high <= low {
        return;
    }
    if resident(low, high, page) {
        // SAFETY: [low, high) lies inside this fiber's own stack mapping, below every frame
        // still in use (the caller is the fiber's first frame and `high` is `KEEP` under it)
        // and above the engine's sentinel words; `MADV_DONTNEED` on private anonymous memory
        // only makes the next touch see zeroes.
        let rc =
            unsafe { libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED) };
        if rc == 0 {
            TRIMMED.fetch_add((high - low) as u64, Relaxed);
            schedule.burst.store(BURST, Relaxed);
        }
    }
}

/// Gives back the resident pages of the running fiber's stack below the caller's frame (the
/// page holding the caller's frame and the one under it stay: the frames of the wait that
/// follows go there). Returns the bytes given back; 0 outside a fiber.
///
/// The stack's bottom is not known here, only that it lies above `sp - stack size`: the pages
/// under this frame are taken while resident, down to the first one that is not (an untouched
/// page, or the guard page, which never is). When the page under that run cannot be read (the
/// guard) or the run reached `sp - stack size`, the run holds the stack's bottom, and its
/// [`BOTTOM_KEEP_PAGES`] lowest pages stay (the engine's sentinel words).
#[inline(never)]
pub(crate) fn below_here() -> usize {
    let stack = STACK_BYTES.load(Relaxed);
    if stack == 0 || !crate::engine::in_fiber() {
        return 0;
    }
    let marker = 0u8;
    let sp = std::hint::black_box(std::ptr::addr_of!(marker) as usize);
    let page = page_size();
    let high = (sp / page).saturating_sub(1) * page;
    let floor = sp.saturating_sub(stack).next_multiple_of(page);
    if high <= floor {
        return 0;
    }
    let Some(mut low) = resident_run_low(floor, high, page) else {
        return 0;
    };
    if low == floor || !readable(low - page) {
        low += BOTTOM_KEEP_PAGES * page;
    }
    if low >= high {
        return 0;
    }
    // SAFETY: [low, high) lies in this fiber's stack: below the page of this frame and the
    // one under it (nothing there is in use), at or above the lowest resident page of a run
    // that starts there (the guard page under the stack is never resident, so the run does
    // not leave the stack), and clear of the bottom pages when the run reaches them.
    // `MADV_DONTNEED` on private anonymous memory only makes the next touch see zeroes.
    let rc = unsafe { libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED) };
    if rc != 0 {
        return 0;
    }
    TRIMMED.fetch_add((high - low) as u64, Relaxed);
    high - low
}

/// The lowest page of the run of resident pages that ends at `high` (exclusive), going down
/// no further than `floor`; `None` when the page under `high` is not resident or the look
/// fails.
fn resident_run_low(floor: usize, high: usize, page: usize) -> Option<usize> {
    let mut vec = [0u8; PAGES_PER_CALL];
    let mut top = high;
    while top > floor {
        let len = (top - floor).min(PAGES_PER_CALL * page);
        let at = top - len;
        // SAFETY: `at` is page-aligned and `vec` has room for `len / page` entries; an
        // unmapped page in the range makes the call fail (ENOMEM) without touching anything.
        let rc = unsafe { libc::mincore(at as *mut libc::c_void, len, vec.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        let pages = len / page;
        match vec[..pages].iter().rposition(|v| v & 1 == 0) {
            Some(i) if i + 1 == pages && top == high => return None,
            Some(i) => return Some(at + (i + 1) * page),
            None => top = at,
        }
    }
    Some(floor)
}

/// Whether the byte at `addr` can be read (the guard page under a stack cannot), asked of the
/// kernel so that nothing faults; any failure reads as "no".
fn readable(addr: usize) -> bool {
    let mut byte = 0u8;
    let local = libc::iovec {
        iov_base: std::ptr::addr_of_mut!(byte).cast(),
        iov_len: 1,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: 1,
    };
    // SAFETY: both iovecs describe one byte; the kernel checks the remote one and writes only
    // into `byte`.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == 1
}

/// Whether any page of [`low`, `high`) (page-aligned) is resident.
fn resident(low: usize, high: usize, page: usize) -> bool {
    let mut vec = [0u8; PAGES_PER_CALL];
    let mut at = low;
    while at < high {
        let len = (high - at).min(PAGES_PER_CALL * page);
        // SAFETY: `at` is page-aligned, [at, at + len) is mapped (inside the stack), and
        // `vec` has room for `len / page` entries.
        let rc = unsafe { libc::mincore(at as *mut libc::c_void, len, vec.as_mut_ptr()) };
        if rc != 0 {
            return false;
        }
        if vec[..len / page].iter().any(|v| v & 1 == 1) {
            return true;
        }
        at += len;
    }
    false
}
