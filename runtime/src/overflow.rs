//! Stack overflow containment: a fiber that overflows its stack ends that fiber, never the
//! process, and is counted.
//!
//! The engine's guard-page handler abandons an overflowed fiber's frames and the fiber ends with
//! a [`JoinError`](crate::JoinError) that says so. But when the overflow used the stack to its
//! very last word, the engine takes the stack for corrupted (its bottom sentinel is gone) and
//! calls `exit(1)`. This module chains a SIGSEGV/SIGBUS handler in front of the engine's: when
//! the fault is a write just below the stack pointer, into the page under a fiber stack, it puts
//! the sentinel back in the stack's bottom word (the fault happened *below* it, so nothing will
//! write there again) and counts the overflow, then hands the signal to the engine's handler as
//! before. Any other fault goes on to the engine's handler untouched: the engine restores the
//! default action and the process dies as it would have.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Once;

/// The engine's marker for untouched stack words (generator's `STACK_SENTINEL`).
pub(crate) const STACK_SENTINEL: usize = 0xDEAD_BEEF;
/// How far from the stack pointer a fault may be and still be taken for a stack overflow: a
/// `push`/`call` writes just below it, a probe or a store into a new frame at or above it.
const NEAR_SP: usize = 1 << 20;

/// Overflows recognised since start.
static OVERFLOWS: AtomicU64 = AtomicU64::new(0);
/// The engine's `sigaction`s for SIGSEGV and SIGBUS, called after ours (written once, before
/// our handler is installed).
static mut PREVIOUS: [Option<libc::sigaction>; 2] = [None, None];
/// The system page size, read at install time.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// Fiber stack overflows recognised since start (each ended one fiber).
pub fn stack_overflows() -> u64 {
    OVERFLOWS.load(Ordering::Relaxed)
}

/// Installs the handler once. Must run after the engine installed its own (that happens when
/// the first fiber stack is made), so it is called from inside a fiber.
pub(crate) fn install_once() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: `sysconf` has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        for (i, sig) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
            // SAFETY: a zeroed sigaction is a valid "no handler" value; `sigaction` only reads
            // `ours` and writes `old`. PREVIOUS is written here, inside `call_once`, before our
            // handler can run (it is installed by this very call), and only read afterwards.
            unsafe {
                let mut ours: libc::sigaction = std::mem::zeroed();
                ours.sa_sigaction = on_fault as *const () as libc::sighandler_t;
                ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut ours.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                PREVIOUS[i] = Some(old);
                if libc::sigaction(sig, &ours, std::ptr::null_mut()) != 0 {
                    PREVIOUS[i] = None;
                }
            }
        }
    });
}

/// The stack pointer at the fault, where this architecture is supported.
///
/// # Safety
/// `ctx` must be the `ucontext_t` the kernel passed to a SA_SIGINFO handler.
unsafe fn fault_sp(ctx: *mut libc::c_void) -> Option<usize> {
    let uc = ctx.cast::<libc::ucontext_t>();
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        Some((*uc).uc_mcontext.gregs[libc::REG_RSP as usize] as usize)
    }
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    {
        Some((*uc).uc_mcontext.sp as usize)
    }
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    {
        let _ = uc;
        None
    }
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext to a SA_SIGINFO handler.
    let (addr, sp) = unsafe { ((*info).si_addr() as usize, fault_sp(ctx)) };
    if crate::engine::in_fiber() && sp.is_some_and(|sp| addr.abs_diff(sp) <= NEAR_SP) {
        let page = PAGE.load(Ordering::Relaxed);
        let bottom = (addr & !(page - 1)) + page;
        // SAFETY: the fault is a stack access next to the stack pointer of a fiber, in the
        // guard page under its stack; the word just above that page is the stack's bottom
        // word, mapped and writable, and the overflowing code is stopped below it. If the
        // guess is wrong, the engine's handler finds no guard page and the process dies of
        // this fault anyway.
        unsafe { std::ptr::write_volatile(bottom as *mut usize, STACK_SENTINEL) };
        OVERFLOWS.fetch_add(1, Ordering::Relaxed);
    }
    let slot = usize::from(sig == libc::SIGBUS);
    // SAFETY: PREVIOUS was written before this handler was installed and is never written again.
    let previous = unsafe { (*std::ptr::addr_of!(PREVIOUS))[slot] };
    if let Some(prev) = previous {
        if prev.sa_flags & libc::SA_SIGINFO != 0 && prev.sa_sigaction > libc::SIG_IGN {
            // SAFETY: the engine installed this SA_SIGINFO handler for exactly this signal; it is
            // called with the arguments the kernel gave us.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(prev.sa_sigaction) };
            f(sig, info, ctx);
            return;
        }
        if prev.sa_sigaction > libc::SIG_IGN {
            // SAFETY: as above, a plain handler.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(prev.sa_sigaction) };
            f(sig);
            return;
        }
    }
    // No handler before ours: restore the default and return, so the fault repeats and kills
    // the process as it would have without us.
    // SAFETY: resetting a signal to its default action.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}
