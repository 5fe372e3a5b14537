//! This machine's cross-thread wake-up cost: round trips between two plain threads.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use crate::harness::Args;
use crate::report::median;

/// Round trips between two plain threads: over a std mpsc channel pair and over loopback TCP.
/// Every by-one call that crosses threads (Db lanes, REST) pays at least one of these.
pub(crate) fn baseline(args: &Args) {
    const TRIPS: u32 = 10_000;
    let mut chan = Vec::new();
    let mut tcp = Vec::new();
    for _ in 0..args.runs {
        let (to_tx, to_rx) = std::sync::mpsc::channel::<u64>();
        let (back_tx, back_rx) = std::sync::mpsc::channel::<u64>();
        let echo = std::thread::spawn(move || {
            while let Ok(v) = to_rx.recv() {
                if back_tx.send(v).is_err() {
                    return;
                }
            }
        });
        let t = Instant::now();
        for i in 0..u64::from(TRIPS) {
            to_tx.send(i).expect("send");
            assert_eq!(back_rx.recv().expect("recv"), i);
        }
        chan.push((t.elapsed() / TRIPS).as_nanos() as u64);
        drop(to_tx);
        echo.join().expect("echo");

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let echo = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            s.set_nodelay(true).expect("nodelay");
            let mut b = [0u8; 100];
            while s.read_exact(&mut b).is_ok() {
                s.write_all(&b).expect("echo");
            }
        });
        let mut c = TcpStream::connect(addr).expect("connect");
        c.set_nodelay(true).expect("nodelay");
        let mut b = [1u8; 100];
        let t = Instant::now();
        for _ in 0..TRIPS {
            c.write_all(&b).expect("write");
            c.read_exact(&mut b).expect("read");
        }
        tcp.push((t.elapsed() / TRIPS).as_nanos() as u64);
        drop(c);
        echo.join().expect("echo");
    }
    println!(
        "\nCross-thread round trip, plain std threads (ns, median of {} runs)",
        args.runs
    );
    println!("{:<36}{:>13}", "mpsc channel pair", median(chan));
    println!("{:<36}{:>13}", "loopback TCP, 100 bytes", median(tcp));
}
