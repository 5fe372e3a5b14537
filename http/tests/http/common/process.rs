//! Tests that need a process of their own (process-wide state: the descriptor limit, the
//! transfer counters, the global logger) get one: the test runs this binary again as a child
//! that runs that test alone, and passes when it passed there.

use std::process::{Command, Output};

/// Set in the child process to the name of the one test it runs.
const OWN_PROCESS_ENV: &str = "MORIA_TEST_OWN_PROCESS";

/// The harness's name for test `function` of the module `module` (its `module_path!()`, which
/// names the binary first; the harness does not).
pub fn test_name(module: &str, function: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{function}"),
        None => function.to_owned(),
    }
}

/// Whether this is the process of its own that test `function` of `module` runs in. In any
/// other process, runs that test alone in a child process of this binary, asserts that it
/// passed there, and returns false: the caller returns at once.
pub fn own_process(module: &str, function: &str) -> bool {
    let name = test_name(module, function);
    if std::env::var(OWN_PROCESS_ENV).is_ok_and(|v| v == name) {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args([name.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(OWN_PROCESS_ENV, &name)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name} in a process of its own: {e}"));
    assert_passed(&name, &out);
    false
}

/// Asserts that the child process `out` ran test `name`, and it passed.
pub fn assert_passed(name: &str, out: &Output) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{name} in a child process: {}\n{text}",
        out.status
    );
}
