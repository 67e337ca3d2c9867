//! Cuts a byte stream into lines for the relay, passing on as it came what the relay does
//! not take.

/// The longest line the relay reads (1 MiB): a longer one goes to the driver as it came
/// (whose own limit then applies).
pub(crate) const MAX_RELAYED_LINE: usize = 1 << 20;

/// A stream being cut into lines.
#[derive(Default)]
pub(crate) struct Splitter {
    /// The start of a line whose end has not come.
    partial: Vec<u8>,
    /// Within a line too long for the relay: passed on up to its end.
    passing: bool,
}

impl Splitter {
    /// Feeds `chunk`: each complete line (without its `\n`) is offered to `take`; the lines
    /// it refuses, with their `\n`, and lines too long to offer, go to `rest` unchanged.
    pub fn push(
        &mut self,
        mut chunk: &[u8],
        rest: &mut Vec<u8>,
        mut take: impl FnMut(&[u8]) -> bool,
    ) {
        if self.passing {
            let Some(end) = newline(chunk) else {
                rest.extend_from_slice(chunk);
                return;
            };
            rest.extend_from_slice(&chunk[..=end]);
            chunk = &chunk[end + 1..];
            self.passing = false;
        }
        while let Some(end) = newline(chunk) {
            if self.partial.is_empty() {
                if !take(&chunk[..end]) {
                    rest.extend_from_slice(&chunk[..=end]);
                }
            } else {
                self.partial.extend_from_slice(&chunk[..end]);
                if !take(&self.partial) {
                    rest.extend_from_slice(&self.partial);
                    rest.push(b'\n');
                }
                self.partial.clear();
            }
            chunk = &chunk[end + 1..];
        }
        if self.partial.len() + chunk.len() > MAX_RELAYED_LINE {
            rest.append(&mut self.partial);
            rest.extend_from_slice(chunk);
            self.passing = true;
        } else {
            self.partial.extend_from_slice(chunk);
        }
    }

    /// The end of the stream: a last line without its `\n` goes to `rest`.
    pub fn finish(&mut self, rest: &mut Vec<u8>) {
        rest.append(&mut self.partial);
        self.passing = false;
    }
}

fn newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks`, taking the lines that start with `t`; (taken, rest).
    fn split(chunks: &[&[u8]]) -> (Vec<String>, String) {
        let (mut taken, mut rest, mut splitter) = (Vec::new(), Vec::new(), Splitter::default());
        for chunk in chunks {
            splitter.push(chunk, &mut rest, |line| {
                let take = line.starts_with(b"t");
                if take {
                    taken.push(String::from_utf8_lossy(line).into_owned());
                }
                take
            });
        }
        splitter.finish(&mut rest);
        (taken, String::from_utf8(rest).unwrap())
    }

    #[test]
    fn lines_split_across_chunks_are_offered_whole_and_the_rest_passes_unchanged() {
        let (taken, rest) = split(&[b"t1\nd1\r\n\nt", b"2\nd", b"2\nd3"]);
        assert_eq!(taken, ["t1", "t2"]);
        assert_eq!(rest, "d1\r\n\nd2\nd3");
    }

    #[test]
    fn a_line_too_long_for_the_relay_passes_unchanged_and_the_next_is_offered() {
        let long = vec![b't'; MAX_RELAYED_LINE + 1];
        let (taken, rest) = split(&[&long[..10], &long[10..], b"t\nt2\n"]);
        assert_eq!(taken, ["t2"]);
        assert_eq!(rest.len(), MAX_RELAYED_LINE + 3);
        assert!(rest.ends_with("tt\n"));
    }
}
