//! Sockets in blocking style: each wait parks the fiber, never the worker.
//!
//! | item | file |
//! |---|---|
//! | [`TcpListener`], [`TcpStream`], [`TcpReader`], [`TcpWriter`] | `tcp.rs` |
//! | [`ListenOptions`] (reuse-port, backlog) | `bind.rs` |
//! | [`UdpSocket`] | `udp.rs` |
//! | [`UnixListener`], [`UnixStream`] | `unix.rs` |
//! | accept loop with deadline and shutdown token | `accept.rs` |
//! | readiness waits with deadline and shutdown token, [`writable_now`] | `ready.rs` |
//! | [`ParkingLot`], [`Parkable`]: sockets waiting for readability without a fiber | `park.rs` (`epoll.rs`) |
//! | [`spare_port`]: a loopback port for a child process to listen on | `port.rs` |
//! | socket timeouts handed to the engine only when a call waits, [`send_now`] | `timeouts.rs` |
//! | a split socket's writer waiting for room outside the engine | `write_wait.rs` |

mod accept;
mod bind;
mod delegate;
mod epoll;
mod park;
mod port;
mod ready;
mod tcp;
mod timeouts;
mod udp;
mod unix;
mod write_wait;

pub use crate::coarse_timer::TICK as COARSE_TICK;
pub use bind::{ListenOptions, DEFAULT_BACKLOG};
pub use park::{Parkable, ParkingLot, Wake, DEADLINE_TICK};
pub use port::spare_port;
pub use ready::writable_now;
pub use tcp::{TcpListener, TcpReader, TcpStream, TcpWriter};
pub use timeouts::send_now;
pub use udp::UdpSocket;
pub use unix::{UnixListener, UnixStream};
