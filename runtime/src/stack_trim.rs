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
//!
//! A fiber about to wait long with nothing deep on its stack (an idle WebSocket) gives back
//! everything below its frame, the bottom page too, with [`all_below_here`]
//! ([`crate::fiber::wait_trimmed`]): the engine reads its sentinel words only when the fiber
//! ends (zeroes there read as an overflow and end the process), so they are written back when
//! the wait is over. What stays resident is the pages the fiber's frames and its wait occupy:
//! one page for `echo --ws` (bench/README.md, "Memory per idle WebSocket").
//! - The bottom is found exactly: one `process_vm_readv` reads a byte of each page under the
//!   frame, going down, and stops at the guard page under the stack.
//! - The page under the frame stays down to [`CALL_ROOM`] bytes below it, for the system calls
//!   made after the pages went (a zeroed return address would crash).
//! - A fiber that overflows its stack after such a wait has its first sentinel word written
//!   back by the overflow handler (`overflow.rs`), as any overflowed fiber.

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
/// Pages one `process_vm_readv` call of [`stack_bottom`] reads a byte of.
const READS_PER_CALL: usize = 64;
/// Bytes under [`all_below_here`]'s frame that stay: room for the system calls it makes after
/// giving the pages under it back (their return addresses go there).
const CALL_ROOM: usize = 512;
/// Words at a stack's bottom the engine fills with its sentinel when it makes the stack.
const SENTINEL_WORDS: usize = 8;

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

/// The body of the stack sweep's fibers (`stack_sweep.rs`): gives back every page of the
/// running fiber's stack below its frame (all but [`CALL_ROOM`] bytes under it), resident or
/// not, down to the bottom's [`BOTTOM_KEEP_PAGES`] pages (the engine's sentinel words).
///
/// Called as a fiber's whole body, with nothing captured, or from such a body's frame: its
/// frame lies within a page or two of the stack's top (the engine's first frames and this
/// one), so `sp - stack size` is at most that far under the stack's bottom and the bottom
/// pages kept cover it, as in [`fiber_ends`]. No `mincore` look: `madvise` on pages that are not resident costs a walk of
/// the page tables, less than the look. Not counted in [`trimmed_bytes`], which would then
/// count pages that were never resident.
#[inline(never)]
pub(crate) fn sweep_own_stack() {
    let stack = STACK_BYTES.load(Relaxed);
    let marker = 0u8;
    let sp = std::hint::black_box(std::ptr::addr_of!(marker) as usize);
    let page = page_size();
    let high = sp.saturating_sub(CALL_ROOM) / page * page;
    let low = (sp.saturating_sub(stack) + BOTTOM_KEEP_PAGES * page).next_multiple_of(page);
    if stack == 0 || high <= low {
        return;
    }
    // SAFETY: [low, high) lies in this fiber's stack: `CALL_ROOM` under this frame (the madvise
    // call's return address sits in that room) and, this frame being within a page or two of
    // the top, at or above the stack's bottom pages that hold the engine's sentinel.
    // `MADV_DONTNEED` on private anonymous memory only makes the next touch see zeroes.
    unsafe { libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED) };
}

/// A stack trimmed by [`all_below_here`]: when dropped (the wait is over, or unwinds), writes the
/// engine's sentinel words back at the stack's bottom if the trim gave that page back.
#[must_use]
pub(crate) struct Trimmed {
    /// The stack's bottom when its page was given back; 0 when it stayed.
    bottom: usize,
}

impl Drop for Trimmed {
    fn drop(&mut self) {
        if self.bottom == 0 {
            return;
        }
        let words = self.bottom as *mut usize;
        for i in 0..SENTINEL_WORDS {
            // SAFETY: `bottom` is the lowest page of the running fiber's own stack (found under
            // the guard page by `stack_bottom`), mapped and writable, and far below every frame
            // in use; these are the words the engine wrote there when it made the stack.
            unsafe { std::ptr::write_volatile(words.add(i), crate::overflow::STACK_SENTINEL) };
        }
    }
}

/// Gives back every resident page of the running fiber's stack below the caller's frame (all
/// but [`CALL_ROOM`] bytes under it), the stack's bottom page included when it holds only the
/// engine's sentinel; the returned guard writes the sentinel back. Nothing outside a fiber.
#[inline(never)]
pub(crate) fn all_below_here() -> Trimmed {
    let none = Trimmed { bottom: 0 };
    let stack = STACK_BYTES.load(Relaxed);
    if stack == 0 || !crate::engine::in_fiber() {
        return none;
    }
    let marker = 0u8;
    let sp = std::hint::black_box(std::ptr::addr_of!(marker) as usize);
    let page = page_size();
    let high = sp.saturating_sub(CALL_ROOM) / page * page;
    let Some(bottom) = stack_bottom(sp, stack, page) else {
        return none;
    };
    if high <= bottom {
        return none;
    }
    let words = bottom as *const usize;
    // SAFETY: `bottom` is the lowest page of this fiber's stack, mapped and readable (the read
    // maps a zero page if it was not resident).
    let sentinel = (0..SENTINEL_WORDS).all(|i| unsafe {
        std::ptr::read_volatile(words.add(i)) == crate::overflow::STACK_SENTINEL
    });
    // A bottom without the sentinel (the stack was used to its end) stays as it is.
    let low = if sentinel { bottom } else { bottom + page };
    if high <= low {
        return none;
    }
    let given = resident_pages(low, high, page) * page;
    // SAFETY: [low, high) lies in this fiber's stack: at or above its bottom (found under the
    // guard page) and `CALL_ROOM` under this frame, so no frame in use is there. The madvise
    // call's own return address sits in that room. `MADV_DONTNEED` on private anonymous memory
    // only makes the next touch see zeroes; the sentinel words go back when `Trimmed` drops.
    let rc = unsafe { libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED) };
    if rc != 0 {
        return none;
    }
    TRIMMED.fetch_add(given as u64, Relaxed);
    Trimmed {
        bottom: if sentinel { bottom } else { 0 },
    }
}

/// The lowest page of the stack holding `sp` (of `stack` bytes): the page above the guard,
/// found by reading one byte of each page under `sp`'s, going down, in one `process_vm_readv`
/// per [`READS_PER_CALL`] pages, which stops at the first page it cannot read. Its frame (1 KiB
/// of iovecs) lies under its caller's, in the part of the stack given back next.
#[inline(never)]
fn stack_bottom(sp: usize, stack: usize, page: usize) -> Option<usize> {
    let mut bytes = [0u8; READS_PER_CALL];
    let mut remote = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 1,
    }; READS_PER_CALL];
    let floor = sp.saturating_sub(stack) / page * page;
    let mut next = sp / page * page;
    while next > floor {
        let count = ((next - floor) / page).min(READS_PER_CALL);
        for (i, iov) in remote[..count].iter_mut().enumerate() {
            iov.iov_base = (next - (i + 1) * page) as *mut libc::c_void;
        }
        let local = libc::iovec {
            iov_base: bytes.as_mut_ptr().cast(),
            iov_len: count,
        };
        // SAFETY: `local` is `count` bytes of `bytes`; each remote iovec asks for one byte of
        // this process, which the kernel checks (an unreadable page ends the transfer).
        let n = unsafe {
            libc::process_vm_readv(libc::getpid(), &local, 1, remote.as_ptr(), count as _, 0)
        };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EFAULT) {
            return None;
        }
        let read = usize::try_from(n).unwrap_or(0);
        if read < count {
            // The page after the last one read is the guard; the stack starts above it.
            return (read > 0 || next < sp / page * page).then(|| next - read * page);
        }
        next -= count * page;
    }
    None
}

/// How many pages of [`low`, `high`) (page-aligned) are resident.
#[inline(never)]
fn resident_pages(low: usize, high: usize, page: usize) -> usize {
    let mut vec = [0u8; PAGES_PER_CALL];
    let mut at = low;
    let mut pages = 0;
    while at < high {
        let len = (high - at).min(PAGES_PER_CALL * page);
        // SAFETY: `at` is page-aligned, [at, at + len) is mapped (inside the stack), and
        // `vec` has room for `len / page` entries.
        if unsafe { libc::mincore(at as *mut libc::c_void, len, vec.as_mut_ptr()) } != 0 {
            return pages;
        }
        pages += vec[..len / page].iter().filter(|v| *v & 1 == 1).count();
        at += len;
    }
    pages
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
