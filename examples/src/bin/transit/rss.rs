//! The process's resident memory: read from `/proc/self/statm`, and the load's freed heap
//! handed back to the system.

/// Resident bytes, or `None` where `/proc/self/statm` cannot be read (not Linux).
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// Returns free heap pages to the system: the load's temporary maps and vectors were freed in
/// the offload thread's malloc arena, which glibc keeps otherwise (about 11 MiB of 50 on an
/// MBTA-sized set).
pub fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
