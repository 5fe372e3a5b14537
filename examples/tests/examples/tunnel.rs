//! The tunnel example between real sockets on loopback: plain to plain (both directions at
//! once, and a half-close: the client ends its direction and still receives everything the
//! target sends after seeing that end), TLS terminated with a self-signed certificate, TLS to a
//! target verified against a CA file (and refused without it), through tinyproxy with CONNECT,
//! and Ctrl-C ending the program with status 0. Every payload is checked by SHA-256.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::common::{start_logged, Running};
use moria_crypto::{hash, TlsAcceptor, TlsConnector};

const TUNNEL: &str = env!("CARGO_BIN_EXE_tunnel");
/// What the client sends through the tunnel.
const UP_LEN: usize = 4 << 20;
/// What the target sends back after the client's end of stream.
const DOWN_LEN: usize = 3 << 20;
/// Turns a stuck transfer into a failed test instead of a hung one.
const IO_TIMEOUT: Duration = Duration::from_secs(60);
/// SHA-256 length.
const DIGEST_LEN: usize = 32;

fn sha256(data: &[u8]) -> Vec<u8> {
    hash("sha256", data).unwrap().as_ref().to_vec()
}

/// Deterministic test bytes.
fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 11) as u8)
        .collect()
}

/// Starts the tunnel with `args` (after `--listen 127.0.0.1:0`) and waits until it listens.
fn tunnel(args: &[&str]) -> Running {
    let scheme = if args.iter().any(|a| a.starts_with("--tls-in")) {
        "tls"
    } else {
        "tcp"
    };
    let mut all = vec!["--listen", "127.0.0.1:0", "--workers", "2"];
    all.extend_from_slice(args);
    start_logged(
        TUNNEL,
        &all,
        &[("RUST_LOG", "info")],
        &format!("listening on {scheme}://"),
    )
}

/// A target on 127.0.0.1:0 that runs `serve` on each of `connections` connections in turn.
fn target(
    connections: usize,
    serve: impl Fn(TcpStream) + Send + 'static,
) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        for _ in 0..connections {
            let (sock, _) = listener.accept().unwrap();
            sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
            serve(sock);
        }
    });
    (addr, handle)
}

/// Reads everything up to end of stream, then answers with its SHA-256 and `DOWN_LEN` bytes:
/// every byte of the answer leaves after the client's half-close arrived.
fn answer_after_eof(stream: &mut (impl Read + Write)) -> std::io::Result<()> {
    let mut got = Vec::new();
    stream.read_to_end(&mut got)?;
    stream.write_all(&sha256(&got))?;
    stream.write_all(&payload(DOWN_LEN, 7))?;
    stream.flush()
}

/// The client's half of [`answer_after_eof`]: sends, half-closes with `close`, reads the answer.
fn send_then_check<S: Read + Write>(stream: &mut S, close: impl FnOnce(&mut S)) {
    let up = payload(UP_LEN, 3);
    stream.write_all(&up).unwrap();
    close(stream);
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert_eq!(answer.len(), DIGEST_LEN + DOWN_LEN);
    assert_eq!(
        answer[..DIGEST_LEN],
        sha256(&up),
        "the target got every byte"
    );
    assert_eq!(
        sha256(&answer[DIGEST_LEN..]),
        sha256(&payload(DOWN_LEN, 7)),
        "the client got every byte sent after its half-close"
    );
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s
}

/// A plain client of [`answer_after_eof`] through `via`.
fn plain_half_close(via: SocketAddr) {
    send_then_check(&mut connect(via), |s| s.shutdown(Shutdown::Write).unwrap());
}

fn echo(mut sock: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match sock.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if sock.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = sock.shutdown(Shutdown::Write);
}

/// Sends 8 MiB through `via` to an echo target while reading the echo; with `half_close`,
/// ends with a half-close and reads to the end, else reads exactly as much as it sent.
fn echo_at_once(via: SocketAddr, half_close: bool) {
    let mut client = connect(via);
    let up = payload(8 << 20, 5);
    let want = sha256(&up);
    let mut writer = client.try_clone().unwrap();
    let sending = thread::spawn(move || {
        writer.write_all(&up).unwrap();
        if half_close {
            writer.shutdown(Shutdown::Write).unwrap();
        }
    });
    let mut back = vec![0u8; 8 << 20];
    client.read_exact(&mut back).unwrap();
    if half_close {
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "nothing after the echo");
    }
    sending.join().unwrap();
    assert_eq!(sha256(&back), want);
}

#[test]
fn plain_to_plain_both_ways_at_once_and_half_close() {
    let (echo_addr, echo_done) = target(1, echo);
    let echoing = tunnel(&["--to", &echo_addr.to_string()]);
    echo_at_once(echoing.addr, true);
    echo_done.join().unwrap();

    let (addr, done) = target(1, |mut s| answer_after_eof(&mut s).unwrap());
    let answering = tunnel(&["--to", &addr.to_string()]);
    plain_half_close(answering.addr);
    done.join().unwrap();
}

#[test]
fn tls_in_self_signed_terminates_tls() {
    let (addr, done) = target(1, |mut s| answer_after_eof(&mut s).unwrap());
    let terminator = tunnel(&["--to", &addr.to_string(), "--tls-in-self-signed"]);
    let connector = TlsConnector::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mut tls = connector
        .connect("localhost", connect(terminator.addr))
        .unwrap();
    assert_eq!(tls.version(), "TLSv1.3");
    send_then_check(&mut tls, |t| t.shutdown().unwrap());
    done.join().unwrap();
}

#[test]
fn tls_out_verifies_the_target_against_the_ca_file() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, acceptor.certificate_pem().unwrap()).unwrap();
    // The first connection is the refused one: its handshake fails here too.
    let (addr, done) = target(2, move |s| {
        let Ok(mut tls) = acceptor.accept(s) else {
            return;
        };
        answer_after_eof(&mut tls).unwrap();
        tls.shutdown().unwrap();
    });
    let to = format!("localhost:{}", addr.port());
    let cacert = ca.to_str().unwrap();
    let refusing = tunnel(&["--to", &to, "--tls-out"]);
    let mut refused = connect(refusing.addr);
    let mut nothing = Vec::new();
    let _ = refused.read_to_end(&mut nothing);
    assert!(nothing.is_empty(), "an unverified target gets no tunnel");

    let verifying = tunnel(&["--to", &to, "--tls-out", "--cacert", cacert]);
    plain_half_close(verifying.addr);
    done.join().unwrap();
}

/// tinyproxy on a free port for 127.0.0.1, logging to `dir`.
struct Tinyproxy {
    child: std::process::Child,
    port: u16,
}

impl Tinyproxy {
    fn start(dir: &Path) -> Tinyproxy {
        let port = moria_runtime::net::spare_port().unwrap();
        let conf = dir.join("tinyproxy.conf");
        let settings = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 60\nAllow 127.0.0.1\nLogLevel Info\n\
             LogFile \"{}\"\nPidFile \"{}\"\n",
            dir.join("tinyproxy.log").display(),
            dir.join("tinyproxy.pid").display(),
        );
        std::fs::write(&conf, settings).unwrap();
        let child = Command::new("tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run tinyproxy ({e}): install the Debian package `tinyproxy`")
            });
        let proxy = Tinyproxy { child, port };
        let started = std::time::Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < IO_TIMEOUT, "tinyproxy never listened");
            thread::sleep(Duration::from_millis(20));
        }
        proxy
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// tinyproxy ends a CONNECT tunnel at the first end of stream either way, so this exchange
/// does without a half-close.
#[test]
fn through_tinyproxy_with_connect() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = Tinyproxy::start(dir.path());
    let (addr, _echo) = target(1, echo);
    let proxy_url = format!("http://127.0.0.1:{}", proxy.port);
    let proxied = tunnel(&["--to", &addr.to_string(), "--proxy", &proxy_url]);
    echo_at_once(proxied.addr, false);
    let log = std::fs::read_to_string(dir.path().join("tinyproxy.log")).unwrap();
    assert!(
        log.contains(&format!("CONNECT {addr}")),
        "tinyproxy carried the tunnel:\n{log}"
    );
}

#[test]
fn ctrl_c_closes_open_tunnels_and_exits_zero() {
    let (addr, _echo) = target(1, echo);
    let mut running = tunnel(&["--to", &addr.to_string()]);
    let mut client = connect(running.addr);
    client.write_all(b"ping").unwrap();
    let mut pong = [0u8; 4];
    client.read_exact(&mut pong).unwrap();
    assert_eq!(&pong, b"ping");
    let status = running.interrupt();
    assert!(status.success(), "exit status after SIGINT: {status}");
    let mut rest = Vec::new();
    client.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "the open tunnel was closed cleanly");
}
