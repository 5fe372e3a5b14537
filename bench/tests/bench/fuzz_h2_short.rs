//! A short run of `fuzz_h2` (its seeds and 500 mutated connections through the real HTTP/2
//! code): no finding, and the run's table names how the connections ended. The long runs are
//! in bench/README.
use std::process::Command;

#[test]
fn a_short_fuzz_h2_run_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fuzz_h2"))
        .args(["--iterations", "500", "--out"])
        .arg(dir.path())
        .output()
        .expect("run fuzz_h2");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("; 0 findings"), "{stdout}");
    assert!(
        stdout.contains("| Goaway(1) |"),
        "PROTOCOL_ERROR endings: {stdout}"
    );
}
