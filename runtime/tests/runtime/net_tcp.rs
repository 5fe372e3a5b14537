//! TCP: busy ports, split halves in two fibers on one descriptor, timeouts, host-name connect,
//! write_with.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

use moria_runtime::net::{ListenOptions, TcpListener, TcpStream};
use moria_runtime::{spawn, ShutdownToken};

use crate::common;

/// A bound on waits that only a hang would reach.
const HANG_GUARD: Duration = Duration::from_secs(10);

#[test]
fn binding_a_busy_port_gives_addr_in_use_unless_reuse_port_is_asked() {
    common::runtime();
    let first = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = first.local_addr().unwrap();
    let err = TcpListener::bind(addr).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse);

    let opts = ListenOptions {
        reuse_port: true,
        ..ListenOptions::default()
    };
    let a = TcpListener::bind_with("127.0.0.1:0", opts).unwrap();
    let b = TcpListener::bind_with(a.local_addr().unwrap(), opts);
    assert!(b.is_ok(), "both sockets asked for reuse-port");
}

#[test]
fn split_halves_run_full_duplex_in_two_fibers() {
    common::runtime();
    let addr = common::echo_server(ShutdownToken::new());
    let result = spawn(move || {
        let stream = TcpStream::connect(addr).unwrap();
        let (mut reader, mut writer) = stream.split().unwrap();
        let payload: Vec<u8> = (0..4 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
        let expected = payload.clone();
        // 4 MiB is far more than the socket buffers: only concurrent read and write finish.
        let w = spawn(move || {
            writer.write_all(&payload).unwrap();
            writer.shutdown_write().unwrap();
        });
        let mut got = Vec::new();
        reader.read_to_end(&mut got).unwrap();
        w.join().unwrap();
        got == expected
    });
    assert!(result.join().unwrap());
}

/// How many of this process's descriptors refer to the same socket as `fd` (race-free while
/// other tests open descriptors of their own).
fn descriptors_of_socket(fd: std::os::fd::RawFd) -> usize {
    let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|link| *link == target)
        .count()
}

#[test]
fn split_halves_share_one_descriptor_that_closes_with_the_last_half() {
    common::runtime();
    let mut l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let peer = std::thread::spawn(move || {
        let mut p = std::net::TcpStream::connect(addr).unwrap();
        p.set_read_timeout(Some(HANG_GUARD)).unwrap();
        p.write_all(b"ping").unwrap();
        let mut got = Vec::new();
        p.read_to_end(&mut got).unwrap();
        got
    });
    let sent = spawn(move || {
        let (s, _) = l.accept().unwrap();
        let fd = s.as_raw_fd();
        assert_eq!(descriptors_of_socket(fd), 1);
        let (mut reader, mut writer) = s.split().unwrap();
        assert_eq!(reader.as_raw_fd(), writer.as_raw_fd());
        assert_eq!(
            descriptors_of_socket(fd),
            1,
            "split took a second descriptor"
        );
        assert_eq!(common::read_n(&mut reader, 4), b"ping");
        // The reader goes first: the writer still has the socket.
        drop(reader);
        writer.write_all(b"pong").unwrap();
        drop(writer);
    });
    sent.join().unwrap();
    assert_eq!(
        peer.join().unwrap(),
        b"pong",
        "end of stream once both halves are gone"
    );
}

#[test]
fn split_writer_waits_for_room_while_the_reader_waits_for_bytes() {
    common::runtime();
    let mut l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let peer = std::thread::spawn(move || {
        let mut p = std::net::TcpStream::connect(addr).unwrap();
        p.set_read_timeout(Some(HANG_GUARD)).unwrap();
        // Read nothing until the writer has given up, then say one word.
        go_rx.recv_timeout(HANG_GUARD).unwrap();
        p.write_all(b"late").unwrap();
        let mut sink = Vec::new();
        let _ = p.read_to_end(&mut sink);
    });
    let (s, _) = l.accept().unwrap();
    s.set_write_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let (mut reader, mut writer) = s.split().unwrap();
    let read = spawn(move || common::read_n(&mut reader, 4));
    let chunk = vec![7u8; 65536];
    let err = spawn(move || loop {
        if let Err(e) = writer.write(&chunk) {
            break e;
        }
    })
    .join()
    .unwrap();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    go_tx.send(()).unwrap();
    assert_eq!(
        read.join().unwrap(),
        b"late",
        "the reader's wait survived the writer's"
    );
    peer.join().unwrap();
}

#[test]
fn read_timeout_gives_timed_out_and_the_stream_stays_usable() {
    common::runtime();
    let addr = common::echo_server(ShutdownToken::new());
    spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let mut buf = [0u8; 4];
        let err = s.read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        // The echo comes back when the server's fiber gets a worker, which with other tests
        // running in this process can take longer than 20 ms: bound that wait only by a hang.
        s.set_read_timeout(Some(HANG_GUARD)).unwrap();
        s.write_all(b"ping").unwrap();
        s.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ping");
        assert!(s.set_read_timeout(Some(Duration::ZERO)).is_err());
    })
    .join()
    .unwrap();
}

#[test]
fn connect_resolves_host_names_off_the_worker() {
    common::runtime();
    let addr = common::echo_server(ShutdownToken::new());
    let port = addr.port();
    spawn(move || {
        let mut s = TcpStream::connect(format!("localhost:{port}")).unwrap();
        s.write_all(b"hi").unwrap();
        assert_eq!(common::read_n(&mut s, 2), b"hi");
        let err = TcpStream::connect("no-such-host.invalid:80").unwrap_err();
        assert_ne!(err.kind(), ErrorKind::TimedOut);
    })
    .join()
    .unwrap();
}

#[test]
fn accept_timeout_expires_with_timed_out() {
    common::runtime();
    let mut l = TcpListener::bind("127.0.0.1:0").unwrap();
    let err = spawn(move || l.accept_timeout(Duration::from_millis(20)).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    // From a plain thread too.
    let mut l = TcpListener::bind("127.0.0.1:0").unwrap();
    let err = l.accept_timeout(Duration::from_millis(20)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
}

#[test]
fn write_with_waits_for_room_and_honours_the_write_timeout() {
    common::runtime();
    // A server that never reads: the client's buffers fill and write_with must wait.
    let mut l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (hold_tx, hold_rx) = moria_runtime::sync::channel::<()>();
    spawn(move || {
        let (_conn, _) = l.accept().unwrap();
        let _ = hold_rx.recv(); // keep the connection open, unread
    });
    let err = spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_write_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let chunk = [7u8; 65536];
        loop {
            // SAFETY: `chunk` is valid for its length; fd is the open socket.
            let r = s.write_with(|fd| {
                let n = unsafe {
                    libc::send(fd, chunk.as_ptr().cast(), chunk.len(), libc::MSG_DONTWAIT)
                };
                if n < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            if let Err(e) = r {
                break e;
            }
        }
    })
    .join()
    .unwrap();
    drop(hold_tx);
    assert_eq!(err.kind(), ErrorKind::TimedOut);
}

/// The socket option `opt` (SO_RCVTIMEO or SO_SNDTIMEO) as the kernel has it.
fn socket_timeout_option(fd: std::os::fd::RawFd, opt: libc::c_int) -> Duration {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: `tv` and `len` are valid for writes and `len` is `tv`'s size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt: {}", std::io::Error::last_os_error());
    Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000)
}

#[test]
fn timeouts_reach_the_engine_only_when_a_call_has_to_wait() {
    common::runtime();
    let peer_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let s = TcpStream::connect(peer_listener.local_addr().unwrap()).unwrap();
    let (peer, _) = peer_listener.accept().unwrap();
    // In a fiber: a plain thread never hands its waits to the engine (it polls).
    spawn(move || engine_gets_timeouts_only_to_wait(s, peer))
        .join()
        .unwrap();
}

fn engine_gets_timeouts_only_to_wait(mut s: TcpStream, mut peer: std::net::TcpStream) {
    let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
    peer.write_all(b"hello").unwrap();
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; waits for the bytes to be readable.
    assert_eq!(unsafe { libc::poll(&mut pfd, 1, -1) }, 1);

    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(s.read_timeout().unwrap(), Some(Duration::from_secs(5)));
    let mut buf = [0u8; 16];
    assert_eq!(s.read(&mut buf).unwrap(), 5, "the bytes were there");
    s.write_all(b"back").unwrap();
    assert_eq!(common::read_n(&mut peer, 4), b"back");
    assert_eq!(socket_timeout_option(fd, libc::SO_RCVTIMEO), Duration::ZERO);
    assert_eq!(socket_timeout_option(fd, libc::SO_SNDTIMEO), Duration::ZERO);

    for ms in [30, 60] {
        s.set_read_timeout(Some(Duration::from_millis(ms))).unwrap();
        let err = s.read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut, "nothing came in {ms} ms");
        // The kernel keeps the option in clock ticks (HZ 100 to 1000), rounded up.
        let option = socket_timeout_option(fd, libc::SO_RCVTIMEO);
        let wanted = Duration::from_millis(ms);
        assert!(
            option >= wanted && option <= wanted + Duration::from_millis(10),
            "handed over for the wait: {option:?}, asked {wanted:?}"
        );
    }
    peer.write_all(b"more").unwrap();
    s.read_exact(&mut buf[..4]).unwrap();
    assert_eq!(&buf[..4], b"more", "the stream goes on after a timeout");
}

/// Reads with `read_within` until `n` bytes came, failing on a timeout or an early end.
fn read_within_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < n {
        match s.read_within(&mut buf, Duration::from_secs(60)).unwrap() {
            Some(0) => panic!("end of stream after {} of {n} bytes", got.len()),
            Some(k) => got.extend_from_slice(&buf[..k]),
            None => panic!("no bytes within 60 s"),
        }
    }
    got
}

#[test]
fn read_within_gives_what_arrives_none_after_its_time_and_never_before() {
    common::runtime();
    let addr = common::echo_server(ShutdownToken::new());
    let check = move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let mut buf = [0u8; 64];
        let wait = Duration::from_millis(30);
        let start = std::time::Instant::now();
        assert_eq!(s.read_within(&mut buf, wait).unwrap(), None);
        assert!(start.elapsed() >= wait, "ended after {:?}", start.elapsed());
        // Waits that end with bytes, one after another: a readiness report left over from
        // one round, or the coarse wake of an earlier wait, neither loses nor fakes any.
        for round in 0..300u32 {
            let msg = format!("round {round}");
            s.write_all(msg.as_bytes()).unwrap();
            assert_eq!(read_within_n(&mut s, msg.len()), msg.as_bytes());
        }
        assert_eq!(
            s.read_within(&mut buf, Duration::from_millis(1)).unwrap(),
            None
        );
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(
            s.read_within(&mut buf, Duration::from_secs(60)).unwrap(),
            Some(0)
        );
    };
    // In a fiber (the coarse deadline) and on a plain thread (poll).
    spawn(check).join().unwrap();
    check();
}

#[test]
fn many_coarse_waits_end_with_none_round_after_round() {
    common::runtime();
    let addr = common::echo_server(ShutdownToken::new());
    for _ in 0..2 {
        // Fifty fibers whose waits all time out, twice: each wait is woken once, and what the
        // first round left on the sweeper's lists does not disturb the second.
        let fibers: Vec<_> = (0..50)
            .map(|i| {
                spawn(move || {
                    let mut s = TcpStream::connect(addr).unwrap();
                    let mut buf = [0u8; 16];
                    let wait = Duration::from_millis(10 + i % 7);
                    s.read_within(&mut buf, wait).unwrap()
                })
            })
            .collect();
        for f in fibers {
            assert_eq!(f.join().unwrap(), None);
        }
    }
}

/// After a read that emptied the socket, `read_within` waits for the engine's readiness report
/// without looking first: bytes that arrived between that read and the wait must still end it
/// at once. (Were the report lost, each wait would end only at its deadline, a minute here: the
/// test gives all rounds 30 s.)
#[test]
fn read_within_after_a_read_that_emptied_the_socket_sees_what_came_since() {
    common::runtime();
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    spawn(move || {
        let mut client = TcpStream::connect(addr).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        for round in 0..50u8 {
            client.write_all(&[round; 3]).unwrap();
            let mut got = 0;
            while got < 3 {
                got += server.read(&mut buf[got..]).unwrap();
            }
            // The socket is empty now; these bytes come before the server waits. Parking this
            // fiber for a moment lets the worker's event loop run and take the readiness
            // report while nobody waits on the socket: the interleaving that a wait clearing
            // old reports would lose (the outcome must not depend on whether it happens).
            client.write_all(&[round; 5]).unwrap();
            moria_runtime::sleep(Duration::from_millis(1));
            let mut more = Vec::new();
            while more.len() < 5 {
                match server
                    .read_within(&mut buf, Duration::from_secs(60))
                    .unwrap()
                {
                    Some(n) if n > 0 => more.extend_from_slice(&buf[..n]),
                    other => panic!("round {round}: {other:?} instead of the bytes sent"),
                }
            }
            assert_eq!(more, [round; 5]);
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(30))
        .expect("bytes that came before the wait did not end it");
}

/// A plain thread's blocking socket calls wait in `poll(2)`, not through the engine: its
/// blocking calls park the thread while a proxy fiber holds a pointer to the call on the
/// thread's stack, and a stray `unpark` used to let the thread leave the call early; the proxy
/// then used the stale pointer (a crash in a worker, seen under load). Here a third thread
/// unparks the reading thread without pause while a writer sends one byte at a time, so the
/// reader keeps finding the socket empty and waiting: every byte must arrive, in order.
#[test]
fn plain_thread_reads_and_writes_survive_stray_unparks() {
    common::runtime();
    const BYTES: usize = 20_000;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let writer = std::thread::spawn(move || {
        let (mut peer, _) = listener.accept().unwrap();
        for i in 0..BYTES {
            peer.write_all(&[(i % 251) as u8]).unwrap();
        }
        let mut echo = [0u8; 1];
        peer.read_exact(&mut echo).unwrap();
        echo[0]
    });
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut got = Vec::with_capacity(BYTES);
            let mut buf = [0u8; 1];
            while got.len() < BYTES {
                let n = s.read(&mut buf).unwrap();
                assert_ne!(n, 0, "early end after {} bytes", got.len());
                got.push(buf[0]);
            }
            s.write_all(b"!").unwrap();
            done.store(true, std::sync::atomic::Ordering::Release);
            got
        })
    };
    let target = reader.thread().clone();
    let mut unparks = 0u64;
    while !done.load(std::sync::atomic::Ordering::Acquire) {
        target.unpark();
        unparks += 1;
    }
    let got = reader.join().unwrap();
    assert_eq!(writer.join().unwrap(), b'!');
    assert!(unparks > 0);
    assert!(
        got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8),
        "bytes out of order or lost"
    );
}
