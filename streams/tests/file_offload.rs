//! A file read that blocks (a FIFO with no writer yet stands in for a stalled disk) runs on the
//! offload pool: an echo connection served by the same, single worker keeps answering.
//!
//! A test binary of its own (not a module of `tests/streams/`): it needs a runtime with exactly
//! one worker, and the runtime configuration is applied once per process, while the other
//! tests run on two workers.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use moria_runtime::net::TcpListener;
use moria_runtime::{spawn, stats, Runtime};
use moria_streams::File;

#[test]
fn a_blocked_file_read_does_not_stall_an_echo_connection_on_the_same_worker() {
    Runtime::builder().workers(1).build().expect("runtime");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("slow-disk");
    let c_path = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file system node.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let echo = spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        loop {
            let n = conn.read(&mut buf).unwrap();
            if n == 0 {
                return;
            }
            conn.write_all(&buf[..n]).unwrap();
        }
    });

    let running_before = stats().blocking_running;
    let fifo_path = fifo.clone();
    let reader = spawn(move || {
        // Opening a FIFO for reading blocks until a writer opens it; then the read blocks
        // until data comes. Both must wait on the offload pool, not on the worker.
        let mut file = File::open(&fifo_path)?;
        let mut out = String::new();
        file.read_to_string(&mut out)?;
        Ok::<_, std::io::Error>(out)
    });

    // Wait (bounded) until the file job is parked in the pool.
    let deadline = Instant::now() + Duration::from_secs(10);
    while stats().blocking_running <= running_before {
        assert!(
            Instant::now() < deadline,
            "the file open never reached the offload pool"
        );
        std::thread::yield_now();
    }

    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for round in 0..20u8 {
        client.write_all(&[b'a' + round]).unwrap();
        let mut back = [0u8; 1];
        client
            .read_exact(&mut back)
            .expect("echo stalled while the file read was blocked");
        assert_eq!(back[0], b'a' + round);
    }
    assert!(
        !reader.is_finished(),
        "the file read finished before the disk answered"
    );

    // The "disk" answers: the file read completes with the data.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writer.write_all(b"slow bytes").unwrap();
    drop(writer);
    assert_eq!(reader.join().unwrap().unwrap(), "slow bytes");
    drop(client);
    echo.join().unwrap();
}
