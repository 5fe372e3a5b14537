//! [`Violation`]: each rule a multipart body can break, its status (413 for a size limit, 400
//! for the grammar) and its text; carried inside `io::Error` so a part's `Read` can report it.

use std::fmt;
use std::io;

/// A rule of RFC 7578 / RFC 2046 or a configured limit that a body broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Violation {
    /// The request's Content-Type is not `multipart/form-data` with a valid boundary.
    NotMultipart,
    /// The body ended before its close delimiter (a client that stopped mid-part).
    Truncated,
    /// A boundary line is followed by something other than padding and CRLF or `--`.
    BoundaryLine,
    /// A part's header block is longer than the limit.
    HeaderTooLarge,
    /// A part header line is not `name: value` in UTF-8.
    BadHeader,
    /// A part has no `Content-Disposition: form-data` with a `name`.
    NoDisposition,
    /// More parts than the limit.
    TooManyParts,
    /// A part's body is longer than the limit.
    PartTooLarge,
    /// The whole body is longer than the limit.
    BodyTooLarge,
}

impl Violation {
    /// The HTTP status this violation is answered with.
    pub fn status(self) -> u16 {
        match self {
            Violation::HeaderTooLarge
            | Violation::TooManyParts
            | Violation::PartTooLarge
            | Violation::BodyTooLarge => 413,
            _ => 400,
        }
    }

    /// The rule, in words, for the answer's body and the log.
    pub fn rule(self) -> &'static str {
        match self {
            Violation::NotMultipart => "Content-Type must be multipart/form-data with a boundary",
            Violation::Truncated => "multipart body ended before its close delimiter",
            Violation::BoundaryLine => "boundary line must end with CRLF or --",
            Violation::HeaderTooLarge => "part header block exceeds the limit",
            Violation::BadHeader => "part header line must be UTF-8 `name: value`",
            Violation::NoDisposition => "part needs Content-Disposition: form-data; name=...",
            Violation::TooManyParts => "too many parts",
            Violation::PartTooLarge => "part exceeds the size limit",
            Violation::BodyTooLarge => "multipart body exceeds the size limit",
        }
    }

    /// The violation carried by `e`, if it came from a multipart reader.
    pub fn of(e: &io::Error) -> Option<Violation> {
        e.get_ref()?.downcast_ref::<Violation>().copied()
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rule())
    }
}

impl std::error::Error for Violation {}

impl From<Violation> for io::Error {
    fn from(v: Violation) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_the_trip_through_io_error() {
        let e = io::Error::from(Violation::PartTooLarge);
        assert_eq!(Violation::of(&e), Some(Violation::PartTooLarge));
        assert_eq!(Violation::of(&e).map(Violation::status), Some(413));
        assert_eq!(Violation::of(&io::Error::other("x")), None);
    }
}
