//! The crate's one error type, and its mapping onto `io::Error`.
//!
//! Stream code returns `io::Result`; the errors that this crate raises itself are built from
//! [`Error`] so the message says what was wrong and a caller (the HTTP crate, mapping a breach to
//! a status) can recover the variant with [`Error::from_io`].

use std::io;

/// Everything moria-streams can report; converts into an `io::Error` of the fitting kind.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error from the underlying stream.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A stream that ended before the length it declared.
    #[error("stream ended {missing} bytes before its declared length")]
    ShortRead {
        /// Bytes still expected.
        missing: u64,
    },
    /// A chunked body that ended before its last chunk and trailer section.
    #[error("chunked: body ended early, in the {0}")]
    ChunkedTruncated(&'static str),
    /// A chunk-size line that is not `1*HEXDIG [ chunk-ext ] CRLF`.
    #[error("chunked: invalid chunk-size line: {0}")]
    InvalidChunkSize(&'static str),
    /// A chunk size that does not fit in 64 bits.
    #[error("chunked: chunk size overflows 64 bits")]
    ChunkSizeOverflow,
    /// A chunk-size line longer than the configured limit.
    #[error("chunked: chunk-size line longer than {limit} bytes")]
    ChunkLineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// Chunk extensions, summed over the whole body, longer than the configured limit.
    #[error("chunked: chunk extensions exceed {limit} bytes in total")]
    ChunkExtensionsTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// Chunk data not followed by CRLF.
    #[error("chunked: chunk data not followed by CRLF")]
    MissingChunkCrlf,
    /// A trailer field line that is not `field-name ":" OWS field-value OWS CRLF`.
    #[error("chunked: invalid trailer field: {0}")]
    InvalidTrailer(&'static str),
    /// A trailer section larger than the configured limit.
    #[error("chunked: trailer section larger than {limit} bytes")]
    TrailersTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// More trailer fields than the configured limit.
    #[error("chunked: more than {limit} trailer fields")]
    TooManyTrailers {
        /// The limit in fields.
        limit: usize,
    },
    /// A delimiter not found within the allowed number of bytes.
    #[error("delimiter not found within {limit} bytes")]
    DelimiterNotFound {
        /// The limit in bytes.
        limit: usize,
    },
    /// A write that would go past a write-side limit.
    #[error("write limit of {limit} bytes exceeded")]
    WriteLimitExceeded {
        /// The limit in bytes.
        limit: u64,
    },
    /// A writer finished before the exact length it promised.
    #[error("stream finished {missing} bytes short of its declared length")]
    ShortWrite {
        /// Bytes still owed.
        missing: u64,
    },
    /// Decompressed data larger than the configured limit.
    #[error("{format}: decompressed size exceeds {limit} bytes")]
    DecompressedTooLarge {
        /// The compression format.
        format: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// Compressed input that the decoder rejected.
    #[error("{format}: corrupt compressed stream: {reason}")]
    CorruptCompressed {
        /// The compression format.
        format: &'static str,
        /// The decoder's own description.
        reason: String,
    },
    /// A stream used again after an error that left it in an unknown state.
    #[error("{0}: stream unusable after an earlier error")]
    Poisoned(&'static str),
    /// A read, write or idle timeout expired.
    #[error("{0} timed out")]
    TimedOut(&'static str),
    /// A value given to a constructor or builder that cannot work.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
}

impl Error {
    /// The `io::ErrorKind` this error travels as.
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            Error::Io(e) => e.kind(),
            Error::WriteLimitExceeded { .. }
            | Error::ShortWrite { .. }
            | Error::InvalidArgument(_) => io::ErrorKind::InvalidInput,
            Error::ShortRead { .. } | Error::ChunkedTruncated(_) => io::ErrorKind::UnexpectedEof,
            Error::Poisoned(_) => io::ErrorKind::Other,
            Error::TimedOut(_) => io::ErrorKind::TimedOut,
            _ => io::ErrorKind::InvalidData,
        }
    }

    /// The `Error` carried inside an `io::Error` produced by this crate, if any.
    pub fn from_io(err: &io::Error) -> Option<&Error> {
        err.get_ref()
            .and_then(|inner| inner.downcast_ref::<Error>())
    }
}

impl From<Error> for io::Error {
    fn from(err: Error) -> io::Error {
        match err {
            Error::Io(e) => e,
            other => io::Error::new(other.kind(), other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_errors_travel_as_invalid_data_and_come_back() {
        let io: io::Error = Error::ChunkSizeOverflow.into();
        assert_eq!(io.kind(), io::ErrorKind::InvalidData);
        assert!(matches!(
            Error::from_io(&io),
            Some(Error::ChunkSizeOverflow)
        ));
        assert!(io.to_string().contains("overflows"));
    }

    #[test]
    fn io_errors_pass_through_unwrapped() {
        let io: io::Error = Error::Io(io::Error::from(io::ErrorKind::TimedOut)).into();
        assert_eq!(io.kind(), io::ErrorKind::TimedOut);
        assert!(Error::from_io(&io).is_none());
    }

    #[test]
    fn write_limit_is_invalid_input() {
        let io: io::Error = Error::WriteLimitExceeded { limit: 3 }.into();
        assert_eq!(io.kind(), io::ErrorKind::InvalidInput);
    }
}
