//! This machine and this process: the one-line description printed with every table, the load
//! average, the open-file limit (raised to the hard limit, checked against a need), and pinning
//! this process to the load CPUs.

use crate::tools;

fn first_line(path: &str, key: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.split_once(':').map_or(l, |(_, v)| v).trim().to_owned())
        })
        .unwrap_or_default()
}

/// The 1-, 5- and 15-minute load averages.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// CPUs online (not only those this process may run on: it pins itself).
pub fn online_cpus() -> usize {
    // SAFETY: sysconf only reads a configuration value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// One line naming the machine and the tools.
pub fn describe() -> String {
    format!(
        "{}, {} CPUs, Linux {}, {}, {}, {}, PostgreSQL from {}",
        first_line("/proc/cpuinfo", "model name"),
        online_cpus(),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        tools::version("nginx", "-v"),
        tools::version("wrk", "-v"),
        tools::version("siege", "--version"),
        std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| d
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .max())
            .map_or("PATH".into(), |v| format!("Debian's postgresql {v}")),
    )
}

/// Raises the open-file limit to the hard limit (500 connections on each side need more than
/// the usual 1024; the idle-connection rows need 10,000); servers and load generators inherit
/// it. Returns the soft limit in force afterwards.
pub fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    lim.rlim_cur
}

/// Pins this thread, and the threads and children it starts later, to `cpus` (`"1"` or
/// `"2-3"`, as `taskset -c` takes them; empty: not pinned).
pub fn pin_self(cpus: &str) {
    let (a, b) = cpus.split_once('-').unwrap_or((cpus, cpus));
    let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) else {
        return;
    };
    // SAFETY: cpu_set_t is plain data, zeroed then filled by CPU_SET with indices we checked
    // against its capacity; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in a..=b.min(libc::CPU_SETSIZE as usize - 1) {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The soft open-file limit of process `pid` ("Max open files" in /proc/PID/limits).
pub fn nofile_of(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    match line.split_whitespace().nth(3)? {
        "unlimited" => Some(u64::MAX),
        n => n.parse().ok(),
    }
}

/// `Err` naming the limit when `have` open files cannot hold `need`.
pub fn check_nofile(who: &str, have: u64, need: u64) -> Result<(), String> {
    if have >= need {
        return Ok(());
    }
    Err(format!(
        "{who}: RLIMIT_NOFILE (open files) is {have}, below the {need} this run needs; raise the \
         hard limit (`ulimit -Hn`, `LimitNOFILE=`) or pass a smaller --idle-conns"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_this_process_limit() {
        let soft = super::raise_nofile();
        assert_eq!(super::nofile_of(std::process::id()), Some(soft));
        assert!(super::check_nofile("me", soft, soft).is_ok());
        let e = super::check_nofile("me", 10, 11).unwrap_err();
        assert!(e.contains("RLIMIT_NOFILE") && e.contains("10"), "{e}");
    }
}
