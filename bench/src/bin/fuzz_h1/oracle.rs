//! What must hold for every input: the head parses the same whether it arrives in one read or
//! in many; an accepted head re-encodes (CRLF line ends, `name: value`) to bytes that parse to
//! the same head; a chunked body decodes within its limits, makes progress on every read, stops
//! exactly at its end, and re-encodes (chunks and trailers) to bytes that decode to the same data.
//! A broken rule is a finding, described in the returned `Err`.

use std::io::{BufReader, Read, Write};

use moria_http::fuzzing::{parse_request, Failure, Framing, ParsedHead};
use moria_http::{Limits, Version};
use moria_streams::chunked::{ChunkedLimits, TrailerField};
use moria_streams::{ChunkedReader, ChunkedWriter, Error};

/// How one request input ended.
pub enum HeadOutcome {
    /// Accepted, with this framing.
    Accepted(Framing),
    /// Refused with this failure.
    Rejected(Failure),
    /// The input ends inside the head.
    Incomplete,
}

/// How a chunked body ended.
pub enum BodyOutcome {
    /// Decoded to its end.
    Complete,
    /// Refused (or cut short), labelled by the decoder's error.
    Rejected(&'static str),
}

/// How the decoder is driven: the inner reader's buffer and the caller's read size.
#[derive(Clone, Copy)]
pub struct Reads {
    /// Capacity of the `BufReader` between the bytes and the decoder (bytes per fill).
    pub fill: usize,
    /// Bytes asked for per `read`.
    pub read: usize,
}

/// Checks one request input; `step` is the size of each simulated read.
pub fn check_request(
    input: &[u8],
    limits: &Limits,
    step: usize,
) -> Result<(HeadOutcome, Option<ParsedHead>), String> {
    let whole = parse_request(input, limits, 0);
    let split = parse_request(input, limits, step);
    if whole != split {
        return Err(format!(
            "one read gave {whole:?}, reads of {step} bytes gave {split:?}"
        ));
    }
    let head = match whole {
        Err(f) => return Ok((HeadOutcome::Rejected(f), None)),
        Ok(None) => return Ok((HeadOutcome::Incomplete, None)),
        Ok(Some(h)) => h,
    };
    let encoded = encode(&head);
    // CRLF and ": " can make the re-encoding longer than the input; the head limit must not
    // be what tells them apart.
    let roomy = Limits {
        max_head: limits.max_head.max(encoded.len() + 1),
        ..limits.clone()
    };
    match parse_request(&encoded, &roomy, 0) {
        Ok(Some(again)) if same_head(&head, &again) && again.head_len == encoded.len() => {}
        other => {
            return Err(format!(
                "accepted {head:?} but its re-encoding {:?} parsed as {other:?}",
                String::from_utf8_lossy(&encoded)
            ))
        }
    }
    Ok((HeadOutcome::Accepted(head.framing), Some(head)))
}

/// The head as a client would send it: request line, `name: value` lines, CRLF everywhere.
fn encode(h: &ParsedHead) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + h.target.len());
    out.extend_from_slice(&h.method_text);
    out.push(b' ');
    out.extend_from_slice(&h.target);
    out.extend_from_slice(match h.version {
        Version::Http10 => b" HTTP/1.0\r\n",
        Version::Http11 => b" HTTP/1.1\r\n",
        // Never from the h1 parser: its re-parse would differ, a finding.
        Version::Http2 => b" HTTP/2.0\r\n",
    });
    for (name, value) in &h.fields {
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Equal in everything but where the head ended.
fn same_head(a: &ParsedHead, b: &ParsedHead) -> bool {
    ParsedHead {
        head_len: 0,
        ..a.clone()
    } == ParsedHead {
        head_len: 0,
        ..b.clone()
    }
}

/// Checks one chunked body (and whatever follows it in `input`).
pub fn check_chunked(
    input: &[u8],
    limits: ChunkedLimits,
    reads: Reads,
) -> Result<BodyOutcome, String> {
    let decoded = match decode(input, limits, reads)? {
        Ok(d) => d,
        Err(label) => return Ok(BodyOutcome::Rejected(label)),
    };
    // The canonical encoding of what was decoded, followed by what followed the body, must
    // decode to the same data and trailers and leave the same bytes behind.
    let mut writer = ChunkedWriter::new(Vec::new());
    for piece in decoded.data.chunks(reads.read.max(1)) {
        writer
            .write_all(piece)
            .map_err(|e| format!("re-encoding data: {e}"))?;
    }
    let trailers: Vec<(&str, &[u8])> = decoded
        .trailers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_slice()))
        .collect();
    let mut again = writer
        .finish_with_trailers(&trailers)
        .map_err(|e| format!("re-encoding trailers {trailers:?}: {e}"))?;
    again.extend_from_slice(&decoded.rest);
    match decode(&again, ROOMY, reads)? {
        Ok(d) if d == decoded => Ok(BodyOutcome::Complete),
        Ok(d) => Err(format!(
            "decoded {decoded:?}, its re-encoding decoded {d:?}"
        )),
        Err(label) => Err(format!(
            "decoded {decoded:?}, its re-encoding {:?} was refused: {label}",
            String::from_utf8_lossy(&again)
        )),
    }
}

/// Limits no re-encoding of an accepted body can reach (its trailer lines may grow by ": ").
const ROOMY: ChunkedLimits = ChunkedLimits {
    size_line: 1 << 30,
    extensions_total: 1 << 30,
    trailer_bytes: 1 << 30,
    trailer_fields: 1 << 30,
};

/// A decoded body: its data, its trailers, and the bytes the decoder left unread.
#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    data: Vec<u8>,
    trailers: Vec<TrailerField>,
    rest: Vec<u8>,
}

/// Decodes `input`; the inner `Err` is a refusal (its label), the outer one a finding.
fn decode(
    input: &[u8],
    limits: ChunkedLimits,
    reads: Reads,
) -> Result<Result<Decoded, &'static str>, String> {
    let inner = BufReader::with_capacity(reads.fill.max(1), input);
    let mut reader = ChunkedReader::with_limits(inner, limits);
    let mut data = Vec::new();
    let mut buf = vec![0u8; reads.read.max(1)];
    // Every successful read yields at least one byte, each taken from the input.
    let mut calls = 0usize;
    loop {
        calls += 1;
        if calls > input.len() + 2 {
            return Err(format!(
                "{calls} reads without reaching the end of {} bytes",
                input.len()
            ));
        }
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(e) => return Ok(Err(label(&e))),
        }
    }
    if !reader.is_done() {
        return Err("read returned 0 before the last chunk".into());
    }
    let trailers = reader.trailers().to_vec();
    let inner = reader.into_inner();
    let mut rest = inner.buffer().to_vec();
    rest.extend_from_slice(inner.get_ref());
    if !input.ends_with(&rest) {
        return Err("the bytes left after the body are not the input's tail".into());
    }
    Ok(Ok(Decoded {
        data,
        trailers,
        rest,
    }))
}

/// A static name for a decoder refusal.
fn label(e: &std::io::Error) -> &'static str {
    match Error::from_io(e) {
        Some(Error::ChunkedTruncated(_)) => "truncated",
        Some(Error::InvalidChunkSize(_)) => "invalid chunk-size line",
        Some(Error::ChunkSizeOverflow) => "chunk size overflow",
        Some(Error::ChunkLineTooLong { .. }) => "chunk-size line too long",
        Some(Error::ChunkExtensionsTooLarge { .. }) => "extensions too large",
        Some(Error::MissingChunkCrlf) => "missing CRLF after data",
        Some(Error::InvalidTrailer(_)) => "invalid trailer",
        Some(Error::TrailersTooLarge { .. }) => "trailers too large",
        Some(Error::TooManyTrailers { .. }) => "too many trailers",
        _ => "other error",
    }
}
