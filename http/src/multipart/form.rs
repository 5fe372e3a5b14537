//! [`Form`]: a `multipart/form-data` body built by a client — text fields, and files streamed
//! from disk (or any reader) — sent with a Content-Length when every part's size is known.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{self, Cursor, Read};
use std::path::Path;

/// Bytes of randomness in a generated boundary (hex-encoded after a fixed prefix).
const BOUNDARY_RANDOM_BYTES: usize = 16;

/// One piece of the encoded body.
enum Piece {
    Bytes(Cursor<Vec<u8>>),
    Reader(Box<dyn Read + Send>),
}

/// A `multipart/form-data` body under construction.
pub struct Form {
    boundary: String,
    pieces: Vec<Piece>,
    len: Option<u64>,
}

impl Form {
    /// An empty form with a random boundary.
    pub fn new() -> io::Result<Form> {
        let mut random = [0u8; BOUNDARY_RANDOM_BYTES];
        moria_crypto::rng::fill(&mut random).map_err(io::Error::other)?;
        let mut boundary = String::from("----moria-");
        for b in random {
            let _ = write!(boundary, "{b:02x}");
        }
        Ok(Form::with_boundary(boundary))
    }

    /// An empty form with the given boundary (1 to 70 characters that never occur in the
    /// parts; for tests and reproducible bodies).
    pub fn with_boundary(boundary: impl Into<String>) -> Form {
        Form {
            boundary: boundary.into(),
            pieces: Vec::new(),
            len: Some(0),
        }
    }

    /// The `Content-Type` value to send with the body.
    pub fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }

    /// The body's length, when every part's size is known.
    pub fn len(&self) -> Option<u64> {
        self.len.map(|n| n + self.boundary.len() as u64 + 6)
    }

    /// Whether no part was added.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Adds a text field.
    pub fn text(mut self, name: &str, value: &str) -> Form {
        self.head(name, None, None);
        self.bytes(value.as_bytes().to_vec());
        self.bytes(b"\r\n".to_vec());
        self
    }

    /// Adds the file at `path` as field `name`, streamed from disk when the body is sent, with
    /// its base name and a type guessed from its extension.
    pub fn file(self, name: &str, path: impl AsRef<Path>) -> io::Result<Form> {
        let path = path.as_ref();
        let file = moria_streams::File::open(path)?;
        let size = file.size()?;
        let filename = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mime = mime_guess::from_path(path).first_or_octet_stream();
        Ok(self.reader(name, &filename, mime.essence_str(), file, Some(size)))
    }

    /// Adds a file part read from `reader` (`len` bytes, when known).
    pub fn reader(
        mut self,
        name: &str,
        filename: &str,
        content_type: &str,
        reader: impl Read + Send + 'static,
        len: Option<u64>,
    ) -> Form {
        self.head(name, Some(filename), Some(content_type));
        self.len = self.len.zip(len).map(|(a, b)| a + b);
        self.pieces.push(Piece::Reader(Box::new(
            reader.take(len.unwrap_or(u64::MAX)),
        )));
        self.bytes(b"\r\n".to_vec());
        self
    }

    /// The body as a reader (the parts in order, then the close delimiter).
    pub fn into_reader(mut self) -> impl Read + Send {
        let close = format!("--{}--\r\n", self.boundary).into_bytes();
        self.pieces.push(Piece::Bytes(Cursor::new(close)));
        FormReader {
            pieces: self.pieces.into(),
        }
    }

    fn bytes(&mut self, b: Vec<u8>) {
        self.len = self.len.map(|n| n + b.len() as u64);
        self.pieces.push(Piece::Bytes(Cursor::new(b)));
    }

    fn head(&mut self, name: &str, filename: Option<&str>, content_type: Option<&str>) {
        let mut h = format!(
            "--{}\r\nContent-Disposition: form-data; name=\"",
            self.boundary
        );
        quote_into(name, &mut h);
        if let Some(f) = filename {
            h.push_str("\"; filename=\"");
            quote_into(f, &mut h);
        }
        h.push_str("\"\r\n");
        if let Some(t) = content_type {
            let t: String = t.chars().filter(|c| !c.is_control()).collect();
            let _ = write!(h, "Content-Type: {t}\r\n");
        }
        h.push_str("\r\n");
        self.bytes(h.into_bytes());
    }
}

/// Escapes a name inside a quoted parameter as browsers do (WHATWG's multipart/form-data
/// encoding): `"` → `%22`, CR → `%0D`, LF → `%0A`; everything else as UTF-8.
fn quote_into(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("%22"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
}

/// Reads the pieces one after the other.
struct FormReader {
    pieces: VecDeque<Piece>,
}

impl Read for FormReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while let Some(piece) = self.pieces.front_mut() {
            let n = match piece {
                Piece::Bytes(c) => c.read(out)?,
                Piece::Reader(r) => r.read(out)?,
            };
            if n > 0 || out.is_empty() {
                return Ok(n);
            }
            self.pieces.pop_front();
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Multipart, MultipartLimits};
    use super::*;

    #[test]
    fn what_the_form_writes_the_reader_reads_back() {
        let form = Form::with_boundary("b0undary")
            .text("title", "a \"quoted\"\r\nvalue")
            .reader(
                "f",
                "x\"y.bin",
                "application/octet-stream",
                &b"\x00\r\n--b0"[..],
                Some(7),
            );
        let len = form.len();
        let mut body = Vec::new();
        form.into_reader().read_to_end(&mut body).unwrap();
        assert_eq!(len, Some(body.len() as u64));
        let mut mp = Multipart::new(&body[..], "b0undary", MultipartLimits::default());
        let mut p = mp.next_part().unwrap().unwrap();
        let mut s = String::new();
        p.read_to_string(&mut s).unwrap();
        assert_eq!((p.name(), s.as_str()), ("title", "a \"quoted\"\r\nvalue"));
        let mut p = mp.next_part().unwrap().unwrap();
        assert_eq!(p.filename(), Some("x%22y.bin"));
        let mut data = Vec::new();
        p.read_to_end(&mut data).unwrap();
        assert_eq!(data, b"\x00\r\n--b0");
        assert!(mp.next_part().unwrap().is_none());
    }

    #[test]
    fn unknown_sizes_make_an_unsized_body() {
        let form = Form::with_boundary("b").reader("f", "a", "text/plain", io::empty(), None);
        assert_eq!(form.len(), None);
        assert!(Form::new().unwrap().boundary.len() > 32);
    }
}
