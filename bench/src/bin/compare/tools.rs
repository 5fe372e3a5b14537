//! The external programs the comparison needs, with the Debian package of each: installed
//! with apt-get when running as root, otherwise the exact command is printed.

use std::path::Path;
use std::process::Command;

/// (program, Debian package) for the scenarios.
pub const NEEDED: &[(&str, &str)] = &[
    ("wrk", "wrk"),
    ("siege", "siege"),
    ("h2load", "nghttp2-client"),
    ("nginx", "nginx-light"),
    ("curl", "curl"),
    ("taskset", "util-linux"),
    ("timeout", "coreutils"),
];

/// (program, Debian package) for the syscall counts.
pub const FOR_SYSCALLS: &[(&str, &str)] = &[
    ("strace", "strace"),
    ("nginx", "nginx-light"),
    ("taskset", "util-linux"),
];

/// The PostgreSQL server binaries (found by `moria_orm::pg::TestServer`).
const POSTGRES: &str = "postgresql";

fn on_path(program: &str) -> bool {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .any(|d| Path::new(d).join(program).is_file())
}

fn postgres_present() -> bool {
    std::env::var("MORIA_PG_BIN").is_ok()
        || std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().join("bin/postgres").exists())
        || on_path("postgres")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Makes sure every program of `needed` (and PostgreSQL with `postgres`) is there; `Err` names
/// what is missing and how to install it.
pub fn ensure(needed: &[(&str, &str)], postgres: bool) -> Result<(), String> {
    let mut missing: Vec<&str> = needed
        .iter()
        .filter(|(p, _)| !on_path(p))
        .map(|(_, pkg)| *pkg)
        .collect();
    if postgres && !postgres_present() {
        missing.push(POSTGRES);
    }
    if missing.is_empty() {
        return Ok(());
    }
    let install = format!("apt-get install -y {}", missing.join(" "));
    if !is_root() {
        return Err(format!(
            "missing packages: {}; run: sudo {install}",
            missing.join(", ")
        ));
    }
    eprintln!("compare: installing {}", missing.join(" "));
    for cmd in ["apt-get update -qq".to_owned(), format!("{install} -qq")] {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("{cmd}: {e}"))?
            .success();
        if !ok {
            return Err(format!("`{cmd}` failed; missing: {}", missing.join(", ")));
        }
    }
    Ok(())
}

/// The version a program prints (`nginx -v`, `wrk -v`, `siege --version`): its first line
/// holding a digit, cut before wrk's ` [epoll] Copyright …`.
pub fn version(program: &str, arg: &str) -> String {
    Command::new(program)
        .arg(arg)
        .output()
        .map(|o| {
            let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
            t.push_str(&String::from_utf8_lossy(&o.stderr));
            let line = t
                .lines()
                .find(|l| l.bytes().any(|b| b.is_ascii_digit()))
                .unwrap_or("");
            line.split(" [").next().unwrap_or(line).trim().to_owned()
        })
        .unwrap_or_else(|e| format!("{program}: {e}"))
}
