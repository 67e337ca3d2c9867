//! A deterministic reader over fuzz input: every decision a body makes comes from here.
//!
//! Each method returns `None` once the bytes run out, so a body ends its run cleanly with
//! `?` instead of padding with defaults. The same bytes always give the same decisions.

/// Decisions drawn from a byte slice, front to back.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// Whether every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// One byte.
    pub fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(b)
    }

    /// Two bytes, little-endian.
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.u8()?, self.u8()?]))
    }

    /// Four bytes, little-endian.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes([
            self.u8()?,
            self.u8()?,
            self.u8()?,
            self.u8()?,
        ]))
    }

    /// Eight bytes, little-endian.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from(self.u32()?) | (u64::from(self.u32()?) << 32))
    }

    /// A coin flip.
    pub fn bool(&mut self) -> Option<bool> {
        Some(self.u8()? & 1 == 1)
    }

    /// `true` with probability about `1 / n` (never for `n == 0`).
    pub fn one_in(&mut self, n: u8) -> Option<bool> {
        Some(n != 0 && self.u8()? % n == 0)
    }

    /// An index below `n` (`n` must be at least 1 and at most 256).
    pub fn below(&mut self, n: usize) -> Option<usize> {
        debug_assert!((1..=256).contains(&n));
        Some(usize::from(self.u8()?) % n)
    }

    /// A larger index below `n` (`n` at least 1).
    pub fn index(&mut self, n: usize) -> Option<usize> {
        debug_assert!(n >= 1);
        Some(self.u32()? as usize % n)
    }

    /// One element of a non-empty slice.
    pub fn pick<'s, T>(&mut self, items: &'s [T]) -> Option<&'s T> {
        items.get(self.index(items.len())?)
    }

    /// Up to `max` raw bytes (fewer when the input runs short; the length comes first).
    pub fn bytes(&mut self, max: usize) -> Option<&'a [u8]> {
        let want = self.u16()? as usize % (max + 1);
        let take = want.min(self.bytes.len());
        let (head, rest) = self.bytes.split_at(take);
        self.bytes = rest;
        Some(head)
    }

    /// Every byte not yet consumed.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }

    /// A short string over a small alphabet that collides often (ids, names, messages).
    pub fn word(&mut self) -> Option<String> {
        const ALPHABET: &[u8] = b"ab01-_ \"\\\xc3\xa9";
        let len = self.below(6)?;
        let mut out = Vec::with_capacity(len);
        for _ in 0..len {
            out.push(ALPHABET[self.below(ALPHABET.len() - 2)?]);
        }
        if self.one_in(16)? {
            out.extend_from_slice("é".as_bytes());
        }
        Some(String::from_utf8(out).expect("ASCII alphabet plus é"))
    }
}

#[cfg(test)]
mod tests {
    use super::Reader;

    #[test]
    fn running_out_ends_cleanly() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u16(), Some(0x0201));
        assert_eq!(r.u16(), None);
        assert!(r.is_empty());
        assert_eq!(r.u8(), None);
    }

    #[test]
    fn bytes_are_bounded_by_max_and_input() {
        // Length 9 wraps below max + 1 (9 % 5 = 4), then the input has only 3 bytes left.
        let data = [9, 0, 7, 7, 7];
        let mut r = Reader::new(&data);
        assert_eq!(r.bytes(4), Some(&[7u8, 7, 7][..]));
        assert!(r.is_empty());
    }
}
