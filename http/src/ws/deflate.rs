//! permessage-deflate (RFC 7692): the parameters, their negotiation on both sides, and the
//! per-message compressor and decompressor (raw deflate with a window size, on flate2's zlib-rs
//! backend).
//!
//! Memory per compressed connection (zlib's own formulas, memLevel 8): the compressor holds
//! `2^(w+2) + 128 KiB` (w = our window bits: 256 KiB at 15, 130 KiB at 9), the decompressor
//! `2^w + 7 KiB` (39 KiB at 15). With context takeover both live as long as the connection;
//! with `no_context_takeover` in a direction its state is made for each message and freed
//! after it, so an idle connection holds none (the server asks for both by default:
//! [`DeflateConfig::low_memory`]).

use std::sync::{Mutex, PoisonError};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use super::error::Error;

/// The bytes every flushed message ends with, removed before sending (§7.2.1).
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];
/// Output grown per step while inflating.
const INFLATE_STEP: usize = 16 * 1024;

/// permessage-deflate parameters: what a client offers or a server accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeflateConfig {
    /// The server compresses each message on its own (`server_no_context_takeover`).
    pub server_no_context_takeover: bool,
    /// The client compresses each message on its own (`client_no_context_takeover`).
    pub client_no_context_takeover: bool,
    /// The server's LZ77 window, 8–15 bits (`server_max_window_bits`).
    pub server_max_window_bits: u8,
    /// The client's LZ77 window, 8–15 bits (`client_max_window_bits`).
    pub client_max_window_bits: u8,
    /// Compression level, 0–9.
    pub level: u32,
}

impl Default for DeflateConfig {
    /// Context takeover both ways, 15-bit windows, level 6 (each side's own default).
    fn default() -> DeflateConfig {
        DeflateConfig {
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: 15,
            client_max_window_bits: 15,
            level: 6,
        }
    }
}

impl DeflateConfig {
    /// No context takeover either way: no compression state between messages, so an idle
    /// connection costs no more than an uncompressed one (at some cost in ratio).
    pub fn low_memory() -> DeflateConfig {
        DeflateConfig {
            server_no_context_takeover: true,
            client_no_context_takeover: true,
            ..DeflateConfig::default()
        }
    }

    /// The `Sec-WebSocket-Extensions` offer a client sends. Without
    /// `client_no_context_takeover` a second offer with it follows: a server that wants our
    /// compressor reset per message can pick that one (Autobahn's 13.2, 13.5 and 13.6 cases
    /// do; RFC 7692 §5 allows offers in order of preference).
    pub(crate) fn offer(&self) -> String {
        let one = |client_nct: bool| {
            let mut s = String::from("permessage-deflate");
            if self.server_no_context_takeover {
                s.push_str("; server_no_context_takeover");
            }
            if client_nct {
                s.push_str("; client_no_context_takeover");
            }
            if self.server_max_window_bits < 15 {
                s.push_str(&format!(
                    "; server_max_window_bits={}",
                    self.server_max_window_bits
                ));
            }
            if self.client_max_window_bits < 15 {
                s.push_str(&format!(
                    "; client_max_window_bits={}",
                    self.client_max_window_bits
                ));
            } else {
                s.push_str("; client_max_window_bits");
            }
            s
        };
        match self.client_no_context_takeover {
            true => one(true),
            false => format!("{}, {}", one(false), one(true)),
        }
    }
}

/// One side's agreed parameters: how we compress and how the peer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Agreed {
    /// Our compressor restarts for each message.
    pub ours_reset: bool,
    /// Our window bits.
    pub ours_bits: u8,
    /// The peer's compressor restarts for each message (our decompressor may too).
    pub peers_reset: bool,
    /// The peer's window bits.
    pub peers_bits: u8,
    /// Our compression level.
    pub level: u32,
}

/// The parameters of one offer (or response), parsed: `None` for an unknown, repeated or
/// malformed parameter.
#[derive(Default)]
struct Params {
    server_nct: bool,
    client_nct: bool,
    server_bits: Option<u8>,
    /// `Some(None)`: present without a value.
    client_bits: Option<Option<u8>>,
}

fn parse_params<'a>(params: impl Iterator<Item = &'a str>) -> Option<Params> {
    let mut p = Params::default();
    for param in params {
        let (name, value) = match param.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
            None => (param.trim(), None),
        };
        let bits = |v: Option<&str>| -> Option<u8> {
            let b: u8 = v?.parse().ok()?;
            (8..=15).contains(&b).then_some(b)
        };
        match name.to_ascii_lowercase().as_str() {
            "server_no_context_takeover" if !p.server_nct && value.is_none() => p.server_nct = true,
            "client_no_context_takeover" if !p.client_nct && value.is_none() => p.client_nct = true,
            "server_max_window_bits" if p.server_bits.is_none() => {
                p.server_bits = Some(bits(value)?)
            }
            "client_max_window_bits" if p.client_bits.is_none() => {
                p.client_bits = Some(match value {
                    None => None,
                    v => Some(bits(v)?),
                })
            }
            _ => return None,
        }
    }
    Some(p)
}

/// The permessage-deflate entries of `Sec-WebSocket-Extensions` values, each as its
/// parameters.
fn deflate_entries<'a>(values: &'a [&'a str]) -> impl Iterator<Item = Option<Params>> + 'a {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .filter_map(|entry| {
            let mut parts = entry.split(';');
            let name = parts.next()?.trim();
            name.eq_ignore_ascii_case("permessage-deflate")
                .then(|| parse_params(parts.filter(|p| !p.trim().is_empty())))
        })
}

/// Server side: picks the first acceptable permessage-deflate offer in `values` and returns
/// the response's extension text and what was agreed.
pub(crate) fn accept_offer(cfg: &DeflateConfig, values: &[&str]) -> Option<(String, Agreed)> {
    deflate_entries(values).flatten().find_map(|p| {
        let server_nct = p.server_nct || cfg.server_no_context_takeover;
        let client_nct = p.client_nct || cfg.client_no_context_takeover;
        let server_bits = p.server_bits.unwrap_or(15).min(cfg.server_max_window_bits);
        let client_bits = match p.client_bits {
            // The client cannot limit its window: accept only if we do not ask it to.
            None if cfg.client_max_window_bits < 15 => return None,
            None => 15,
            Some(v) => v.unwrap_or(15).min(cfg.client_max_window_bits),
        };
        let mut text = String::from("permessage-deflate");
        if server_nct {
            text.push_str("; server_no_context_takeover");
        }
        if client_nct {
            text.push_str("; client_no_context_takeover");
        }
        if server_bits < 15 {
            text.push_str(&format!("; server_max_window_bits={server_bits}"));
        }
        if client_bits < 15 {
            text.push_str(&format!("; client_max_window_bits={client_bits}"));
        }
        Some((
            text,
            Agreed {
                ours_reset: server_nct,
                ours_bits: server_bits,
                peers_reset: client_nct,
                peers_bits: client_bits,
                level: cfg.level,
            },
        ))
    })
}

/// Client side: checks the server's answer to our offer (`Ok(None)`: declined).
pub(crate) fn check_response(
    cfg: &DeflateConfig,
    values: &[&str],
) -> Result<Option<Agreed>, Error> {
    let mut entries = deflate_entries(values);
    let Some(first) = entries.next() else {
        return Ok(None);
    };
    let bad = || Error::Handshake("invalid permessage-deflate response".to_string());
    let p = first.ok_or_else(bad)?;
    if entries.next().is_some() {
        return Err(bad());
    }
    let server_bits = p.server_bits.unwrap_or(15);
    if server_bits > cfg.server_max_window_bits {
        return Err(bad());
    }
    if cfg.server_no_context_takeover && !p.server_nct {
        return Err(bad());
    }
    let client_bits = match p.client_bits {
        Some(None) => return Err(bad()),
        Some(Some(b)) => b.min(cfg.client_max_window_bits),
        None => cfg.client_max_window_bits,
    };
    Ok(Some(Agreed {
        ours_reset: p.client_nct || cfg.client_no_context_takeover,
        ours_bits: client_bits,
        peers_reset: p.server_nct,
        peers_bits: server_bits,
        level: cfg.level,
    }))
}

/// zlib cannot compress raw deflate with an 8-bit window; its 9-bit window never reaches back
/// more than 250 bytes (`w_size - MIN_LOOKAHEAD`), so its output suits an 8-bit peer.
fn zlib_bits(bits: u8) -> u8 {
    bits.max(9)
}

/// States kept for reuse by sockets without context takeover, at most this many of each kind:
/// a state made and freed per message would leave its 256 KiB in glibc's heap (its dynamic
/// mmap threshold rises to the size of the first one freed), about 330 KB per socket
/// measured; a reused one costs a `reset`.
const MAX_SPARE: usize = 64;

/// Spare states by (window bits, level).
type Spares<T> = Mutex<Vec<(u8, u32, Box<T>)>>;

static SPARE_DEFLATERS: Spares<Compress> = Mutex::new(Vec::new());
static SPARE_INFLATERS: Spares<Decompress> = Mutex::new(Vec::new());

/// A spare state for `bits` and `level`, if one is kept.
fn spare<T>(spares: &Spares<T>, bits: u8, level: u32) -> Option<Box<T>> {
    let mut s = spares.lock().unwrap_or_else(PoisonError::into_inner);
    let i = s.iter().position(|(b, l, _)| (*b, *l) == (bits, level))?;
    Some(s.swap_remove(i).2)
}

/// Keeps a reset state for the next message (or frees it when enough are kept).
fn give_back<T>(spares: &Spares<T>, bits: u8, level: u32, state: Box<T>) {
    let mut s = spares.lock().unwrap_or_else(PoisonError::into_inner);
    if s.len() < MAX_SPARE {
        s.push((bits, level, state));
    }
}

/// Decompresses the messages the peer compressed.
pub(crate) struct Inflater {
    bits: u8,
    reset_each: bool,
    /// Kept between messages only with context takeover.
    state: Option<Box<Decompress>>,
}

impl Inflater {
    /// A decompressor for what was agreed.
    pub(crate) fn new(a: &Agreed) -> Inflater {
        Inflater {
            bits: zlib_bits(a.peers_bits),
            reset_each: a.peers_reset,
            state: None,
        }
    }

    /// Inflates one frame's payload onto `out`, which may not pass `limit` bytes (1009,
    /// found before more than one step past the limit is allocated).
    pub(crate) fn inflate(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: u64,
    ) -> Result<(), Error> {
        let bits = self.bits;
        let d = self.state.get_or_insert_with(|| {
            spare(&SPARE_INFLATERS, bits, 0)
                .unwrap_or_else(|| Box::new(Decompress::new_with_window_bits(false, bits)))
        });
        let mut at = 0;
        loop {
            // Room for the next step, grown by doubling but never past the limit (plus the
            // byte that shows it was passed).
            let room = (limit + 1)
                .saturating_sub(out.len() as u64)
                .min(INFLATE_STEP as u64) as usize;
            if room == 0 {
                return Err(Error::TooBig(limit));
            }
            if out.capacity() - out.len() < room {
                let cap_left = (limit + 1).saturating_sub(out.len() as u64) as usize;
                out.reserve_exact(out.capacity().max(room).min(cap_left));
            }
            let spare = out.capacity() - out.len();
            let (in0, out0) = (d.total_in(), d.total_out());
            let status = d.decompress_vec(&input[at..], out, FlushDecompress::Sync);
            at += (d.total_in() - in0) as usize;
            let produced = (d.total_out() - out0) as usize;
            if out.len() as u64 > limit {
                return Err(Error::TooBig(limit));
            }
            match status {
                Ok(Status::StreamEnd) => return Ok(()),
                Ok(_) if at == input.len() && produced < spare => return Ok(()),
                Ok(_) if produced == 0 && d.total_in() == in0 => {
                    return Err(Error::Protocol("invalid deflate data"))
                }
                Ok(_) => {}
                Err(_) => return Err(Error::Protocol("invalid deflate data")),
            }
        }
    }

    /// Ends a message: inflates the removed tail and restarts the state if agreed.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>, limit: u64) -> Result<(), Error> {
        self.inflate(&TAIL, out, limit)?;
        if self.reset_each {
            if let Some(mut d) = self.state.take() {
                d.reset(false);
                give_back(&SPARE_INFLATERS, self.bits, 0, d);
            }
        }
        Ok(())
    }
}

/// Compresses our messages.
pub(crate) struct Deflater {
    bits: u8,
    level: u32,
    reset_each: bool,
    /// Kept between messages only with context takeover.
    state: Option<Box<Compress>>,
}

impl Deflater {
    /// A compressor for what was agreed.
    pub(crate) fn new(a: &Agreed) -> Deflater {
        Deflater {
            bits: zlib_bits(a.ours_bits),
            level: a.level,
            reset_each: a.ours_reset,
            state: None,
        }
    }

    /// Compresses a whole message onto `out` (without the flush tail).
    pub(crate) fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let (bits, level) = (self.bits, self.level);
        let c = self.state.get_or_insert_with(|| {
            spare(&SPARE_DEFLATERS, bits, level).unwrap_or_else(|| {
                Box::new(Compress::new_with_window_bits(
                    Compression::new(level),
                    false,
                    bits,
                ))
            })
        });
        let start = out.len();
        let mut at = 0;
        loop {
            out.reserve(input.len() - at + 1024);
            let (in0, cap) = (c.total_in(), out.capacity());
            // A sync flush into memory cannot fail.
            let _ = c.compress_vec(&input[at..], out, FlushCompress::Sync);
            at += (c.total_in() - in0) as usize;
            // Room left over: the flush is complete.
            if at == input.len() && out.len() < cap {
                break;
            }
        }
        if out[start..].ends_with(&TAIL) {
            out.truncate(out.len() - TAIL.len());
        }
        // An empty message after a flush produces nothing: an empty stored block (one 0x00
        // byte once the tail is gone, §7.2.3.6) says the same in any state.
        if out.len() == start {
            out.push(0);
        }
        if self.reset_each {
            if let Some(mut c) = self.state.take() {
                c.reset();
                give_back(&SPARE_DEFLATERS, self.bits, self.level, c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agreed(reset: bool, bits: u8) -> Agreed {
        Agreed {
            ours_reset: reset,
            ours_bits: bits,
            peers_reset: reset,
            peers_bits: bits,
            level: 6,
        }
    }

    #[test]
    fn messages_round_trip_with_and_without_context_takeover() {
        for (reset, bits) in [(false, 15), (true, 15), (false, 8), (true, 9)] {
            let a = agreed(reset, bits);
            let (mut d, mut i) = (Deflater::new(&a), Inflater::new(&a));
            for msg in [&b"hello hello hello"[..], b"", &[7u8; 100_000]] {
                let mut z = Vec::new();
                d.compress(msg, &mut z);
                let mut out = Vec::new();
                i.inflate(&z, &mut out, 1 << 20).unwrap();
                i.finish(&mut out, 1 << 20).unwrap();
                assert_eq!(out, msg);
            }
        }
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        let a = agreed(true, 15);
        let mut z = Vec::new();
        Deflater::new(&a).compress(&vec![0u8; 10 << 20], &mut z);
        let mut out = Vec::new();
        let r = Inflater::new(&a).inflate(&z, &mut out, 1000);
        assert!(matches!(r, Err(Error::TooBig(1000))));
        assert!(out.capacity() <= 1001);
    }

    #[test]
    fn offers_are_negotiated_by_the_rfc() {
        let cfg = DeflateConfig::default();
        let (text, a) =
            accept_offer(&cfg, &["permessage-deflate; client_max_window_bits"]).unwrap();
        assert_eq!(text, "permessage-deflate");
        assert_eq!((a.ours_bits, a.peers_bits), (15, 15));
        let (text, a) = accept_offer(
            &cfg,
            &["permessage-deflate; server_max_window_bits=10; client_no_context_takeover"],
        )
        .unwrap();
        assert_eq!(
            text,
            "permessage-deflate; client_no_context_takeover; server_max_window_bits=10"
        );
        assert!(a.peers_reset && !a.ours_reset && a.ours_bits == 10);
        // Bad first offer, good second one.
        let (_, _) = accept_offer(
            &cfg,
            &["permessage-deflate; server_max_window_bits=16, permessage-deflate"],
        )
        .unwrap();
        assert!(accept_offer(&cfg, &["permessage-deflate; foo"]).is_none());
        assert!(accept_offer(&cfg, &["x-webkit-deflate-frame"]).is_none());
        let low = DeflateConfig::low_memory();
        let (text, _) = accept_offer(&low, &["permessage-deflate"]).unwrap();
        assert_eq!(
            text,
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        );
        let a = check_response(&cfg, &[text.as_str()]).unwrap().unwrap();
        assert!(a.ours_reset && a.peers_reset);
    }
}
