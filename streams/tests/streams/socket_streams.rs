//! Streams stacked on real loopback sockets served by fibers: a line protocol over `BufStream`
//! with `read_until_limit`, a chunked body over a socket, and read/idle timeouts.

use std::io::{self, BufRead, Read, Write};
use std::time::Duration;

use moria_streams::{
    read_until_limit, BufStream, ChunkedReader, ChunkedWriter, Error, Limited, Timeout,
};

use crate::common::serve_once;

#[test]
fn line_server_over_bufstream_answers_and_rejects_an_overlong_line() {
    let (addr, server) = serve_once(|stream| {
        let mut conn = BufStream::new(stream);
        let mut answered = 0;
        loop {
            let mut line = Vec::new();
            match read_until_limit(&mut conn, b'\n', 64, &mut line) {
                Ok(0) => return Ok(answered),
                Ok(_) => {
                    conn.write_all(b"+").unwrap();
                    conn.write_all(&line).unwrap();
                    answered += 1;
                }
                Err(e) => {
                    conn.write_all(b"-too long\n").unwrap();
                    conn.flush().unwrap();
                    return Err(e);
                }
            }
        }
    });
    let client = std::net::TcpStream::connect(addr).unwrap();
    let mut reader = io::BufReader::new(client.try_clone().unwrap());
    let mut client = client;
    // Two pipelined lines get two answers, flushed when the server waits for more input.
    client.write_all(b"one\ntwo\n").unwrap();
    let mut answer = String::new();
    reader.read_line(&mut answer).unwrap();
    reader.read_line(&mut answer).unwrap();
    assert_eq!(answer, "+one\n+two\n");
    // Exactly the limit, so the server leaves nothing unread (no RST on close).
    client.write_all(&[b'x'; 64]).unwrap();
    answer.clear();
    reader.read_line(&mut answer).unwrap();
    assert_eq!(answer, "-too long\n");
    let err = server.join().unwrap().unwrap_err();
    assert!(matches!(
        Error::from_io(&err),
        Some(Error::DelimiterNotFound { limit: 64 })
    ));
}

#[test]
fn chunked_body_then_next_message_on_one_connection() {
    let (addr, server) = serve_once(|stream| {
        let mut conn = BufStream::new(stream);
        let mut body = Vec::new();
        let mut chunked = ChunkedReader::new(&mut conn);
        chunked.read_to_end(&mut body).unwrap();
        let mut next = Vec::new();
        Limited::exact(&mut conn, 4).read_to_end(&mut next).unwrap();
        (body, next)
    });
    let client = std::net::TcpStream::connect(addr).unwrap();
    let mut encoder = ChunkedWriter::new(io::BufWriter::new(client));
    for piece in [&b"first "[..], b"second ", b"third"] {
        encoder.write_all(piece).unwrap();
    }
    let mut client = encoder.finish().unwrap();
    client.write_all(b"NEXT").unwrap();
    client.flush().unwrap();
    let (body, next) = server.join().unwrap();
    assert_eq!(body, b"first second third");
    assert_eq!(next, b"NEXT");
}

#[test]
fn silent_peer_trips_the_read_timeout_and_then_the_idle_timeout() {
    let (addr, server) = serve_once(|stream| {
        let mut conn = Timeout::new(stream);
        conn.set_read_timeout(Some(Duration::from_millis(50)));
        let first = conn.read(&mut [0u8; 8]).unwrap_err();
        conn.set_idle_timeout(Some(Duration::from_millis(50)));
        conn.set_read_timeout(None);
        let second = conn.read(&mut [0u8; 8]).unwrap_err();
        (
            first.kind(),
            first.to_string(),
            second.kind(),
            second.to_string(),
        )
    });
    let client = std::net::TcpStream::connect(addr).unwrap();
    let (k1, m1, k2, m2) = server.join().unwrap();
    drop(client);
    assert_eq!(k1, io::ErrorKind::TimedOut);
    assert_eq!(m1, "read timed out");
    assert_eq!(k2, io::ErrorKind::TimedOut);
    assert_eq!(m2, "idle connection timed out");
}
