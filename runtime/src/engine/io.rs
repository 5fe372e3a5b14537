//! The engine's sockets and readiness traits, re-exported unwrapped for `net`: the socket read
//! and write paths call them directly.

pub(crate) use may::io::{AsIoData, CoIo, WaitIo, WaitIoWaker};
pub(crate) use may::net::{TcpListener, TcpStream, UdpSocket};
pub(crate) use may::os::unix::net::UnixStream;
