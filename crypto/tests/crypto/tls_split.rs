//! Full duplex over one TLS session: both ends split their `TlsStream` and, at the same time,
//! each writes 16 MiB while reading the other's 16 MiB, checked by SHA-256. Each writer ends
//! with a half-close (close_notify and TCP shutdown of its direction) while its reader still
//! receives, so the halves also prove TLS 1.3 half-close works.

use std::io::{Read, Write};
use std::time::Duration;

use crate::common::tls::fiber_tls_setup;
use crate::common::{fiber_runtime, pattern};
use moria_crypto::{hash, Digest, Hasher, TlsReader, TlsWriter};
use moria_runtime::net::TcpStream;
use moria_runtime::spawn;

const PAYLOAD_LEN: usize = 16 << 20;
/// Odd write sizes, so records and reads never line up; over two maximal records, so whole
/// 16 KiB records stream in behind partial ones.
const PIECE_LEN: usize = 40 * 1024 + 13;
/// Turns a stuck half into a failed test instead of a hung one.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// Writes `payload` in pieces, then half-closes.
fn send(mut writer: TlsWriter, payload: &[u8]) -> std::io::Result<()> {
    for piece in payload.chunks(PIECE_LEN) {
        writer.write_all(piece)?;
    }
    writer.flush()?;
    writer.shutdown()
}

/// Reads to end of stream; the digest and length of what arrived.
fn receive(mut reader: TlsReader) -> std::io::Result<(Digest, usize)> {
    let mut hasher = Hasher::new("sha256").map_err(std::io::Error::other)?;
    let mut buf = vec![0u8; 10 * 1024 + 7];
    let mut total = 0;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            let digest = hasher.finish().map_err(std::io::Error::other)?;
            return Ok((digest, total));
        }
        hasher.update(&buf[..n]).map_err(std::io::Error::other)?;
        total += n;
    }
}

/// Runs a writer and a reader fiber on the two halves of `sock`'s session at the same time.
fn duplex(
    reader: TlsReader,
    writer: TlsWriter,
    payload: Vec<u8>,
) -> std::io::Result<(Digest, usize)> {
    let sending = spawn(move || send(writer, &payload));
    let received = receive(reader)?;
    sending.join().expect("writer fiber")?;
    Ok(received)
}

fn timed(sock: &TcpStream) {
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    sock.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
}

#[test]
fn both_halves_move_16_mib_each_way_at_once() {
    fiber_runtime().run(run).unwrap();
}

fn run() {
    let (acceptor, connector, mut listener, addr) = fiber_tls_setup();
    let to_client = pattern(PAYLOAD_LEN, 1);
    let to_server = pattern(PAYLOAD_LEN, 2);
    let (want_at_client, want_at_server) = (
        hash("sha256", &to_client).unwrap(),
        hash("sha256", &to_server).unwrap(),
    );

    let server = spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        timed(&sock);
        let tls = acceptor.accept(sock).unwrap();
        assert_eq!(tls.version(), "TLSv1.3");
        let (reader, writer) = tls.split().unwrap();
        duplex(reader, writer, to_client)
    });
    let sock = TcpStream::connect(addr).unwrap();
    timed(&sock);
    let tls = connector.connect("localhost", sock).unwrap();
    let (reader, writer) = tls.split().unwrap();
    let at_client = duplex(reader, writer, to_server).expect("client side");
    let at_server = server.join().unwrap().expect("server side");

    assert_eq!(at_client, (want_at_client, PAYLOAD_LEN));
    assert_eq!(at_server, (want_at_server, PAYLOAD_LEN));
}

/// A released reader (`release_buffers`: its next socket read lands on 512 bytes of stack)
/// reads every message whole, records larger than that first read included; `read_within`
/// says nothing came while the peer is silent. The server acknowledges each step with a byte,
/// so every message finds the reader released with nothing buffered.
#[test]
fn a_released_reader_reads_every_size_and_read_within_times_out() {
    fiber_runtime().run(released).unwrap();
}

const SIZES: [usize; 7] = [1, 511, 512, 513, 4096, PIECE_LEN, 100_000];

fn released() {
    let (acceptor, connector, mut listener, addr) = fiber_tls_setup();
    let server = spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        timed(&sock);
        let (mut reader, mut writer) = acceptor.accept(sock).unwrap().split().unwrap();
        let mut buf = [0u8; 64];
        let silent = reader
            .read_within(&mut buf, Duration::from_millis(10))
            .unwrap();
        let mut got = Vec::new();
        for len in SIZES {
            reader.release_buffers();
            writer.write_all(b"k").unwrap();
            writer.flush().unwrap();
            let mut message = vec![0u8; len];
            reader.read_exact(&mut message).unwrap();
            got.push(message);
        }
        (silent, got)
    });
    let sock = TcpStream::connect(addr).unwrap();
    timed(&sock);
    let mut tls = connector.connect("localhost", sock).unwrap();
    let sent: Vec<Vec<u8>> = (0..SIZES.len())
        .map(|i| pattern(SIZES[i], i as u32))
        .collect();
    for message in &sent {
        let mut ack = [0u8; 1];
        tls.read_exact(&mut ack).unwrap();
        tls.write_all(message).unwrap();
        tls.flush().unwrap();
    }
    let (silent, got) = server.join().unwrap();
    assert_eq!(silent, None, "read_within returned bytes nobody sent");
    assert_eq!(got, sent);
}
