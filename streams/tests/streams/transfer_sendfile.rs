//! Zero-copy transfer over loopback: a 100 MiB file sent with sendfile and checked end to end
//! with SHA-256; splice between sockets; limits, positions and the buffered fallback. Each test
//! also checks, through the transfer counters, which path moved the bytes: a zero-copy test
//! that silently fell back to copying fails.

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{Mutex, PoisonError};

use moria_runtime::net::TcpStream;
use moria_runtime::spawn;
use moria_streams::transfer::{transfer_stats, TransferStats};
use moria_streams::{transfer, BufStream, File, TransferExt};
use openssl::sha::Sha256;

use crate::common::{runtime, serve_once};

/// The transfer counters are process-wide: this module's tests (the only ones in this binary
/// that transfer) take turns so each sees only its own transfers.
static COUNTERS: Mutex<()> = Mutex::new(());

/// Runs `f` alone among this module's tests; returns its result and the paths its transfers took.
fn counted<T>(f: impl FnOnce() -> T) -> (T, TransferStats) {
    let _turn = COUNTERS.lock().unwrap_or_else(PoisonError::into_inner);
    let before = transfer_stats();
    let out = f();
    (out, transfer_stats().since(&before))
}

/// One `sendfile` transfer of `bytes` and nothing else.
fn sendfile_only(bytes: u64) -> TransferStats {
    TransferStats {
        sendfile_transfers: 1,
        sendfile_bytes: bytes,
        ..TransferStats::default()
    }
}

/// Writes `len` bytes of a non-repeating pattern to a temporary file; returns it and its hash.
fn pattern_file(len: usize) -> (tempfile::NamedTempFile, [u8; 32]) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let mut hash = Sha256::new();
    let mut block = vec![0u8; 1 << 20];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut left = len;
    while left > 0 {
        for word in block.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes()[..word.len()]);
        }
        let n = left.min(block.len());
        file.write_all(&block[..n]).unwrap();
        hash.update(&block[..n]);
        left -= n;
    }
    file.flush().unwrap();
    (file, hash.finish())
}

/// Reads a std socket to EOF, hashing; returns the length and the hash.
fn drain_and_hash(mut client: std::net::TcpStream) -> (u64, [u8; 32]) {
    client
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = client.read(&mut buf).unwrap();
        if n == 0 {
            return (total, hash.finish());
        }
        hash.update(&buf[..n]);
        total += n as u64;
    }
}

#[test]
fn sendfile_of_100_mib_arrives_intact() {
    const LEN: usize = 100 << 20;
    let (file, expected) = pattern_file(LEN);
    let path = file.path().to_path_buf();
    let ((moved, len, hash), paths) = counted(|| {
        let (addr, server) = serve_once(move |mut stream| {
            let mut source = File::open(&path).unwrap();
            source.transfer_to(&mut stream, None).unwrap()
        });
        let client = std::net::TcpStream::connect(addr).unwrap();
        let (len, hash) = drain_and_hash(client);
        (server.join().unwrap(), len, hash)
    });
    assert_eq!(moved, LEN as u64);
    assert_eq!(len, LEN as u64);
    assert_eq!(hash, expected);
    assert_eq!(paths, sendfile_only(LEN as u64));
}

#[test]
fn sendfile_starts_at_the_logical_position_and_honours_the_limit() {
    let (file, _) = pattern_file(1 << 20);
    let all = std::fs::read(file.path()).unwrap();
    let path = file.path().to_path_buf();
    let ((moved, got), paths) = counted(|| {
        let (addr, server) = serve_once(move |mut stream| {
            let mut source = File::open(&path).unwrap();
            let mut head = [0u8; 10];
            source.read_exact(&mut head).unwrap();
            let moved = source.transfer_to(&mut stream, Some(300_000)).unwrap();
            (moved, source.stream_position().unwrap())
        });
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).unwrap();
        (server.join().unwrap(), got)
    });
    assert_eq!(moved, (300_000, 300_010));
    assert_eq!(got, all[10..300_010]);
    assert_eq!(paths, sendfile_only(300_000));
}

#[test]
fn buffered_headers_go_out_before_the_sendfile_body() {
    let (file, _) = pattern_file(200_000);
    let body = std::fs::read(file.path()).unwrap();
    let path = file.path().to_path_buf();
    let ((moved, got), paths) = counted(|| {
        let (addr, server) = serve_once(move |stream| {
            let mut conn = BufStream::new(stream);
            conn.write_all(b"HEADERS\r\n\r\n").unwrap();
            let mut source = File::open(&path).unwrap();
            source.transfer_to(&mut conn, None).unwrap()
        });
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).unwrap();
        (server.join().unwrap(), got)
    });
    assert_eq!(moved, 200_000);
    assert_eq!(&got[..11], b"HEADERS\r\n\r\n");
    assert_eq!(got[11..], body[..]);
    assert_eq!(paths, sendfile_only(200_000));
}

#[test]
fn file_shorter_than_the_limit_stops_at_its_end() {
    let (file, _) = pattern_file(5000);
    let path = file.path().to_path_buf();
    let ((moved, got), paths) = counted(|| {
        let (addr, server) = serve_once(move |mut stream| {
            let mut source = File::open(&path).unwrap();
            source.seek(SeekFrom::Start(4000)).unwrap();
            source.transfer_to(&mut stream, Some(1 << 20)).unwrap()
        });
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).unwrap();
        (server.join().unwrap(), got)
    });
    assert_eq!(moved, 1000);
    assert_eq!(got.len(), 1000);
    assert_eq!(paths, sendfile_only(1000));
}

#[test]
fn splice_moves_a_socket_stream_to_another_socket() {
    const LEN: usize = 8 << 20;
    let (file, expected) = pattern_file(LEN);
    let data = std::fs::read(file.path()).unwrap();
    let ((moved, received), paths) = counted(|| {
        // Final hop: a sink server that hashes what it receives.
        let (sink_addr, sink) = serve_once(|mut stream| {
            let mut hash = Sha256::new();
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            loop {
                let n = stream.read(&mut buf).unwrap();
                if n == 0 {
                    return (total, hash.finish());
                }
                hash.update(&buf[..n]);
                total += n as u64;
            }
        });
        // Middle hop: a proxy that splices its client's bytes to the sink.
        let (proxy_addr, proxy) = serve_once(move |mut inbound| {
            let mut outbound = TcpStream::connect(sink_addr).unwrap();
            let moved = inbound.transfer_to(&mut outbound, None).unwrap();
            drop(outbound);
            moved
        });
        let mut client = std::net::TcpStream::connect(proxy_addr).unwrap();
        client.write_all(&data).unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        (proxy.join().unwrap(), sink.join().unwrap())
    });
    assert_eq!(moved, LEN as u64);
    assert_eq!(received, (LEN as u64, expected));
    let splice_only = TransferStats {
        splice_transfers: 1,
        splice_bytes: LEN as u64,
        ..TransferStats::default()
    };
    assert_eq!(paths, splice_only);
}

#[test]
fn writers_without_a_socket_get_the_buffered_copy() {
    let (file, _) = pattern_file(300_000);
    let expected = std::fs::read(file.path()).unwrap();
    runtime();
    let path = file.path().to_path_buf();
    let ((out, direct), paths) = counted(|| {
        let out = spawn(move || {
            let mut source = File::open(&path).unwrap();
            let mut sink = Vec::new();
            let moved = source.transfer_to(&mut sink, None).unwrap();
            assert_eq!(moved, 300_000);
            sink
        })
        .join()
        .unwrap();
        let mut count = std::io::sink();
        (
            out,
            transfer(&mut &expected[..], &mut count, Some(5)).unwrap(),
        )
    });
    assert_eq!(out, expected);
    assert_eq!(direct, 5);
    let buffered_only = TransferStats {
        buffered_transfers: 2,
        buffered_bytes: 300_005,
        ..TransferStats::default()
    };
    assert_eq!(paths, buffered_only);
}

#[test]
fn sendfile_keeps_working_under_bufstream_and_timeout() {
    use moria_streams::Timeout;
    let (file, expected) = pattern_file(3 << 20);
    let path = file.path().to_path_buf();
    let ((moved, head, len, hash), paths) = counted(|| {
        let (addr, server) = serve_once(move |stream| {
            let mut guarded = Timeout::new(stream);
            guarded.set_write_timeout(Some(std::time::Duration::from_secs(30)));
            let mut conn = BufStream::new(guarded);
            conn.write_all(b"H").unwrap();
            let mut source = File::open(&path).unwrap();
            source.transfer_to(&mut conn, None).unwrap()
        });
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        let mut head = [0u8; 1];
        client.read_exact(&mut head).unwrap();
        let (len, hash) = drain_and_hash(client);
        (server.join().unwrap(), head[0], len, hash)
    });
    assert_eq!(moved, 3 << 20);
    assert_eq!((head, len, hash), (b'H', 3 << 20, expected));
    assert_eq!(paths, sendfile_only(3 << 20));
}
