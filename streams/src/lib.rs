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
//! | [`chunked`] | [`ChunkedReader`] / [`ChunkedWriter`]: HTTP/1.1 chunked coding, bounded |

#![warn(missing_docs)]

pub mod buf_stream;
pub mod chunked;
pub mod error;
pub mod limited;
pub mod read_until;

pub use buf_stream::BufStream;
pub use chunked::{ChunkedLimits, ChunkedReader, ChunkedWriter};
pub use error::Error;
pub use limited::{Limited, LimitedWriter};
pub use read_until::read_until_limit;
