//! A server's cost from /proc: CPU time (user + system), resident memory (peak and now),
//! memory maps and open files of its process and every descendant (nginx workers, for
//! instance).

use std::fs;

/// `pid` and all its descendants.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for e in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(st) = stat_fields(p) {
            if let Some(pp) = st.get(1).and_then(|s| s.parse().ok()) {
                parents.push((p, pp));
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let cur = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == cur).map(|(p, _)| *p));
        i += 1;
    }
    out
}

/// The fields of /proc/PID/stat after the command name: state, ppid, … (index 0 is state).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = s.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// CPU seconds (user + system) used so far by `pid` and its descendants.
pub fn cpu_seconds(pid: u32) -> f64 {
    let ticks: u64 = tree(pid)
        .into_iter()
        .filter_map(stat_fields)
        // utime and stime are fields 14 and 15 of stat: 11 and 12 after the name.
        .map(|f| {
            f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
                + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        })
        .sum();
    ticks as f64 / clock_ticks()
}

/// The `key:` line of /proc/PID/status (`VmRSS`, `VmHWM`) of `pid` and its descendants,
/// summed, in KiB.
fn status_kib(pid: u32, key: &str) -> u64 {
    tree(pid)
        .into_iter()
        .filter_map(|p| fs::read_to_string(format!("/proc/{p}/status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .sum()
}

/// Peak resident memory (VmHWM) of `pid` and its descendants, summed, in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM")
}

/// Resident memory now (VmRSS) of `pid` and its descendants, summed, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS")
}

/// Memory maps of `pid` and its descendants (a fiber stack is two: the stack and its guard).
pub fn maps(pid: u32) -> u64 {
    tree(pid)
        .into_iter()
        .filter_map(|p| fs::read_to_string(format!("/proc/{p}/maps")).ok())
        .map(|s| s.lines().count() as u64)
        .sum()
}

/// Open file descriptors of `pid` and its descendants (sockets included).
pub fn fds(pid: u32) -> u64 {
    tree(pid)
        .into_iter()
        .filter_map(|p| fs::read_dir(format!("/proc/{p}/fd")).ok())
        .map(|d| d.count() as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_has_cpu_time_and_memory() {
        let me = std::process::id();
        // Burn CPU until the kernel has counted at least one tick of it.
        let mut x = 0u64;
        while super::cpu_seconds(me) == 0.0 {
            for i in 0..1_000_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
        }
        std::hint::black_box(x);
        // RSS first: the peak read after it cannot be lower, whatever other tests allocate.
        let rss = super::rss_kib(me);
        assert!(rss > 0);
        assert!(super::peak_rss_kib(me) >= rss);
        assert!(super::maps(me) > 0);
        // Other tests in this process open files too: look for a step they cannot hide.
        let before = super::fds(me);
        let files: Vec<_> = (0..50)
            .map(|_| std::fs::File::open("/proc/self/status").unwrap())
            .collect();
        assert!(super::fds(me) >= before + 40);
        drop(files);
    }
}
