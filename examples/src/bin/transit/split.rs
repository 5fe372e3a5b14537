//! The transit loader's CSV reader: an RFC 4180 record splitter over any `Read` (moria-streams'
//! [`File`] in `load.rs`), measured against the `csv` crate by bench's `csv_load`: quoted
//! fields, doubled quotes, CR LF or LF line ends, commas and line breaks inside quotes. One
//! buffer of its own; fields are slices of it, except quoted ones with doubled quotes, which
//! are unescaped into one reused byte vector.
//!
//! Lenient where the `csv` crate is (a quote inside an unquoted field is a literal byte, blank
//! lines and a leading UTF-8 BOM are skipped, rows may differ in length); strict where it is not: an unterminated quote
//! or a byte after a closing quote other than a comma or a line end is an error naming the line.
//!
//! [`File`]: moria_streams::File

use std::io::{self, Read};

/// A CSV file read one record at a time.
pub struct Splitter<R> {
    inner: R,
    buf: Vec<u8>,
    /// Unread bytes: `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    /// Whether a UTF-8 BOM at the start has been looked for (and skipped, as the csv crate does).
    bom_checked: bool,
    /// Where the current record starts in `buf`.
    record: usize,
    /// Unescaped quoted fields with doubled quotes, back to back (the only bytes copied).
    out: Vec<u8>,
    /// The current record's fields.
    spans: Vec<Span>,
    /// The line the current record starts on (1-based).
    line: u64,
    /// The line the next record starts on, blank lines not yet skipped.
    next_line: u64,
    /// Line breaks inside the current record's quoted fields.
    breaks: u64,
}

/// A malformed record: the line it starts on and what is wrong.
#[derive(Debug)]
pub enum SplitError {
    /// Reading failed.
    Io(io::Error),
    /// The record starting on this line is not CSV.
    Syntax(u64, &'static str),
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SplitError::Io(e) => write!(f, "{e}"),
            SplitError::Syntax(line, what) => write!(f, "line {line}: {what}"),
        }
    }
}

/// One field: `start..end` in the record's bytes, or in `out` when `owned`.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    owned: bool,
}

/// Bytes that end an unquoted field: comma, LF, CR.
const ENDS_FIELD: [bool; 256] = {
    let mut t = [false; 256];
    t[b',' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t
};

/// What one attempt at the next record found.
enum Parsed {
    /// A record of this many bytes, spanning this many line breaks inside quotes.
    Record(usize, u64),
    /// The record goes on past the buffered bytes.
    NeedMore,
}

impl<R: Read> Splitter<R> {
    /// A splitter over `inner` with a `capacity`-byte buffer (grown for a longer record).
    pub fn new(inner: R, capacity: usize) -> Self {
        Splitter {
            inner,
            buf: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
            eof: false,
            bom_checked: false,
            record: 0,
            out: Vec::new(),
            spans: Vec::new(),
            line: 0,
            next_line: 1,
            breaks: 0,
        }
    }

    /// Reads the next record; `false` at the end of the input.
    pub fn next_record(&mut self) -> Result<bool, SplitError> {
        loop {
            if !self.bom_checked {
                if self.end - self.start < 3 && !self.eof {
                    self.refill()?;
                    continue;
                }
                if self.buf[self.start..self.end].starts_with(b"\xEF\xBB\xBF") {
                    self.start += 3;
                }
                self.bom_checked = true;
            }
            // Blank lines between records are skipped, as the csv crate does.
            while self.start < self.end {
                match self.buf[self.start] {
                    b'\n' => self.next_line += 1,
                    b'\r' => {}
                    _ => break,
                }
                self.start += 1;
            }
            if self.start == self.end {
                if self.eof {
                    return Ok(false);
                }
                self.refill()?;
                continue;
            }
            let data = &self.buf[self.start..self.end];
            match parse(data, self.eof, &mut self.out, &mut self.spans)
                .map_err(|what| SplitError::Syntax(self.next_line, what))?
            {
                Parsed::Record(len, breaks) => {
                    self.record = self.start;
                    self.start += len;
                    self.line = self.next_line;
                    // The record's own line end, if it had one, moves to the next line.
                    let ended = matches!(self.buf[self.start - 1], b'\n');
                    self.next_line += breaks + u64::from(ended);
                    self.breaks = breaks;
                    return Ok(true);
                }
                Parsed::NeedMore => self.refill()?,
            }
        }
    }

    /// Moves the unread bytes to the front, grows a full buffer and reads more.
    fn refill(&mut self) -> Result<(), SplitError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let n = loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other.map_err(SplitError::Io)?,
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(())
    }

    /// Field `i` of the current record.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let s = *self.spans.get(i)?;
        Some(match s.owned {
            true => &self.out[s.start..s.end],
            false => &self.buf[self.record + s.start..self.record + s.end],
        })
    }

    /// How many fields the current record has.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// The line the current record starts on.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Whether the current record runs over several lines (line breaks inside quotes).
    pub fn spans_lines(&self) -> bool {
        self.breaks > 0
    }
}

/// Splits one record at the front of `data` into `spans` (and `out` for fields with doubled
/// quotes). `eof`: no bytes follow `data`.
fn parse(
    data: &[u8],
    eof: bool,
    out: &mut Vec<u8>,
    spans: &mut Vec<Span>,
) -> Result<Parsed, &'static str> {
    out.clear();
    spans.clear();
    let mut i = 0;
    let mut breaks = 0;
    loop {
        // One field starts at `i`.
        if data.get(i) == Some(&b'"') {
            let first = i + 1;
            // Where the bytes not yet copied to `out` start, once a doubled quote is seen.
            let mut owned: Option<usize> = None;
            let mut piece = first;
            i = first;
            loop {
                let Some(q) = memchr::memchr(b'"', &data[i..]) else {
                    return if eof {
                        Err("an unterminated quote")
                    } else {
                        Ok(Parsed::NeedMore)
                    };
                };
                let close = i + q;
                breaks += memchr::memchr_iter(b'\n', &data[i..close]).count() as u64;
                match data.get(close + 1) {
                    Some(b'"') => {
                        owned.get_or_insert(out.len());
                        out.extend_from_slice(&data[piece..=close]);
                        i = close + 2;
                        piece = i;
                    }
                    None if !eof => return Ok(Parsed::NeedMore),
                    _ => {
                        spans.push(match owned {
                            Some(start) => {
                                out.extend_from_slice(&data[piece..close]);
                                Span {
                                    start,
                                    end: out.len(),
                                    owned: true,
                                }
                            }
                            None => Span {
                                start: first,
                                end: close,
                                owned: false,
                            },
                        });
                        i = close + 1;
                        break;
                    }
                }
            }
        } else {
            let start = i;
            while i < data.len() && !ENDS_FIELD[data[i] as usize] {
                i += 1;
            }
            spans.push(Span {
                start,
                end: i,
                owned: false,
            });
        }
        match data.get(i) {
            Some(b',') => i += 1,
            Some(b'\n') => return Ok(Parsed::Record(i + 1, breaks)),
            Some(b'\r') => match data.get(i + 1) {
                Some(b'\n') => return Ok(Parsed::Record(i + 2, breaks)),
                None if !eof => return Ok(Parsed::NeedMore),
                _ => return Ok(Parsed::Record(i + 1, breaks)),
            },
            Some(_) => return Err("a byte after a closing quote"),
            None if eof => return Ok(Parsed::Record(i, breaks)),
            None => return Ok(Parsed::NeedMore),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records as (line, fields).
    type Rows = Vec<(u64, Vec<Vec<u8>>)>;

    /// Every record of `input`, as the splitter sees it, with a 4-byte buffer (so records
    /// straddle refills) and a large one.
    fn split(input: &[u8], capacity: usize) -> Result<Rows, SplitError> {
        let mut s = Splitter::new(input, capacity);
        let mut rows = Vec::new();
        while s.next_record()? {
            let fields = (0..s.len()).map(|i| s.get(i).unwrap().to_vec()).collect();
            rows.push((s.line(), fields));
        }
        Ok(rows)
    }

    /// Every record of `input` as the csv crate sees it (no header, rows of any length).
    fn csv_crate(input: &[u8]) -> Rows {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(input);
        let mut rec = csv::ByteRecord::new();
        let mut rows = Vec::new();
        while r.read_byte_record(&mut rec).unwrap() {
            let line = rec.position().unwrap().line();
            rows.push((line, rec.iter().map(<[u8]>::to_vec).collect()));
        }
        rows
    }

    const TRICKY: &[&[u8]] = &[
        b"a,b,c\n1,2,3\n",
        b"a,b,c\r\n1,2,3\r\n",
        b"a,b,c\r\n1,2,3",
        b"a,b\n1,2",
        b",,\n,\n\n",
        b"\"\",\"\"\n",
        b"\"a,b\",\"c\"\"d\"\"\",e\n",
        b"x,\"line1\nline2\r\nline3\",y\nnext,row,here\n",
        b"\"\"\"\"\"\",\"\"\"\"\n",
        b"trip,\"quoted, with comma\",\"ends with quote\"\"\"\r\n2,3,4\r\n",
        b"a\n\n\nb\r\n\r\nc\n",
        b"\xEF\xBB\xBFtrip_id,stop_id\n53126110-Ken,\"70061\"\n",
        b"a,\"b\r\nc\"\r\nd,e\r\n",
        b"last,field,\"quoted\"",
        b"one\n",
        b"",
        b"\n\n",
        b"a\"b,c\n",
        b"\"x\"\"\ny\"\"\",\"\"\r\n\"\"",
        b"\"\",\n,\"\"\n",
    ];

    #[test]
    fn agrees_with_the_csv_crate_on_tricky_inputs() {
        for &input in TRICKY {
            let mut want = csv_crate(input);
            // After a CR LF the csv crate gives a record the position it stopped at, the LF
            // before it: lines are compared on LF-only inputs.
            let lines = !input.contains(&b'\r');
            for capacity in [1, 2, 4, 7, 1 << 20] {
                let mut got = split(input, capacity).unwrap();
                if !lines {
                    got.iter_mut().for_each(|r| r.0 = 0);
                    want.iter_mut().for_each(|r| r.0 = 0);
                }
                assert_eq!(
                    got,
                    want,
                    "input {:?}, capacity {capacity}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }

    #[test]
    fn agrees_with_the_csv_crate_on_random_written_records() {
        let alphabet = [b'a', b'7', b',', b'"', b'\r', b'\n', b' '];
        let mut rng = fastrand::Rng::with_seed(33);
        for _ in 0..500 {
            let mut w = csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(Vec::new());
            for _ in 0..rng.usize(1..6) {
                let fields: Vec<Vec<u8>> = (0..rng.usize(1..5))
                    .map(|_| {
                        (0..rng.usize(0..6))
                            .map(|_| alphabet[rng.usize(..alphabet.len())])
                            .collect()
                    })
                    .collect();
                // A lone empty field is an empty line, which both readers skip.
                if fields.len() == 1 && fields[0].is_empty() {
                    continue;
                }
                w.write_record(&fields).unwrap();
            }
            let input = w.into_inner().unwrap();
            let want = csv_crate(&input);
            for capacity in [1, 5, 1 << 16] {
                let got = split(&input, capacity).unwrap();
                let fields = |rows: &[(u64, Vec<Vec<u8>>)]| -> Vec<Vec<Vec<u8>>> {
                    rows.iter().map(|r| r.1.clone()).collect()
                };
                assert_eq!(
                    fields(&got),
                    fields(&want),
                    "{:?}",
                    String::from_utf8_lossy(&input)
                );
            }
        }
    }

    #[test]
    fn malformed_records_name_their_line() {
        for (input, line, what) in [
            (&b"a,b\n\"open,c\nd\n"[..], 2, "an unterminated quote"),
            (b"a\n\"x\"y,z\n", 2, "a byte after a closing quote"),
            (b"a\n\n\"x\"\"", 3, "an unterminated quote"),
        ] {
            for capacity in [1, 3, 64] {
                match split(input, capacity) {
                    Err(SplitError::Syntax(l, w)) => assert_eq!((l, w), (line, what)),
                    other => panic!("{other:?}"),
                }
            }
        }
    }
}
