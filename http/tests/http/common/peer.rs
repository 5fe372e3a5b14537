//! Real peers started by a test (nginx, tinyproxy): the process started in the foreground,
//! waited for until it accepts connections, killed on drop. They cannot listen on port 0 and
//! report the port back, so their configuration names a `moria_runtime::net::spare_port`.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::wait_until;

/// A running peer; killed when dropped, passing test or not.
pub struct Peer {
    child: Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Peer {
    /// Runs `program` with `args` (its configuration in `dir`, which the peer keeps alive) and
    /// waits until it accepts connections on `port`; a missing program fails naming `package`.
    pub fn start(
        program: &str,
        package: &str,
        args: &[&Path],
        port: u16,
        dir: tempfile::TempDir,
    ) -> Peer {
        let child = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run `{program}` ({e}): install the Debian package `{package}`")
            });
        let peer = Peer {
            child,
            port,
            _dir: dir,
        };
        wait_until(&format!("{program} to accept connections"), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        peer
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
