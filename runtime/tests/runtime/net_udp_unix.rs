//! UDP and Unix-domain sockets in fibers.

use std::io::{Read, Write};

use moria_runtime::net::{UdpSocket, UnixListener, UnixStream};
use moria_runtime::spawn;

use crate::common;

#[test]
fn udp_datagrams_round_trip_between_fibers() {
    common::runtime();
    let mut server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server_addr = server.local_addr().unwrap();
    let echo = spawn(move || {
        let mut buf = [0u8; 64];
        for _ in 0..3 {
            let (n, peer) = server.recv_from(&mut buf).unwrap();
            server.send_to(&buf[..n], peer).unwrap();
        }
    });
    let client = spawn(move || {
        let mut c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.connect(server_addr).unwrap();
        let mut got = Vec::new();
        for msg in [&b"one"[..], b"two", b"three"] {
            c.send(msg).unwrap();
            let mut buf = [0u8; 64];
            let n = c.recv(&mut buf).unwrap();
            got.push(buf[..n].to_vec());
        }
        got
    });
    assert_eq!(
        client.join().unwrap(),
        vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
    );
    echo.join().unwrap();
}

#[test]
fn unix_stream_echo_and_pair() {
    common::runtime();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("echo.sock");
    let mut listener = UnixListener::bind(&path).unwrap();
    let server = spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 5];
        conn.read_exact(&mut buf).unwrap();
        conn.write_all(&buf).unwrap();
    });
    let p = path.clone();
    let reply = spawn(move || {
        let mut c = UnixStream::connect(&p).unwrap();
        c.write_all(b"hello").unwrap();
        let mut buf = [0u8; 5];
        c.read_exact(&mut buf).unwrap();
        buf
    });
    assert_eq!(&reply.join().unwrap(), b"hello");
    server.join().unwrap();

    let (mut a, b) = UnixStream::pair().unwrap();
    let (mut b_read, _b_write) = b.split().unwrap();
    a.write_all(b"xy").unwrap();
    let mut buf = [0u8; 2];
    b_read.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"xy");
}

#[test]
fn unix_accept_times_out_and_stops_on_shutdown() {
    common::runtime();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.sock");
    let mut listener = UnixListener::bind(&path).unwrap();
    let token = moria_runtime::ShutdownToken::new();
    let t = token.clone();
    let fiber = spawn(move || {
        let timed_out = listener
            .accept_timeout(std::time::Duration::from_millis(10))
            .unwrap_err()
            .kind();
        let stopped = listener.accept_until(&t).unwrap().is_none();
        (timed_out, stopped)
    });
    token.trigger();
    assert_eq!(fiber.join().unwrap(), (std::io::ErrorKind::TimedOut, true));
}
