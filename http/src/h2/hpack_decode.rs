//! HPACK header block decoding (RFC 7541 §2–6): integers, string literals (Huffman through
//! `huffman.rs`), the static table and a dynamic table bounded by the server's
//! SETTINGS_HEADER_TABLE_SIZE. Fields go to a callback as slices (into the table or into two
//! scratch buffers kept across blocks): decoding a block allocates only for entries it adds to
//! the dynamic table.

use std::collections::VecDeque;

use super::hpack::STATIC_NAMES;
use super::huffman;

/// Bytes an entry costs in the dynamic table besides its name and value (§4.1).
const ENTRY_OVERHEAD: usize = 32;
/// Largest integer taken (a string length or an index past it is an error anyway).
const MAX_INT: usize = 1 << 24;

/// A block that is not valid HPACK (a COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BadBlock;

/// The decoder of one connection's header blocks.
pub(super) struct FieldDecoder {
    table: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// Bytes in `table` (§4.1).
    size: usize,
    /// The table's current limit, set by the peer's size updates.
    max_size: usize,
    /// What the server's setting allows the limit to be.
    allowed: usize,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl FieldDecoder {
    /// A decoder whose dynamic table holds at most `allowed` bytes.
    pub(super) fn new(allowed: usize) -> FieldDecoder {
        FieldDecoder {
            table: VecDeque::new(),
            size: 0,
            max_size: allowed,
            allowed,
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Decodes `block`, calling `field` with each name and value in order.
    pub(super) fn decode(
        &mut self,
        mut block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), BadBlock> {
        let mut first = true;
        while let Some(&b) = block.first() {
            if b & 0x80 != 0 {
                // Indexed field (§6.1).
                let i = int(&mut block, 7)?;
                let (n, v) = entry(&self.table, i)?;
                field(n, v);
            } else if b & 0x40 != 0 {
                // Literal with incremental indexing (§6.2.1).
                self.literal(&mut block, 6)?;
                field(&self.name, &self.value);
                self.insert();
            } else if b & 0x20 != 0 {
                // Dynamic table size update (§6.3): only at the start of a block (§4.2).
                let size = int(&mut block, 5)?;
                if !first || size > self.allowed {
                    return Err(BadBlock);
                }
                self.max_size = size;
                self.evict(0);
                continue;
            } else {
                // Literal without indexing or never indexed (§6.2.2, §6.2.3).
                self.literal(&mut block, 4)?;
                field(&self.name, &self.value);
            }
            first = false;
        }
        Ok(())
    }

    /// Reads a literal field whose name index has a `prefix`-bit prefix into `name`, `value`.
    fn literal(&mut self, block: &mut &[u8], prefix: u8) -> Result<(), BadBlock> {
        let i = int(block, prefix)?;
        if i == 0 {
            string(block, &mut self.name)?;
        } else {
            let (n, _) = entry(&self.table, i)?;
            self.name.clear();
            self.name.extend_from_slice(n);
        }
        string(block, &mut self.value)
    }

    /// Adds the last literal to the dynamic table, evicting the oldest entries (§4.4).
    fn insert(&mut self) {
        let cost = self.name.len() + self.value.len() + ENTRY_OVERHEAD;
        if cost > self.max_size {
            self.table.clear();
            self.size = 0;
            return;
        }
        self.evict(cost);
        self.size += cost;
        self.table
            .push_front((self.name.clone(), self.value.clone()));
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            match self.table.pop_back() {
                Some((n, v)) => self.size -= n.len() + v.len() + ENTRY_OVERHEAD,
                None => break,
            }
        }
    }
}

/// Entry `i` of the static then the dynamic table (§2.3.3).
fn entry(table: &VecDeque<(Vec<u8>, Vec<u8>)>, i: usize) -> Result<(&[u8], &[u8]), BadBlock> {
    match i {
        0 => Err(BadBlock),
        1..=61 => Ok((STATIC_NAMES[i - 1].as_bytes(), static_value(i))),
        _ => table
            .get(i - 62)
            .map(|(n, v)| (n.as_slice(), v.as_slice()))
            .ok_or(BadBlock),
    }
}

/// The value of static entry `i` (empty for most).
fn static_value(i: usize) -> &'static [u8] {
    match i {
        2 => b"GET",
        3 => b"POST",
        4 => b"/",
        5 => b"/index.html",
        6 => b"http",
        7 => b"https",
        8 => b"200",
        9 => b"204",
        10 => b"206",
        11 => b"304",
        12 => b"400",
        13 => b"404",
        14 => b"500",
        16 => b"gzip, deflate",
        _ => b"",
    }
}

/// Reads an integer with a `prefix`-bit prefix (§5.1).
fn int(block: &mut &[u8], prefix: u8) -> Result<usize, BadBlock> {
    let (&first, mut rest) = block.split_first().ok_or(BadBlock)?;
    let max = (1usize << prefix) - 1;
    let mut v = usize::from(first) & max;
    if v == max {
        let mut shift = 0;
        loop {
            let (&b, r) = rest.split_first().ok_or(BadBlock)?;
            rest = r;
            v += usize::from(b & 0x7f) << shift;
            if v > MAX_INT {
                return Err(BadBlock);
            }
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
    }
    *block = rest;
    Ok(v)
}

/// Reads a string literal (§5.2) into `out`.
fn string(block: &mut &[u8], out: &mut Vec<u8>) -> Result<(), BadBlock> {
    let huffman = block.first().is_some_and(|b| b & 0x80 != 0);
    let len = int(block, 7)?;
    if len > block.len() {
        return Err(BadBlock);
    }
    let (s, rest) = block.split_at(len);
    *block = rest;
    out.clear();
    if huffman {
        huffman::decode(s, out).map_err(|_| BadBlock)
    } else {
        out.extend_from_slice(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(d: &mut FieldDecoder, block: &[u8]) -> Result<Vec<(String, String)>, BadBlock> {
        let mut got = Vec::new();
        d.decode(block, |n, v| {
            got.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })?;
        Ok(got)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn rfc7541_appendix_c4_requests_with_huffman() {
        let mut d = FieldDecoder::new(4096);
        let c41 = [
            0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab,
            0x90, 0xf4, 0xff,
        ];
        let c42 = [
            0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf,
        ];
        let c43 = [
            0x82, 0x87, 0x85, 0xbf, 0x40, 0x88, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f,
            0x89, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf,
        ];
        let base = [(":method", "GET"), (":scheme", "http"), (":path", "/")];
        let mut want = pairs(&base);
        want.push((":authority".into(), "www.example.com".into()));
        assert_eq!(fields(&mut d, &c41).unwrap(), want);
        want.push(("cache-control".into(), "no-cache".into()));
        assert_eq!(fields(&mut d, &c42).unwrap(), want);
        let third = pairs(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ]);
        assert_eq!(fields(&mut d, &c43).unwrap(), third);
        // Three entries: 54 + 53 + 57 bytes (C.4.3's table).
        assert_eq!((d.table.len(), d.size), (3, 164));
    }

    #[test]
    fn rfc7541_appendix_c5_eviction_with_a_256_byte_table() {
        let mut d = FieldDecoder::new(256);
        let c51: &[u8] = &[
            0x48, 0x03, 0x33, 0x30, 0x32, 0x58, 0x07, 0x70, 0x72, 0x69, 0x76, 0x61, 0x74, 0x65,
            0x61, 0x1d, 0x4d, 0x6f, 0x6e, 0x2c, 0x20, 0x32, 0x31, 0x20, 0x4f, 0x63, 0x74, 0x20,
            0x32, 0x30, 0x31, 0x33, 0x20, 0x32, 0x30, 0x3a, 0x31, 0x33, 0x3a, 0x32, 0x31, 0x20,
            0x47, 0x4d, 0x54, 0x6e, 0x17, 0x68, 0x74, 0x74, 0x70, 0x73, 0x3a, 0x2f, 0x2f, 0x77,
            0x77, 0x77, 0x2e, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2e, 0x63, 0x6f, 0x6d,
        ];
        let c52: &[u8] = &[0x48, 0x03, 0x33, 0x30, 0x37, 0xc1, 0xc0, 0xbf];
        fields(&mut d, c51).unwrap();
        assert_eq!(d.size, 222);
        let got = fields(&mut d, c52).unwrap();
        assert_eq!(got[0], (":status".into(), "307".into()));
        assert_eq!(
            got[3],
            ("location".into(), "https://www.example.com".into())
        );
        assert_eq!((d.table.len(), d.size), (4, 222));
    }

    #[test]
    fn size_updates_are_bounded_and_only_at_the_start() {
        let mut d = FieldDecoder::new(4096);
        // 0x3f 0xe1 0x1f: size 4096, allowed; 4097 is not.
        assert!(fields(&mut d, &[0x3f, 0xe1, 0x1f, 0x82]).is_ok());
        assert_eq!(fields(&mut d, &[0x3f, 0xe2, 0x1f]), Err(BadBlock));
        // After a field: refused (§4.2).
        assert_eq!(fields(&mut d, &[0x82, 0x20]), Err(BadBlock));
        // Size 0 empties the table.
        fields(&mut d, &[0x40, 1, b'a', 1, b'b']).unwrap();
        assert_eq!(d.table.len(), 1);
        fields(&mut d, &[0x20]).unwrap();
        assert_eq!((d.table.len(), d.size), (0, 0));
    }

    #[test]
    fn bad_blocks_are_refused() {
        let mut d = FieldDecoder::new(4096);
        for bad in [
            &[0x80][..],                           // index 0
            &[0xbe],                               // index 62, empty table
            &[0x04, 0x05, b'a'],                   // string shorter than its length
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff], // integer overflow
            &[0x00, 0x81, 0xff, 0x00],             // bad Huffman padding
            &[0x0f],                               // integer cut short
        ] {
            assert_eq!(fields(&mut d, bad), Err(BadBlock), "{bad:02x?}");
        }
    }
}
