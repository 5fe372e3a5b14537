//! A burst of 64 writers on an offload-lane database, while one call holds the only writer
//! connection, must not starve the offload pool: static files (served with `inline_io(false)`),
//! DNS (`TcpStream::connect("localhost:…")`) and file streams keep working. Before the fix each
//! waiting writer held a pool thread (the default bound is 64), so every other blocking job
//! queued behind the one connection.
//!
//! A test binary of its own (not a module of `orm`): the offload pool is process-wide, and the
//! test needs all of its 64 threads to itself — other suites' blocking jobs in the same process
//! would make the result depend on their timing.

mod common;

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;

use common::{Person, TempDir};
use moria_http::{Server, StaticFiles};
use moria_orm::{Db, Dispatch, Error, Mode, Query};
use moria_runtime::net::TcpStream;
use moria_runtime::{spawn, Runtime};

const WRITERS: usize = 64;
/// Rounds of probes: the first few may run before the writers reach the lane; the rest meet
/// them there.
const PROBE_ROUNDS: usize = 50;
/// Long enough for any healthy run; only a starved pool reaches it.
const HANG_GUARD: Duration = Duration::from_secs(60);
const PAGE: &str = "<p>static</p>";

/// One round of each kind of offloaded work; returns what it read.
fn probe(page: &std::path::Path, port: u16) -> String {
    let mut text = String::new();
    moria_streams::File::open(page)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let mut s = TcpStream::connect(format!("localhost:{port}")).unwrap();
    s.write_all(b"GET /page.html HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    assert!(raw.ends_with(PAGE), "{raw}");
    text
}

#[test]
fn a_burst_of_writers_waiting_for_the_connection_leaves_the_offload_pool_free() {
    let dir = TempDir::new("starve");
    let www = dir.file("www");
    std::fs::create_dir(&www).unwrap();
    let page = www.join("page.html");
    std::fs::write(&page, PAGE).unwrap();
    let rt = Runtime::builder().workers(2).build().unwrap();
    assert_eq!(rt.config().blocking_threads, WRITERS, "the pool bound");
    let files = StaticFiles::builder(&www).inline_io(false).build().unwrap();
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .start(files)
        .unwrap();
    let port = server.local_addr().port();
    let db = Db::builder(dir.file("w.db"))
        .mode(Mode::Full)
        .dispatch(Dispatch::Offload)
        .open()
        .unwrap();
    db.ensure_schema::<Person>().unwrap();

    let (held_tx, held) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let hostage = {
        let db = db.clone();
        spawn(move || {
            db.run(move |c| {
                held_tx.send(()).unwrap();
                release_rx
                    .recv_timeout(HANG_GUARD * 2)
                    .map_err(|e| Error::Config(format!("never released: {e}")))?;
                c.add(&mut Person::new("hostage", "x", 0))
            })
        })
    };
    held.recv_timeout(HANG_GUARD).unwrap();

    let (calling_tx, calling) = mpsc::channel();
    let writers: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (db, calling_tx) = (db.clone(), calling_tx.clone());
            spawn(move || {
                calling_tx.send(()).unwrap();
                db.add(Person::new(&format!("w{i}"), "x", 1)).map(|p| p.id)
            })
        })
        .collect();
    for _ in 0..WRITERS {
        calling.recv_timeout(HANG_GUARD).unwrap();
    }

    let (done_tx, done) = mpsc::channel();
    let probes = spawn(move || {
        for _ in 0..PROBE_ROUNDS {
            assert_eq!(probe(&page, port), PAGE);
        }
        done_tx.send(()).unwrap();
    });
    let outcome = done.recv_timeout(HANG_GUARD);
    let _ = release.send(());
    assert!(
        outcome.is_ok(),
        "offloaded work starved behind {WRITERS} writers waiting for one connection: {outcome:?}"
    );
    probes.join().unwrap();
    hostage.join().unwrap().unwrap();
    for w in writers {
        w.join().unwrap().unwrap();
    }
    assert_eq!(
        db.count::<Person>(Query::new()).unwrap(),
        WRITERS as i64 + 1
    );
    server.shutdown();
}
