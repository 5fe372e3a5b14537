//! Helpers shared by the tests: certificate authorities (`ca`), the `openssl` command (`cli`),
//! TLS peers (`tls`), the runtime every fiber test runs on, scratch directories, test data.

pub mod ca;
pub mod cli;
pub mod tls;

use moria_runtime::Runtime;

/// The runtime of every fiber test in this binary: two workers. The engine takes one
/// configuration per process (a different one is refused), so all fiber tests share this one.
pub fn fiber_runtime() -> Runtime {
    Runtime::builder().workers(2).build().unwrap()
}

/// A fresh private (0700) scratch directory for keys and certificates, removed with everything
/// in it when the value is dropped, failed test included.
pub fn scratch_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("moria-crypto-{name}-"))
        .tempdir()
        .unwrap()
}

/// Deterministic test data with a checksum-friendly pattern.
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}
