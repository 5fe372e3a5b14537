//! Name resolution for `TcpListener::bind`, `UdpSocket::bind`/`connect` and
//! `TcpStream::connect` runs on the offload pool (getaddrinfo reads files and may wait on DNS),
//! never on the calling fiber's worker. Before the fix the binds resolved on the worker.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};

use moria_runtime::net::{TcpListener, TcpStream, UdpSocket};

use crate::common;

/// An address that records the name of the thread resolving it.
#[derive(Clone)]
struct Recorder {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl ToSocketAddrs for Recorder {
    type Iter = std::option::IntoIter<SocketAddr>;
    fn to_socket_addrs(&self) -> io::Result<Self::Iter> {
        let name = std::thread::current().name().unwrap_or("?").to_owned();
        self.seen.lock().unwrap().push(name);
        Ok(Some(self.addr).into_iter())
    }
}

#[test]
fn binds_and_connects_resolve_on_the_offload_pool() {
    let rt = common::runtime();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let at = |addr: &str| Recorder {
        addr: addr.parse().unwrap(),
        seen: seen.clone(),
    };
    let (tcp_any, udp_any) = (at("127.0.0.1:0"), at("127.0.0.1:0"));
    let peer = at("127.0.0.1:0");
    let names = rt
        .run(move || {
            let listener = TcpListener::bind(tcp_any).unwrap();
            let to_listener = Recorder {
                addr: listener.local_addr().unwrap(),
                seen: peer.seen.clone(),
            };
            TcpStream::connect(to_listener).unwrap();
            let udp = UdpSocket::bind(udp_any).unwrap();
            let other = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            udp.connect(Recorder {
                addr: other.local_addr().unwrap(),
                seen: peer.seen.clone(),
            })
            .unwrap();
            peer.seen.lock().unwrap().clone()
        })
        .unwrap();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names.iter().all(|n| n == "moria-blocking"),
        "resolved on: {names:?}"
    );
}
