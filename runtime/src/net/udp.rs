//! UDP in blocking style; waits take `&mut self` so one socket has one waiter.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;

use super::bind::first_addr;
use super::delegate::forward_io;
use super::ready::Interest;
use super::timeouts::{timeouts, Timeouts};
use crate::{config, engine};

/// A UDP socket.
#[derive(Debug)]
pub struct UdpSocket {
    inner: engine::io::UdpSocket,
    timeouts: Timeouts,
}

impl UdpSocket {
    /// Binds `addr`; a host name is resolved on the offload pool, never on a worker.
    pub fn bind(addr: impl ToSocketAddrs + Send) -> io::Result<Self> {
        config::ensure();
        engine::io::UdpSocket::bind(first_addr(addr)?).map(|inner| UdpSocket {
            inner,
            timeouts: Timeouts::default(),
        })
    }

    /// Sets the default peer for `send`/`recv` (a host name is resolved on the offload pool).
    pub fn connect(&self, addr: impl ToSocketAddrs + Send) -> io::Result<()> {
        self.inner.connect(first_addr(addr)?)
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Sends one datagram to `addr`.
    pub fn send_to(&mut self, buf: &[u8], addr: SocketAddr) -> io::Result<usize> {
        if !engine::in_fiber() {
            let socket = self.inner.inner();
            return self
                .timeouts
                .on_thread(socket.as_raw_fd(), Interest::Write, || {
                    socket.send_to(buf, addr)
                });
        }
        self.timeouts
            .write
            .hand_over(|t| self.inner.set_write_timeout(t))?;
        self.inner.send_to(buf, addr)
    }

    /// Receives one datagram and its sender.
    pub fn recv_from(&mut self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        if !engine::in_fiber() {
            let socket = self.inner.inner();
            return self
                .timeouts
                .on_thread(socket.as_raw_fd(), Interest::Read, || socket.recv_from(buf));
        }
        self.timeouts
            .read
            .hand_over(|t| self.inner.set_read_timeout(t))?;
        self.inner.recv_from(buf)
    }

    /// Sends to the connected peer.
    pub fn send(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !engine::in_fiber() {
            let socket = self.inner.inner();
            return self
                .timeouts
                .on_thread(socket.as_raw_fd(), Interest::Write, || socket.send(buf));
        }
        self.timeouts
            .write
            .hand_over(|t| self.inner.set_write_timeout(t))?;
        self.inner.send(buf)
    }

    /// Receives from the connected peer.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !engine::in_fiber() {
            let socket = self.inner.inner();
            return self
                .timeouts
                .on_thread(socket.as_raw_fd(), Interest::Read, || socket.recv(buf));
        }
        self.timeouts
            .read
            .hand_over(|t| self.inner.set_read_timeout(t))?;
        self.inner.recv(buf)
    }

    /// Allows sending to broadcast addresses.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.inner.set_broadcast(on)
    }

    /// A second handle with its own descriptor, e.g. one fiber receiving while another sends.
    pub fn try_clone(&self) -> io::Result<Self> {
        self.inner.try_clone().map(|inner| UdpSocket {
            inner,
            timeouts: self.timeouts.duplicate(),
        })
    }
}

timeouts!(UdpSocket);
forward_io!(fd: UdpSocket);
