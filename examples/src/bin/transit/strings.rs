//! Interned strings: every distinct string once, kept as its JSON literal (quotes and
//! serde_json's escapes included, so serving a field is one copy), named by a `u32` id. While
//! loading, lookups go through a hash map of raw bytes, with two faster paths for the hottest
//! columns: a seconds-indexed table for `HH:MM:SS` times and inline keys for short stop ids.

use std::str::Utf8Error;

use hashbrown::HashMap;

/// A string's id in [`Strings`].
pub type StrId = u32;

/// No string for this time yet.
const NONE: u32 = u32::MAX;

/// Slots of the time table: `HH:MM:SS` with any two-digit hour.
const TIME_SLOTS: usize = 100 * 3600;

/// The string table, read-only once loaded.
#[derive(Default)]
pub struct Strings {
    /// JSON string literals back to back.
    text: Vec<u8>,
    /// `ends[i]`: where string `i` ends in `text` (it starts where string `i - 1` ends).
    ends: Vec<u32>,
}

impl Strings {
    /// String `id` as a JSON literal (quoted and escaped).
    pub fn json(&self, id: StrId) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

/// Builds [`Strings`], one lookup per field.
#[derive(Default)]
pub struct Interner {
    strings: Strings,
    /// Raw bytes → id.
    ids: HashMap<Box<[u8]>, StrId>,
    /// Seconds → id of `HH:MM:SS` times (allocated on first use).
    times: Vec<u32>,
    /// Short stop ids, keys inline (no pointer to follow), consulted before `ids`.
    stop_ids: HashMap<ShortKey, StrId>,
}

impl Interner {
    /// The id of `raw`, adding it (escaped as JSON) when new; fails on invalid UTF-8.
    pub fn intern(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        if let Some(&id) = self.ids.get(raw) {
            return Ok(id);
        }
        let s = std::str::from_utf8(raw)?;
        let text = &mut self.strings.text;
        // serde_json's own escaping; writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *text, s);
        let id = self.strings.ends.len() as StrId;
        self.strings.ends.push(text.len() as u32);
        self.ids.insert(raw.into(), id);
        Ok(id)
    }

    /// The id of time `raw`: a table lookup for the usual `HH:MM:SS`, else [`Interner::intern`].
    pub fn intern_time(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        let Some(slot) = seconds(raw) else {
            return self.intern(raw);
        };
        if self.times.is_empty() {
            self.times = vec![NONE; TIME_SLOTS];
        }
        match self.times[slot] {
            NONE => {
                let id = self.intern(raw)?;
                self.times[slot] = id;
                Ok(id)
            }
            id => Ok(id),
        }
    }

    /// The id of stop id `raw`, through the stop ids' own map when it is short.
    pub fn intern_stop(&mut self, raw: &[u8]) -> Result<StrId, Utf8Error> {
        let Some(key) = ShortKey::new(raw) else {
            return self.intern(raw);
        };
        if let Some(&id) = self.stop_ids.get(&key) {
            return Ok(id);
        }
        let id = self.intern(raw)?;
        self.stop_ids.insert(key, id);
        Ok(id)
    }

    /// The id of `raw` if it was interned.
    pub fn get(&self, raw: &[u8]) -> Option<StrId> {
        self.ids.get(raw).copied()
    }

    /// How many distinct strings so far (ids are below this).
    pub fn len(&self) -> usize {
        self.strings.ends.len()
    }

    /// The table, and each of the strings `wanted` by id, as text.
    pub fn finish(self, wanted: impl Fn(StrId) -> bool) -> (Strings, Vec<(Box<str>, StrId)>) {
        let picked = self
            .ids
            .into_iter()
            .filter(|&(_, id)| wanted(id))
            .map(|(raw, id)| (String::from_utf8_lossy(&raw).into(), id))
            .collect();
        (self.strings, picked)
    }
}

/// A string of up to 15 bytes held inline, zero-padded, its length in the last byte.
#[derive(Hash, PartialEq, Eq)]
struct ShortKey([u8; 16]);

impl ShortKey {
    /// `raw` inline; `None` when it is longer than 15 bytes.
    fn new(raw: &[u8]) -> Option<ShortKey> {
        let mut key = [0; 16];
        key.get_mut(..raw.len())?.copy_from_slice(raw);
        key[15] = u8::try_from(raw.len()).ok().filter(|&n| n < 16)?;
        Some(ShortKey(key))
    }
}

/// `HH:MM:SS` (two-digit fields, minutes and seconds below 60) as seconds; `None` for any
/// other text, so that each slot stands for one spelling.
fn seconds(raw: &[u8]) -> Option<usize> {
    let &[h1, h2, b':', m1, m2, b':', s1, s2] = raw else {
        return None;
    };
    let d = |c: u8| c.is_ascii_digit().then(|| usize::from(c - b'0'));
    let (h, m, s) = (
        d(h1)? * 10 + d(h2)?,
        d(m1)? * 10 + d(m2)?,
        d(s1)? * 10 + d(s2)?,
    );
    (m < 60 && s < 60).then_some(h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_literals_are_serde_jsons() {
        let mut i = Interner::default();
        let odd = ["", "a\"b\\c", "tab\t\u{1}\u{7f}", "é→/", "25:13:00", "12"];
        let ids: Vec<StrId> = odd
            .iter()
            .map(|s| i.intern(s.as_bytes()).unwrap())
            .collect();
        assert_eq!(i.intern_time(b"25:13:00").unwrap(), ids[4]);
        assert_eq!(i.intern_stop(b"12").unwrap(), ids[5]);
        assert_eq!(i.intern(b"a\"b\\c").unwrap(), ids[1]);
        assert_eq!(i.len(), odd.len());
        assert!(i.intern(b"\xff").is_err());
        let (strings, _) = i.finish(|_| false);
        for (s, id) in odd.iter().zip(ids) {
            assert_eq!(strings.json(id), serde_json::to_vec(s).unwrap().as_slice());
        }
    }

    #[test]
    fn times_and_short_keys() {
        assert_eq!(seconds(b"25:13:07"), Some(25 * 3600 + 13 * 60 + 7));
        assert_eq!(seconds(b"00:00:00"), Some(0));
        assert_eq!(seconds(b"1:00:00"), None);
        assert_eq!(seconds(b"01:60:00"), None);
        assert_eq!(seconds(b"01:00:0x"), None);
        let mut i = Interner::default();
        let (a, b) = (
            i.intern_time(b"7:00:00").unwrap(),
            i.intern_time(b"07:00:00").unwrap(),
        );
        assert_ne!(a, b);
        assert!(ShortKey::new(b"fifteen bytes!!").is_some());
        assert!(ShortKey::new(b"sixteen bytes!!!").is_none());
        assert!(ShortKey::new(b"a") != ShortKey::new(b"a\0"));
        let long = i.intern_stop(b"a-stop-id-longer-than-fifteen").unwrap();
        assert_eq!(i.get(b"a-stop-id-longer-than-fifteen"), Some(long));
    }
}
