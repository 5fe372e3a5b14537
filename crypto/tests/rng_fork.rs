//! `rng` across `fork`: a child starts with a copy of its parent's generator (key, counter and
//! buffered keystream), and must not hand out what the parent hands out next, nor what a
//! sibling hands out.
//!
//! Its own test binary, not a module of `tests/crypto`: a child of a multi-threaded process may
//! only rely on what no other thread held at the fork, and the other tests run TLS sessions
//! (OpenSSL's locks) on their threads. Here the only other thread is the harness's, waiting.

use moria_crypto::rng;

/// Bytes each process draws after the fork: 64 `u64`s from the buffer, one 16-byte fill and
/// one 8 KiB fill straight from the cipher.
const DRAWN: usize = 64 * 8 + 16 + 8192;

/// The same sequence of draws in every process.
fn draw() -> Vec<u8> {
    let mut out = Vec::with_capacity(DRAWN);
    for _ in 0..64 {
        out.extend_from_slice(&rng::u64().unwrap().to_ne_bytes());
    }
    let mut small = [0u8; 16];
    rng::fill(&mut small).unwrap();
    out.extend_from_slice(&small);
    let mut large = vec![0u8; 8192];
    rng::fill(&mut large).unwrap();
    out.extend_from_slice(&large);
    out
}

/// Forks; the child draws and sends its bytes through a pipe; the parent returns them.
fn child_draws() -> Vec<u8> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    let [read_end, write_end] = fds;
    // SAFETY: the child only draws random bytes (its own thread's generator, getrandom and
    // OpenSSL's cipher, which no other thread of this binary is using), writes and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let status = match rng::fill(&mut [0u8; 0]).map(|()| draw()) {
            Ok(bytes) => {
                let mut sent = 0;
                while sent < bytes.len() {
                    // SAFETY: writes initialised bytes from a live buffer to our pipe.
                    let n = unsafe {
                        libc::write(write_end, bytes[sent..].as_ptr().cast(), bytes.len() - sent)
                    };
                    if n <= 0 {
                        break;
                    }
                    sent += n as usize;
                }
                i32::from(sent != bytes.len())
            }
            Err(_) => 2,
        };
        // SAFETY: ends the child without running the parent's atexit handlers or destructors.
        unsafe { libc::_exit(status) };
    }
    // SAFETY: closes the parent's copy of the write end, which it owns and uses no more.
    unsafe { libc::close(write_end) };
    let mut got = vec![0u8; DRAWN];
    let mut filled = 0;
    while filled < DRAWN {
        // SAFETY: reads into the unfilled tail of a live buffer.
        let n = unsafe { libc::read(read_end, got[filled..].as_mut_ptr().cast(), DRAWN - filled) };
        assert!(n > 0, "the child sent {filled} of {DRAWN} bytes");
        filled += n as usize;
    }
    let mut status = 0;
    // SAFETY: waits for our own child; `status` is a valid int.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status}"
    );
    // SAFETY: closes the read end, which this function owns.
    unsafe { libc::close(read_end) };
    got
}

/// Every 8-byte window at an 8-byte offset of `bytes`.
fn words(bytes: &[u8]) -> std::collections::HashSet<[u8; 8]> {
    bytes
        .chunks_exact(8)
        .map(|w| w.try_into().unwrap())
        .collect()
}

#[test]
fn parent_and_children_never_produce_the_same_stream() {
    // The parent's generator exists and holds buffered keystream when it forks.
    rng::u64().unwrap();
    let first = child_draws();
    let second = child_draws();
    let parent = draw();
    let (p, a, b) = (words(&parent), words(&first), words(&second));
    assert_eq!(p.len(), DRAWN / 8, "the parent repeated itself");
    assert!(p.is_disjoint(&a), "the first child drew the parent's bytes");
    assert!(
        p.is_disjoint(&b),
        "the second child drew the parent's bytes"
    );
    assert!(a.is_disjoint(&b), "two children drew the same bytes");
}
