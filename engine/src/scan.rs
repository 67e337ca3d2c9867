//! Scanning bytes eight at a time (the hot loops over every input line).

const LO: u64 = 0x0101_0101_0101_0101;
const SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each byte of `x` that is zero, and only those (no borrow between bytes).
fn zero_bytes(x: u64) -> u64 {
    !(((x & SEVEN).wrapping_add(SEVEN)) | x | SEVEN)
}

fn word(chunk: &[u8]) -> u64 {
    u64::from_le_bytes(chunk.try_into().expect("8 bytes"))
}

/// The index of the first `needle` in `bytes`.
pub(crate) fn find(bytes: &[u8], needle: u8) -> Option<usize> {
    let pattern = LO * u64::from(needle);
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in chunks.by_ref() {
        let found = zero_bytes(word(chunk) ^ pattern);
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|i| at + i)
}

/// How many bytes of `bytes` are `a` or `b`.
pub(crate) fn count_either(bytes: &[u8], a: u8, b: u8) -> usize {
    let (pa, pb) = (LO * u64::from(a), LO * u64::from(b));
    let mut chunks = bytes.chunks_exact(8);
    let mut count = 0;
    for chunk in chunks.by_ref() {
        let x = word(chunk);
        count += (zero_bytes(x ^ pa) | zero_bytes(x ^ pb)).count_ones() as usize;
    }
    count
        + chunks
            .remainder()
            .iter()
            .filter(|&&c| c == a || c == b)
            .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_and_count_agree_with_the_plain_loops() {
        let text: Vec<u8> = (0..300u32).map(|i| (i * 7 % 97 + 10) as u8).collect();
        for needle in [b'\n', b'[', b'{', 10, 106, 0, 255] {
            for start in 0..20 {
                let hay = &text[start..];
                assert_eq!(find(hay, needle), hay.iter().position(|&b| b == needle));
                let plain = hay.iter().filter(|&&c| c == needle || c == b'{').count();
                assert_eq!(count_either(hay, needle, b'{'), plain);
            }
        }
        assert_eq!(find(b"", b'\n'), None);
        assert_eq!(find(b"\x0a\x00\x80\xff", 0x80), Some(2));
    }
}
