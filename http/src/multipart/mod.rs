//! `multipart/form-data` (RFC 7578), both ways and streaming: [`Multipart`] reads a request
//! body part by part, each [`Part`] a `Read`; [`Form`] builds a body for the client.
//!
//! | file | job |
//! |---|---|
//! | `reader.rs` | [`Multipart`], [`Part`], [`MultipartLimits`]: the parser over any `Read` |
//! | `violation.rs` | [`Violation`]: each broken rule or limit, with its status (413/400) |
//! | `params.rs` | header parameters: tokens, quoted strings, RFC 8187 `filename*=` |
//! | `form.rs` | [`Form`]: fields and files (streamed from disk) as a body, sized when possible |
//!
//! Written here rather than taken from a crate: `multer` needs an async stream, and the
//! `multipart` crate is unmaintained and buffers through its own I/O layer. The grammar is
//! small; `bench`'s `fuzz_multipart` drives it with split reads against a reference split.

mod form;
mod params;
mod reader;
mod violation;

pub use form::Form;
pub use reader::{
    Multipart, MultipartLimits, Part, BUFFER, DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_PARTS,
};
pub use violation::Violation;

/// Longest boundary RFC 2046 §5.1.1 allows.
pub const MAX_BOUNDARY: usize = 70;

/// The boundary of a `multipart/form-data` Content-Type value, or
/// [`Violation::NotMultipart`].
pub fn boundary(content_type: Option<&[u8]>) -> Result<String, Violation> {
    let value = content_type
        .and_then(|v| std::str::from_utf8(v).ok())
        .ok_or(Violation::NotMultipart)?;
    let (kind, params) = params::parse(value).ok_or(Violation::NotMultipart)?;
    let b = params::get(&params, "boundary").ok_or(Violation::NotMultipart)?;
    let valid = kind == "multipart/form-data"
        && (1..=MAX_BOUNDARY).contains(&b.len())
        && b.bytes().all(|c| c.is_ascii_graphic() || c == b' ')
        && !b.ends_with(' ');
    valid.then_some(b).ok_or(Violation::NotMultipart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_from_content_types() {
        let ok = |v: &str| boundary(Some(v.as_bytes()));
        assert_eq!(
            ok("multipart/form-data; boundary=abc").as_deref(),
            Ok("abc")
        );
        assert_eq!(
            ok("Multipart/Form-Data;boundary=\"a b:c\"").as_deref(),
            Ok("a b:c")
        );
        assert_eq!(ok("text/plain; boundary=abc"), Err(Violation::NotMultipart));
        assert_eq!(ok("multipart/form-data"), Err(Violation::NotMultipart));
        assert_eq!(
            ok(&format!("multipart/form-data; boundary={}", "x".repeat(71))),
            Err(Violation::NotMultipart)
        );
        assert_eq!(boundary(None), Err(Violation::NotMultipart));
    }
}
