//! Moving bytes from a reader to a writer: [`transfer`] (a buffered copy for any pair) and
//! [`TransferExt::transfer_to`], which takes a zero-copy path where the pair allows one.
//!
//! | source | sink | path |
//! |---|---|---|
//! | [`crate::File`] | a socket ([`RawSink`]) | `sendfile(2)`, each call on the offload pool |
//! | a socket ([`RawSource`]) | a socket | `splice(2)` through a kernel pipe, on the fiber |
//! | anything else | anything else | [`transfer`], one reused 64 KiB buffer |
//!
//! A writer with no socket behind it (TLS, compression, memory) says so through
//! [`ZeroCopySink::raw_sink`]'s default and gets the buffered copy: user code never switches
//! on types. [`transfer_stats`] counts transfers and bytes by path, so a caller can check that
//! the zero-copy path was really taken.
//!
//! | file | job |
//! |---|---|
//! | `copy.rs` | the buffered copy |
//! | `zero_copy.rs` | the capability traits; impls for runtime sockets, `File`, `BufStream`, `Timeout` |
//! | `paths.rs` | the sendfile and splice loops |
//! | `sys.rs` | the raw syscalls |
//! | `stats.rs` | [`TransferStats`]: transfers and bytes per path (relaxed atomics) |

mod copy;
mod paths;
mod stats;
mod sys;
mod zero_copy;

use std::io;

pub use copy::{transfer, TRANSFER_BUFFER};
pub use paths::SENDFILE_CHUNK;
pub use stats::{transfer_stats, TransferStats};
pub use sys::SPLICE_PIPE_SIZE;
pub use zero_copy::{Origin, RawSink, RawSource, ZeroCopySink, ZeroCopySource};

/// `transfer_to`: the zero-copy fast path where one exists, a buffered copy otherwise.
pub trait TransferExt: ZeroCopySource {
    /// Moves bytes to `sink` until EOF or `limit`; returns the bytes moved (fewer than `limit`
    /// means the source ended first).
    fn transfer_to<W>(&mut self, sink: &mut W, limit: Option<u64>) -> io::Result<u64>
    where
        W: ZeroCopySink + ?Sized,
    {
        if let Some(raw) = sink.raw_sink()? {
            match self.origin() {
                Some(Origin::File(file)) => {
                    log::debug!("transfer: sendfile, limit {limit:?}");
                    return paths::send_file(file, raw, limit);
                }
                Some(Origin::Socket(source)) => {
                    log::debug!("transfer: splice, limit {limit:?}");
                    return paths::splice_sockets(source, raw, limit);
                }
                None => {}
            }
        }
        log::debug!("transfer: buffered copy, limit {limit:?}");
        transfer(self, sink, limit)
    }
}

impl<R: ZeroCopySource + ?Sized> TransferExt for R {}
