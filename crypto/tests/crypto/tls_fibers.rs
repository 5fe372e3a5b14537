//! The OpenSSL-in-fibers proof: 200 concurrent TLS connections served and opened by fibers on
//! two workers, each doing a handshake and a 1 MiB echo checked by SHA-256, twice (the second
//! time resuming sessions), with zero errors. Meanwhile 50 saboteur connections break their
//! sessions with a record forged under the TLS layer: for half of them the server forges one, so
//! the client's OpenSSL fails and its per-thread error queue fills and drains on the same
//! workers (none of it may leak into a healthy connection); for the other half the client
//! forges one, which the server's record layer (moria-crypto's once the connection went idle)
//! must refuse.
//! The test also checks that fibers really did run on both workers and migrate between them in
//! the middle of TLS sessions.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;

use crate::common::tls::trusting;
use crate::common::{fiber_runtime, pattern};
use moria_crypto::{hash, Digest, Hasher, TlsAcceptor, TlsConnector};
use moria_runtime::net::{TcpListener, TcpStream};
use moria_runtime::spawn;

const CONNECTIONS: usize = 200;
/// Extra connections that break their sessions on purpose.
const SABOTEURS: usize = 50;
const ROUNDS: usize = 2;
const PAYLOAD_LEN: usize = 1 << 20;
const PIECE_LEN: usize = 16 * 1024;
/// Turns a stuck connection into a failed test instead of a hung one.
const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// What one client fiber observed over its rounds.
#[derive(Default)]
struct Observed {
    threads: HashSet<ThreadId>,
    migrations: usize,
    resumed: usize,
}

/// The worker thread the calling fiber runs on right now (not inlined, so the thread-local
/// read cannot be cached across a yield).
#[inline(never)]
fn worker() -> ThreadId {
    std::thread::current().id()
}

fn serve(acceptor: TlsAcceptor, sock: TcpStream) -> moria_crypto::Result<u64> {
    sock.set_read_timeout(Some(IO_TIMEOUT))?;
    sock.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut tls = acceptor.accept(sock)?;
    let mut buf = vec![0u8; PIECE_LEN];
    let mut total = 0u64;
    loop {
        let n = tls.read(&mut buf)?;
        if n == 0 {
            tls.shutdown()?;
            return Ok(total);
        }
        tls.write_all(&buf[..n])?;
        if buf[..n] == FORGE_TO_CLIENT {
            tls.get_mut().write_all(&forged_record())?;
        }
        // Waiting for the next piece, as a server's idle connection does: the session goes on
        // in Moria's record layer from here (see the crate README).
        tls.release_buffers();
        total += n as u64;
    }
}

fn client(
    id: usize,
    addr: std::net::SocketAddr,
    connector: TlsConnector,
    payload: Arc<Vec<u8>>,
    expected: Digest,
) -> Result<Observed, String> {
    let mut seen = Observed::default();
    let mut last = worker();
    let mut note = |seen: &mut Observed| {
        let now = worker();
        if now != last {
            seen.migrations += 1;
            last = now;
        }
        seen.threads.insert(now);
    };
    for round in 0..ROUNDS {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("connection {id} round {round}: {what}: {e}")
        };
        let sock = TcpStream::connect(addr).map_err(|e| fail("connect", &e))?;
        sock.set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| sock.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|e| fail("timeouts", &e))?;
        let mut tls = connector
            .connect("localhost", sock)
            .map_err(|e| fail("handshake", &e))?;
        note(&mut seen);
        seen.resumed += usize::from(tls.session_reused());
        let mut hasher = Hasher::new("sha256").map_err(|e| fail("hasher", &e))?;
        let mut echo = vec![0u8; PIECE_LEN];
        for piece in payload.chunks(PIECE_LEN) {
            tls.write_all(piece).map_err(|e| fail("write", &e))?;
            note(&mut seen);
            let echo = &mut echo[..piece.len()];
            tls.read_exact(echo).map_err(|e| fail("read", &e))?;
            note(&mut seen);
            hasher.update(echo).map_err(|e| fail("hash", &e))?;
        }
        let digest = hasher.finish().map_err(|e| fail("hash", &e))?;
        if digest != expected {
            return Err(fail("checksum", &"echo differs from what was sent"));
        }
        tls.shutdown().map_err(|e| fail("shutdown", &e))?;
        let mut rest = Vec::new();
        tls.read_to_end(&mut rest)
            .map_err(|e| fail("close_notify", &e))?;
        if !rest.is_empty() {
            return Err(fail("close_notify", &"data after the echo"));
        }
    }
    Ok(seen)
}

/// A saboteur's first message when it forges a record itself.
const FORGE_TO_SERVER: [u8; 1000] = [1; 1000];
/// A saboteur's first message asking the server to forge a record.
const FORGE_TO_CLIENT: [u8; 1000] = [2; 1000];

/// An application-data record that no key authenticates.
fn forged_record() -> Vec<u8> {
    let mut record = vec![0x17, 0x03, 0x03, 0x00, 0x40];
    record.extend([0x5a; 0x40]);
    record
}

/// Opens a session and echoes a first message; then, for an even `id`, writes a forged record
/// under the TLS layer (the server must fail); for an odd one, asks the server to forge one
/// with [`FORGE_TO_CLIENT`] (the client's OpenSSL must fail).
fn saboteur(id: usize, addr: std::net::SocketAddr, connector: TlsConnector) -> Result<(), String> {
    for round in 0..ROUNDS {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("saboteur {id} round {round}: {what}: {e}")
        };
        let sock = TcpStream::connect(addr).map_err(|e| fail("connect", &e))?;
        sock.set_read_timeout(Some(IO_TIMEOUT))
            .map_err(|e| fail("timeouts", &e))?;
        let mut tls = connector
            .connect("localhost", sock)
            .map_err(|e| fail("handshake", &e))?;
        let hello = if id.is_multiple_of(2) {
            FORGE_TO_SERVER
        } else {
            FORGE_TO_CLIENT
        };
        let mut echo = [0u8; FORGE_TO_SERVER.len()];
        tls.write_all(&hello).map_err(|e| fail("write", &e))?;
        tls.read_exact(&mut echo).map_err(|e| fail("read", &e))?;
        if hello == FORGE_TO_CLIENT {
            match tls.read(&mut echo) {
                Err(e) if e.to_string().contains("bad record mac") => continue,
                other => return Err(fail("the server's forged record", &format!("{other:?}"))),
            }
        }
        tls.get_mut()
            .write_all(&forged_record())
            .map_err(|e| fail("forge", &e))?;
        // The server fails and closes: an error or end of stream, never data.
        let mut rest = Vec::new();
        if tls.get_mut().read_to_end(&mut rest).is_ok() && !rest.is_empty() {
            return Err(fail("after forgery", &"the server kept talking"));
        }
    }
    Ok(())
}

#[test]
fn two_hundred_tls_connections_on_two_workers() {
    fiber_runtime().run(run).unwrap();
}

fn run() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let connector = trusting(&acceptor.certificate_pem().unwrap());
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();

    let server = spawn(move || {
        let mut handlers = Vec::new();
        for _ in 0..(CONNECTIONS + SABOTEURS) * ROUNDS {
            let (sock, _) = listener.accept().unwrap();
            let acceptor = acceptor.clone();
            handlers.push(spawn(move || serve(acceptor, sock)));
        }
        handlers
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|e| e.to_string())
                    .and_then(|r| r.map_err(|e| e.to_string()))
            })
            .collect::<Vec<_>>()
    });

    let payload = Arc::new(pattern(PAYLOAD_LEN, 7));
    let expected = hash("sha256", &payload).unwrap();
    let clients: Vec<_> = (0..CONNECTIONS)
        .map(|id| {
            let (connector, payload) = (connector.clone(), Arc::clone(&payload));
            spawn(move || client(id, addr, connector, payload, expected))
        })
        .collect();
    let saboteurs: Vec<_> = (0..SABOTEURS)
        .map(|id| {
            let connector = connector.clone();
            spawn(move || saboteur(id, addr, connector))
        })
        .collect();

    let mut errors = Vec::new();
    for handle in saboteurs {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(format!("saboteur fiber panicked: {e}")),
        }
    }
    let mut threads = HashSet::new();
    let (mut migrations, mut resumed) = (0, 0);
    for handle in clients {
        match handle.join() {
            Ok(Ok(seen)) => {
                threads.extend(seen.threads);
                migrations += seen.migrations;
                resumed += seen.resumed;
            }
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(format!("client fiber panicked: {e}")),
        }
    }
    // Healthy sessions echo exactly 1 MiB; sabotaged ones fail on the forged record; anything
    // else (a healthy session failing, a spurious error) is an error.
    let served = server.join().unwrap();
    let (mut healthy, mut sabotaged) = (0, 0);
    for result in &served {
        match result {
            Ok(n) if *n == PAYLOAD_LEN as u64 => healthy += 1,
            Err(e) if e.contains("bad_record_mac") => sabotaged += 1,
            Ok(n) => errors.push(format!("a server fiber echoed {n} bytes")),
            Err(e) => errors.push(format!("server: {e}")),
        }
    }
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert_eq!(healthy, CONNECTIONS * ROUNDS);
    assert_eq!(sabotaged, SABOTEURS * ROUNDS);
    assert!(
        threads.len() >= 2,
        "fibers ran on {} worker(s)",
        threads.len()
    );
    assert!(migrations > 0, "no fiber changed worker in mid-session");
    assert!(
        resumed > 0,
        "no second-round connection resumed its session"
    );
    eprintln!(
        "{CONNECTIONS} connections (+{SABOTEURS} saboteurs) x {ROUNDS} rounds: {} workers seen, \
         {migrations} mid-session migrations, {resumed} resumed",
        threads.len()
    );
}
