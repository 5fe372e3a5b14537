//! Start-up checks: the memory-map budget for fiber stacks and the open-file limit.

/// Each fiber stack costs two memory maps (the stack and its guard page).
pub const MAPS_PER_FIBER: usize = 2;

const MAX_MAP_COUNT: &str = "/proc/sys/vm/max_map_count";

/// Runs every start-up check for a configuration planning `planned_fibers` fibers, raising the
/// open-file limit when `raise_nofile`; logs what it finds.
pub(crate) fn check(planned_fibers: usize, raise_nofile: bool) {
    if let Some(limit) = max_map_count() {
        if let Some(msg) = map_count_warning(limit, planned_fibers) {
            log::warn!("{msg}");
        }
    }
    if raise_nofile {
        match raise_nofile_limit() {
            Ok((old, new)) if old != new => log::debug!("raised RLIMIT_NOFILE from {old} to {new}"),
            Ok(_) => {}
            Err(e) => log::warn!("could not raise RLIMIT_NOFILE: {e}"),
        }
    }
}

/// Reads `vm.max_map_count`, if the system exposes it.
pub fn max_map_count() -> Option<usize> {
    std::fs::read_to_string(MAX_MAP_COUNT)
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The warning to print when `limit` maps cannot hold `planned` fibers, if any.
pub fn map_count_warning(limit: usize, planned: usize) -> Option<String> {
    let capacity = limit / MAPS_PER_FIBER;
    (capacity < planned).then(|| {
        format!(
            "vm.max_map_count={limit} allows about {capacity} live fibers (2 maps per stack) \
             but {planned} are planned; raise it with \
             `sysctl -w vm.max_map_count={}`",
            planned
                .saturating_mul(MAPS_PER_FIBER)
                .saturating_add(limit / 2)
        )
    })
}

/// Raises the soft open-file limit to the hard limit; returns (old, new) soft limits.
pub fn raise_nofile_limit() -> std::io::Result<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let old = lim.rlim_cur;
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid rlimit whose soft value does not exceed its hard value.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((old, lim.rlim_cur))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_only_when_the_maps_cannot_hold_the_plan() {
        assert!(map_count_warning(65530, 10_000).is_none());
        let msg = map_count_warning(65530, 50_000).unwrap();
        assert!(msg.contains("vm.max_map_count"), "{msg}");
        assert!(msg.contains("sysctl -w"), "{msg}");
    }

    #[test]
    fn nofile_soft_limit_reaches_the_hard_limit() {
        let (_, new) = raise_nofile_limit().unwrap();
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid, writable rlimit.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(new, lim.rlim_max);
    }
}
