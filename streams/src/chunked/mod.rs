//! HTTP/1.1 chunked transfer coding (RFC 9112 §7.1): [`ChunkedReader`] decodes, [`ChunkedWriter`]
//! encodes.
//!
//! ```text
//! chunked-body   = *chunk last-chunk trailer-section CRLF
//! chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//! chunk-size     = 1*HEXDIG
//! last-chunk     = 1*("0") [ chunk-ext ] CRLF
//! chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//! trailer-section = *( field-line CRLF )
//! ```
//!
//! The decoder is strict where leniency enables request smuggling: line ends must be CRLF (no
//! bare LF), sizes are hex digits only (no sign, no `0x`), overflow is an error, and every line
//! and section is bounded by a [`ChunkedLimits`] field whose default is a named constant here.

mod grammar;
mod reader;
mod writer;

pub use reader::ChunkedReader;
pub use writer::ChunkedWriter;

/// Longest chunk-size line accepted, extensions and CRLF included.
pub const MAX_SIZE_LINE: usize = 4 * 1024;
/// Most chunk-extension bytes accepted over a whole body (many small chunks with large
/// extensions are a cheap way to burn a server's CPU, so the budget is per body, not per line).
pub const MAX_EXTENSIONS_TOTAL: usize = 16 * 1024;
/// Largest trailer section accepted, CRLFs included.
pub const MAX_TRAILER_BYTES: usize = 16 * 1024;
/// Most trailer fields accepted.
pub const MAX_TRAILER_FIELDS: usize = 100;

/// The decoder's bounds; `Default` gives the constants of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkedLimits {
    /// Longest chunk-size line (default [`MAX_SIZE_LINE`]).
    pub size_line: usize,
    /// Most extension bytes over the body (default [`MAX_EXTENSIONS_TOTAL`]).
    pub extensions_total: usize,
    /// Largest trailer section (default [`MAX_TRAILER_BYTES`]).
    pub trailer_bytes: usize,
    /// Most trailer fields (default [`MAX_TRAILER_FIELDS`]).
    pub trailer_fields: usize,
}

impl Default for ChunkedLimits {
    fn default() -> Self {
        ChunkedLimits {
            size_line: MAX_SIZE_LINE,
            extensions_total: MAX_EXTENSIONS_TOTAL,
            trailer_bytes: MAX_TRAILER_BYTES,
            trailer_fields: MAX_TRAILER_FIELDS,
        }
    }
}

/// One trailer field: a token name and its raw value (OWS trimmed; may hold obs-text bytes).
pub type TrailerField = (String, Vec<u8>);
