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
