//! moria-streams: Mordor's stream toolkit as `std::io` adapters.
//!
//! Every stream here implements `Read`/`Write`/`BufRead` and wraps any `R: Read` or `W: Write`,
//! so they stack with each other and with the ecosystem (`flate2`, TLS, `serde_json`).
//!
//! | module | what lives there |
//! |---|---|
//! | [`error`] | [`Error`], the crate's one error enum, and its mapping to `io::ErrorKind` |
//! | [`read_until`] | [`read_until_limit`]: a delimited read bounded by a byte limit |
//! | [`buf_stream`] | [`BufStream`]: read and write buffering on one duplex stream |
//! | [`limited`] | [`Limited`] (at most / exactly N bytes read), [`LimitedWriter`] |
//! | [`compress`] | gzip / zlib / deflate encoders and bounded decoders, read and write side |
//! | [`chunked`] | [`ChunkedReader`] / [`ChunkedWriter`]: HTTP/1.1 chunked coding, bounded |
//! | [`http_grammar`] | the RFC 9110 token and field-value tables every HTTP/1 parser here shares |
//! | [`mod@file`] | [`File`], [`OpenOptions`]: files whose syscalls all run on the offload pool |
//! | [`tee`] | [`TeeReader`] (reads copied to a writer), [`TeeWriter`] (writes to two writers) |
//! | [`cat`] | [`Cat`]: readers read one after another |
//! | [`duplex`] | [`Duplex`]: a reader and a writer as one stream |
//! | [`counting`] | [`Counting`]: bytes read and written |
//! | [`mod@null`] | [`null()`], [`zero()`], [`zeros()`]: sinks and endless sources |
//! | [`notify`] | [`Notify`]: callbacks on EOF, error, flush, close |
//! | [`progress`] | [`Progress`]: a callback every N bytes |
//! | [`pacer`] | [`Pacer`]: the clock-free arithmetic of bandwidth limiting |
//! | [`throttle`] | [`Throttle`]: bandwidth limit per direction, paced by [`Pacer`] |
//! | [`mod@pipe`] | [`pipe()`], [`duplex_pipe()`]: bounded in-memory pipes between fibers |
//! | [`mod@transfer`] | [`transfer()`] (buffered), [`TransferExt`] (sendfile / splice fast paths), [`transfer::transfer_stats`] (which path moved how much) |
//! | [`timeout`] | [`Timeout`]: read, write and idle timeouts on sockets and pipes |

#![warn(missing_docs)]

pub mod buf_stream;
pub mod cat;
pub mod chunked;
pub mod compress;
pub mod counting;
pub mod duplex;
pub mod error;
pub mod file;
pub mod http_grammar;
pub mod limited;
pub mod notify;
pub mod null;
pub mod pacer;
pub mod pipe;
pub mod progress;
pub mod read_until;
pub mod tee;
pub mod throttle;
pub mod timeout;
pub mod transfer;

pub use buf_stream::BufStream;
pub use cat::Cat;
pub use chunked::{ChunkedLimits, ChunkedReader, ChunkedWriter};
pub use compress::{
    CompressReader, CompressWriter, Compression, DecompressReader, DecompressWriter, Format,
};
pub use counting::Counting;
pub use duplex::Duplex;
pub use error::Error;
pub use file::{File, OpenOptions};
pub use limited::{Limited, LimitedWriter};
pub use notify::Notify;
pub use null::{null, zero, zeros};
pub use pacer::Pacer;
pub use pipe::{duplex_pipe, pipe, pipe_with_capacity, PipeReader, PipeWriter};
pub use progress::{Progress, Totals};
pub use read_until::read_until_limit;
pub use tee::{TeeReader, TeeWriter};
pub use throttle::Throttle;
pub use timeout::{SetReadTimeout, SetWriteTimeout, Timeout};
pub use transfer::{transfer, TransferExt, ZeroCopySink, ZeroCopySource};
