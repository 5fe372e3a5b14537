//! Helpers shared by the test modules: the one runtime configuration of this process, and a
//! server fiber for one connection.

use std::net::SocketAddr;
use std::sync::OnceLock;

use moria_runtime::net::{TcpListener, TcpStream};
use moria_runtime::{spawn, JoinHandle, Runtime};

/// The runtime every test in this binary runs on: two workers, so fibers can cross workers.
///
/// The configuration is process-wide and applied once (a different one later is an error), so
/// every test that touches the runtime calls this first: whichever test runs first applies it.
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| Runtime::builder().workers(2).build().expect("runtime"))
}

/// A server fiber that accepts one connection and runs `serve` on it.
pub fn serve_once<T: Send + 'static>(
    serve: impl FnOnce(TcpStream) -> T + Send + 'static,
) -> (SocketAddr, JoinHandle<T>) {
    runtime();
    let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = spawn(move || serve(listener.accept().unwrap().0));
    (addr, handle)
}
