//! What must hold after every connection, whatever the client sent: the server wrote whole
//! frames, SETTINGS first; connection-level frames only on stream 0, DATA and header blocks only on
//! odd (client) ids, RST_STREAM never on 0; every response header block decodes (our HPACK encoder, Huffman included,
//! checked by `loona-hpack`'s decoder) and starts with `:status`; no more streams answered than
//! the client opened.

use moria_http::fuzzing::H2Run;

/// How a connection ended, for the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The input ran out (the usual end: no GOAWAY of the server's own).
    InputEnded,
    /// The server sent a GOAWAY with this error code.
    Goaway(u32),
}

/// A frame the server wrote.
struct Out<'a> {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: &'a [u8],
}

fn frames(output: &[u8]) -> Result<Vec<Out<'_>>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < output.len() {
        if at + 9 > output.len() {
            return Err(format!("a frame header cut short at byte {at}"));
        }
        let h = &output[at..at + 9];
        let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
        let end = at + 9 + len;
        if end > output.len() {
            return Err(format!("a frame payload cut short at byte {at}"));
        }
        out.push(Out {
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]),
            payload: &output[at + 9..end],
        });
        at = end;
    }
    Ok(out)
}

/// Checks the rules; `opened` is an upper bound on the streams the input could open.
pub fn check(run: &H2Run, opened: usize) -> Result<Ending, String> {
    let frames = frames(&run.output)?;
    let first = frames.first().ok_or("nothing written, not even SETTINGS")?;
    if (first.kind, first.flags, first.stream) != (4, 0, 0) {
        return Err("the first frame is not the server's SETTINGS".into());
    }
    let mut decoder = loona_hpack::Decoder::new();
    let mut block: Option<(u32, Vec<u8>)> = None;
    let mut ending = Ending::InputEnded;
    for f in &frames {
        match (f.kind, f.stream) {
            (4 | 6 | 7, s) if s != 0 => return Err(format!("frame type {} on stream {s}", f.kind)),
            // RST_STREAM may answer a bad PRIORITY on any stream (§6.3), even an even one.
            (0 | 1 | 9, s) if s % 2 == 0 => {
                return Err(format!("frame type {} on stream {s}", f.kind))
            }
            (3, 0) => return Err("RST_STREAM on stream 0".into()),
            (0..=9, _) => {}
            (k, _) => return Err(format!("unknown frame type {k} written")),
        }
        if f.kind == 7 && f.payload.len() >= 8 {
            ending = Ending::Goaway(u32::from_be_bytes(f.payload[4..8].try_into().unwrap()));
        }
        match (f.kind, &mut block) {
            (1, None) => block = Some((f.stream, f.payload.to_vec())),
            (9, Some((s, b))) if *s == f.stream => b.extend_from_slice(f.payload),
            (1 | 9, _) => return Err("a header block interleaved with another".into()),
            (_, Some(_)) => return Err("a frame inside a header block".into()),
            _ => {}
        }
        if matches!(f.kind, 1 | 9) && f.flags & 0x4 != 0 {
            if let Some((s, b)) = block.take() {
                let fields = decoder
                    .decode(&b)
                    .map_err(|e| format!("response block of stream {s} does not decode: {e:?}"))?;
                if fields.first().map(|(n, _)| n.as_slice()) != Some(b":status") {
                    return Err(format!(
                        "response block of stream {s} without :status first"
                    ));
                }
            }
        }
    }
    if block.is_some() {
        return Err("a header block without END_HEADERS".into());
    }
    if run.streams > opened {
        return Err(format!(
            "{} streams answered, at most {opened} opened",
            run.streams
        ));
    }
    Ok(ending)
}

/// An upper bound on the streams `input` opens: its HEADERS frames.
pub fn headers_frames(input: &[u8]) -> usize {
    let mut n = 0;
    let mut at = 0;
    while at + 9 <= input.len() {
        if input[at + 3] == 1 {
            n += 1;
        }
        at += 9 + u32::from_be_bytes([0, input[at], input[at + 1], input[at + 2]]) as usize;
    }
    n
}
