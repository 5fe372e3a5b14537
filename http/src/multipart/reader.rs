//! [`Multipart`]: a `multipart/form-data` body (RFC 7578 over RFC 2046 §5.1) read part by
//! part, each part a `Read` over its bytes; one fixed buffer, nothing of a part kept in memory.
//!
//! The delimiter is `CRLF--boundary`. The buffer starts with a virtual CRLF so a body opening
//! with `--boundary` (no preamble) is found by the same search. Part bytes are handed out up to
//! the last position where a delimiter could still begin, so a boundary split across reads is
//! never mistaken for data.

use std::io::{self, Read};

use memchr::memmem::Finder;

use super::params;
use super::violation::Violation;

/// Buffer size for reading the body (also the largest read a part serves at once).
pub const BUFFER: usize = 64 * 1024;
/// Default most parts in one body.
pub const DEFAULT_MAX_PARTS: usize = 1000;
/// Default most bytes in one part's header block.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 8 * 1024;

/// The limits a [`Multipart`] enforces; each breach is a [`Violation`] answered with 413.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultipartLimits {
    /// Most parts (default [`DEFAULT_MAX_PARTS`]).
    pub max_parts: usize,
    /// Most bytes in one part's header block (default [`DEFAULT_MAX_HEADER_BYTES`]).
    pub max_header_bytes: usize,
    /// Most bytes in one part's body (default: unlimited).
    pub max_part_bytes: u64,
    /// Most bytes in the whole body, preamble and delimiters included (default: unlimited;
    /// the server's `max_body` applies as well).
    pub max_total_bytes: u64,
}

impl Default for MultipartLimits {
    fn default() -> Self {
        MultipartLimits {
            max_parts: DEFAULT_MAX_PARTS,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_part_bytes: u64::MAX,
            max_total_bytes: u64::MAX,
        }
    }
}

/// Where the reader stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first delimiter: bytes are skipped.
    Preamble,
    /// Inside a part's body.
    Body,
    /// Just after a delimiter: `--` (the end) or padding and CRLF (a part) comes next.
    Delimiter,
    /// After the close delimiter: the epilogue is ignored.
    Done,
    /// A rule was broken; every later call reports it again.
    Failed(Violation),
}

/// A `multipart/form-data` body read part by part.
pub struct Multipart<R> {
    src: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// `buf[start..known]` is part data for sure; `delim_at_known` says a delimiter starts there.
    known: usize,
    delim_at_known: bool,
    eof: bool,
    finder: Finder<'static>,
    state: State,
    limits: MultipartLimits,
    parts: usize,
    part_bytes: u64,
    total: u64,
}

/// One part: its name, file name and type, and its body as `Read`.
pub struct Part<'m, R> {
    reader: &'m mut Multipart<R>,
    name: String,
    filename: Option<String>,
    content_type: Option<String>,
}

impl<R: Read> Multipart<R> {
    /// Reads `src` as a body delimited by `boundary` (see [`super::boundary`]).
    pub fn new(src: R, boundary: &str, limits: MultipartLimits) -> Multipart<R> {
        let delim = [b"\r\n--", boundary.as_bytes()].concat();
        let size = BUFFER.max(limits.max_header_bytes + delim.len() + 8);
        let mut buf = vec![0; size].into_boxed_slice();
        buf[..2].copy_from_slice(b"\r\n");
        Multipart {
            src,
            buf,
            start: 0,
            end: 2,
            known: 0,
            delim_at_known: false,
            eof: false,
            finder: Finder::new(&delim).into_owned(),
            state: State::Preamble,
            limits,
            parts: 0,
            part_bytes: 0,
            total: 0,
        }
    }

    /// The next part (the rest of the current one is skipped), or `None` after the close
    /// delimiter.
    pub fn next_part(&mut self) -> io::Result<Option<Part<'_, R>>> {
        loop {
            match self.state {
                State::Failed(v) => return Err(v.into()),
                State::Done => return Ok(None),
                State::Preamble | State::Body => self.skip_data()?,
                State::Delimiter => break,
            }
        }
        if !self.delimiter_line()? {
            self.state = State::Done;
            return Ok(None);
        }
        self.parts += 1;
        if self.parts > self.limits.max_parts {
            return Err(self.fail(Violation::TooManyParts));
        }
        let headers = self.header_block()?;
        let (name, filename, content_type) = match parse_headers(&headers) {
            Ok(h) => h,
            Err(v) => return Err(self.fail(v)),
        };
        self.state = State::Body;
        self.part_bytes = 0;
        Ok(Some(Part {
            reader: self,
            name,
            filename,
            content_type,
        }))
    }

    fn fail(&mut self, v: Violation) -> io::Error {
        self.state = State::Failed(v);
        v.into()
    }

    /// Reads more of the source into the buffer (moving what is left to the front first);
    /// false at the end of the source.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.known -= self.start.min(self.known);
            self.start = 0;
        }
        let n = loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        self.total += n as u64;
        if self.total > self.limits.max_total_bytes {
            return Err(self.fail(Violation::BodyTooLarge));
        }
        self.end += n;
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// Bytes of data available at `start` (0: a delimiter is there); errors on a body cut short.
    fn data_ahead(&mut self) -> io::Result<usize> {
        loop {
            if self.known > self.start || self.delim_at_known {
                return Ok(self.known - self.start);
            }
            let window = &self.buf[self.start..self.end];
            let delim = self.finder.needle().len();
            match self.finder.find(window) {
                Some(p) => {
                    self.known = self.start + p;
                    self.delim_at_known = true;
                }
                None => {
                    self.known = self.start + window.len().saturating_sub(delim - 1);
                    if self.known == self.start && !self.fill()? {
                        return Err(self.fail(Violation::Truncated));
                    }
                }
            }
        }
    }

    /// Copies part data into `out` (0 at the part's end, having consumed the delimiter).
    fn read_data(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self.state {
            State::Body if !out.is_empty() => {}
            State::Failed(v) => return Err(v.into()),
            _ => return Ok(0),
        }
        let n = self.data_ahead()?.min(out.len());
        if n == 0 {
            self.take_delimiter();
            return Ok(0);
        }
        self.count(n)?;
        out[..n].copy_from_slice(&self.buf[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }

    /// Skips the preamble or the rest of the current part, up to and past the next delimiter.
    fn skip_data(&mut self) -> io::Result<()> {
        loop {
            let n = self.data_ahead()?;
            if n == 0 {
                self.take_delimiter();
                return Ok(());
            }
            self.count(n)?;
            self.start += n;
        }
    }

    /// Counts `n` bytes of part data against the part limit.
    fn count(&mut self, n: usize) -> io::Result<()> {
        if self.state == State::Body {
            self.part_bytes += n as u64;
            if self.part_bytes > self.limits.max_part_bytes {
                return Err(self.fail(Violation::PartTooLarge));
            }
        }
        Ok(())
    }

    /// Consumes the delimiter found at `start`.
    fn take_delimiter(&mut self) {
        self.start += self.finder.needle().len();
        self.known = self.start;
        self.delim_at_known = false;
        self.state = State::Delimiter;
    }

    /// After a delimiter: true for a part (padding and CRLF consumed), false for the close.
    fn delimiter_line(&mut self) -> io::Result<bool> {
        loop {
            let line = &self.buf[self.start..self.end];
            if line.starts_with(b"--") {
                return Ok(false);
            }
            let pad = line
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            match line.get(pad..pad + 2) {
                Some(b"\r\n") => {
                    self.start += pad + 2;
                    self.known = self.start;
                    return Ok(true);
                }
                Some(_) => return Err(self.fail(Violation::BoundaryLine)),
                None if line.len() > self.limits.max_header_bytes => {
                    return Err(self.fail(Violation::BoundaryLine))
                }
                None => {
                    if !self.fill()? {
                        return Err(self.fail(Violation::Truncated));
                    }
                }
            }
        }
    }

    /// The part's header lines (without the blank line), consumed from the buffer.
    fn header_block(&mut self) -> io::Result<Vec<u8>> {
        let max = self.limits.max_header_bytes;
        let mut searched = 0;
        loop {
            let window = &self.buf[self.start..self.end];
            if window.starts_with(b"\r\n") {
                self.start += 2;
                self.known = self.start;
                return Ok(Vec::new());
            }
            // The limit is judged on the block alone, so it breaks the same way whatever the
            // reads: a block within it ends within `max + 4` bytes.
            if let Some(p) = memchr::memmem::find(&window[searched..], b"\r\n\r\n") {
                let len = searched + p;
                if len > max {
                    return Err(self.fail(Violation::HeaderTooLarge));
                }
                let block = window[..len].to_vec();
                self.start += len + 4;
                self.known = self.start;
                return Ok(block);
            }
            if window.len() >= max + 4 {
                return Err(self.fail(Violation::HeaderTooLarge));
            }
            searched = window.len().saturating_sub(3);
            if !self.fill()? {
                return Err(self.fail(Violation::Truncated));
            }
        }
    }
}

/// A part's name, file name (its last path component) and content type from its header block.
fn parse_headers(block: &[u8]) -> Result<(String, Option<String>, Option<String>), Violation> {
    let text = std::str::from_utf8(block).map_err(|_| Violation::BadHeader)?;
    let mut disposition = None;
    let mut content_type = None;
    for line in text.split("\r\n").filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(Violation::BadHeader)?;
        if name.is_empty() || name.starts_with([' ', '\t']) {
            return Err(Violation::BadHeader);
        }
        let value = value.trim_matches([' ', '\t']);
        if name.eq_ignore_ascii_case("content-disposition") {
            disposition = Some(params::parse(value).ok_or(Violation::BadHeader)?);
        } else if name.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.to_string());
        }
    }
    let (kind, params) = disposition.ok_or(Violation::NoDisposition)?;
    let name = params::get(&params, "name").filter(|_| kind == "form-data");
    let name = name.ok_or(Violation::NoDisposition)?;
    // Old browsers sent the whole client path: keep its last component.
    let filename = params::get(&params, "filename")
        .map(|f| f.rsplit(['/', '\\']).next().unwrap_or("").to_string());
    Ok((name, filename, content_type))
}

impl<R> Part<'_, R> {
    /// The form field's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file name the client gave (its last path component), for a file part.
    pub fn filename(&self) -> Option<&str> {
        self.filename.as_deref()
    }

    /// The part's `Content-Type`, when given.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }
}

impl<R: Read> Read for Part<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.reader.read_data(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    type Parsed = Vec<(String, Option<String>, Vec<u8>)>;

    fn parse(body: &[u8], step: usize, limits: MultipartLimits) -> io::Result<Parsed> {
        let mut mp = Multipart::new(Trickle(body, step), "XyZ", limits);
        let mut out = Vec::new();
        while let Some(mut part) = mp.next_part()? {
            let mut data = Vec::new();
            part.read_to_end(&mut data)?;
            out.push((part.name().to_string(), part.filename.clone(), data));
        }
        Ok(out)
    }

    const BODY: &[u8] = b"preamble\r\n--XyZ  \r\n\
        Content-Disposition: form-data; name=\"a\"\r\n\r\n\
        one\r\n--XyZ\r\n\
        content-disposition: form-data; name=\"f\"; filename=\"C:\\\\dir\\\\x.txt\"\r\n\
        Content-Type: text/plain\r\n\r\n\
        line\r\n--Xy\r\n-\r\n--XyZ\r\n\
        Content-Disposition: form-data; name=\"empty\"\r\n\r\n\
        \r\n--XyZ--\r\nepilogue";

    #[test]
    fn parts_are_the_same_for_every_read_size() {
        let expected = parse(BODY, BODY.len(), MultipartLimits::default()).unwrap();
        assert_eq!(expected.len(), 3);
        assert_eq!(expected[0], ("a".into(), None, b"one".to_vec()));
        assert_eq!(expected[1].1.as_deref(), Some("x.txt"));
        assert_eq!(expected[1].2, b"line\r\n--Xy\r\n-".to_vec());
        assert_eq!(expected[2].2, b"");
        for step in 1..BODY.len() {
            assert_eq!(
                parse(BODY, step, MultipartLimits::default()).unwrap(),
                expected
            );
        }
    }

    #[test]
    fn no_preamble_and_skipped_parts() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZ\r\n\
            Content-Disposition: form-data; name=b\r\n\r\ny\r\n--XyZ--";
        let mut mp = Multipart::new(&body[..], "XyZ", MultipartLimits::default());
        assert_eq!(mp.next_part().unwrap().unwrap().name(), "a");
        let mut b = mp.next_part().unwrap().unwrap();
        let mut s = String::new();
        b.read_to_string(&mut s).unwrap();
        assert_eq!(s, "y");
        assert!(mp.next_part().unwrap().is_none());
        assert!(mp.next_part().unwrap().is_none());
    }

    fn violation(body: &[u8], limits: MultipartLimits) -> Option<Violation> {
        parse(body, 7, limits)
            .err()
            .as_ref()
            .and_then(Violation::of)
    }

    #[test]
    fn each_rule_has_its_violation() {
        let d = MultipartLimits::default();
        assert_eq!(violation(&BODY[..60], d), Some(Violation::Truncated));
        assert_eq!(
            violation(b"no boundary at all", d),
            Some(Violation::Truncated)
        );
        assert_eq!(
            violation(b"--XyZjunk\r\n", d),
            Some(Violation::BoundaryLine)
        );
        assert_eq!(
            violation(b"--XyZ\r\nno colon\r\n\r\n", d),
            Some(Violation::BadHeader)
        );
        assert_eq!(
            violation(b"--XyZ\r\nContent-Type: a\r\n\r\nx\r\n--XyZ--", d),
            Some(Violation::NoDisposition)
        );
        let small = |f: fn(&mut MultipartLimits)| {
            let mut l = d;
            f(&mut l);
            l
        };
        assert_eq!(
            violation(BODY, small(|l| l.max_parts = 2)),
            Some(Violation::TooManyParts)
        );
        assert_eq!(
            violation(BODY, small(|l| l.max_part_bytes = 10)),
            Some(Violation::PartTooLarge)
        );
        assert_eq!(
            violation(BODY, small(|l| l.max_header_bytes = 40)),
            Some(Violation::HeaderTooLarge)
        );
        assert_eq!(
            violation(BODY, small(|l| l.max_total_bytes = 100)),
            Some(Violation::BodyTooLarge)
        );
    }
}
