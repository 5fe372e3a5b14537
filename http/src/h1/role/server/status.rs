//! The one status the server answers each [`Failure`] with (then it closes the connection):
//! hyper's `on_error`, as a table.

use crate::h1::decode::Failure;

impl Failure {
    /// The one status code sent for this failure (the connection is closed after it).
    pub(crate) fn status(self) -> u16 {
        use Failure::*;
        match self {
            RequestLineTooLong => 414,
            HeadTooLarge | TooManyHeaders => 431,
            UnsupportedVersion => 505,
            UnsupportedTransferCoding => 501,
            UnknownExpectation => 417,
            BodyTooLarge => 413,
            HeaderTimeout | BodyTimeout => 408,
            TooManyEmptyLines
            | BadRequestLine
            | BadMethod
            | BadTarget
            | BadVersion
            | ObsFold
            | BadHeaderName
            | WhitespaceBeforeColon
            | BadHeaderValue
            | BareCr
            | MissingHost
            | DuplicateHost
            | BadHost
            | BadContentLength
            | ConflictingContentLength
            | ContentLengthWithTransferEncoding
            | TransferEncodingOnHttp10
            | ChunkedNotFinal
            | BadChunk
            | TruncatedBody
            | BadPath => 400,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::h1::decode::Failure::*;

    #[test]
    fn statuses_follow_the_issue_table() {
        assert_eq!(RequestLineTooLong.status(), 414);
        assert_eq!(TooManyHeaders.status(), 431);
        assert_eq!(HeadTooLarge.status(), 431);
        assert_eq!(BodyTooLarge.status(), 413);
        assert_eq!(UnsupportedVersion.status(), 505);
        assert_eq!(UnsupportedTransferCoding.status(), 501);
        assert_eq!(UnknownExpectation.status(), 417);
        assert_eq!(HeaderTimeout.status(), 408);
        assert_eq!(ContentLengthWithTransferEncoding.status(), 400);
        assert_eq!(ObsFold.status(), 400);
    }
}
