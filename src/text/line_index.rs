//! Conversion between byte offsets and (line, column) positions.

use super::TextRange;

/// How the columns of a [`LineCol`] are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units, the LSP default.
    Utf16,
    /// Unicode scalar values (what a human counts in a terminal, roughly).
    Utf32,
}

impl PositionEncoding {
    /// How many columns `text` takes. Counted over its bytes, not its
    /// chars: a byte that starts a char is a unit in UTF-16 and UTF-32, a
    /// four-byte char's first byte one more in UTF-16 (its surrogate pair).
    /// A reference's answer converts thousands of positions in long lines.
    pub fn width(self, text: &str) -> usize {
        let bytes = text.as_bytes();
        match self {
            PositionEncoding::Utf8 => bytes.len(),
            _ if bytes.is_ascii() => bytes.len(),
            PositionEncoding::Utf16 => count_bytes(bytes, |byte| {
                u8::from((byte as i8) >= -0x40) + u8::from(byte >= 0xF0)
            }),
            PositionEncoding::Utf32 => count_bytes(bytes, |byte| u8::from((byte as i8) >= -0x40)),
        }
    }
}

/// The sum of `units` over `bytes`, each at most 2: summed in bytes, 127 at
/// a time, which the compiler turns into wide vector adds (prose has curly
/// quotes, so a line is seldom ASCII).
fn count_bytes(bytes: &[u8], units: impl Fn(u8) -> u8) -> usize {
    bytes
        .chunks(127)
        .map(|chunk| {
            usize::from(
                chunk
                    .iter()
                    .fold(0u8, |sum, &byte| sum.wrapping_add(units(byte))),
            )
        })
        .sum()
}

/// A 0-based line and a 0-based column in some [`PositionEncoding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// The start offset of every line of a text, for offset <-> position conversion.
///
/// Lines end at `\n`; a `\r` before it belongs to the line's content as far as
/// columns go, which is what editors expect for CRLF files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = Vec::with_capacity(text.len() / 48 + 1);
        line_starts.push(0);
        line_starts.extend(
            memchr::memchr_iter(b'\n', text.as_bytes()).map(|newline| (newline + 1) as u32),
        );
        // Kept as long as the file: prose of a paragraph a line leaves most
        // of the room guessed for lines of 48 bytes unused.
        line_starts.shrink_to_fit();
        Self {
            line_starts,
            len: text.len() as u32,
        }
    }

    /// Reads one line start of every cache line the index takes, each read
    /// independent of the others, so that the core has them all in flight
    /// at once rather than one after another as a search would (see
    /// [`LineIndex::line_of`]); the answer is only there to be used.
    pub fn fetch(&self) -> u32 {
        self.line_starts
            .iter()
            .step_by(16)
            .fold(0, |sum, &start| sum ^ start)
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The byte range of line `line` without its line break, or `None` past the end.
    pub fn line_range(&self, line: u32, text: &str) -> Option<TextRange> {
        let start = *self.line_starts.get(line as usize)? as usize;
        let mut end = self
            .line_starts
            .get(line as usize + 1)
            .map_or(self.len as usize, |&next| next as usize);
        let bytes = text.as_bytes();
        if end > start && bytes.get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Some(TextRange::new(start, end))
    }

    /// The line holding `offset` (an offset at a line break belongs to the line it ends).
    pub fn line_of(&self, offset: usize) -> u32 {
        let offset = offset.min(self.len as usize) as u32;
        (self.line_starts.partition_point(|&start| start <= offset) - 1) as u32
    }

    /// [`LineIndex::line_of`] for an offset known to lie on line `from` or
    /// after it: a search of the lines from there.
    pub fn line_of_from(&self, offset: usize, from: u32) -> u32 {
        let offset = offset.min(self.len as usize) as u32;
        let after = self.line_starts.get(from as usize..).unwrap_or_default();
        (from as usize + after.partition_point(|&start| start <= offset)).saturating_sub(1) as u32
    }

    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.line_starts
            .get(line as usize)
            .map(|&start| start as usize)
    }

    /// The position of byte `offset` in `text`, with columns in `encoding`.
    pub fn position(&self, text: &str, offset: usize, encoding: PositionEncoding) -> LineCol {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let line_start = self.line_starts[line as usize] as usize;
        let col = encoding.width(&text[line_start..offset]);
        LineCol {
            line,
            col: col as u32,
        }
    }

    /// The byte offset of a position. Positions past the end of a line clamp to
    /// the line's end and lines past the end clamp to the end of the text, as the
    /// LSP specification asks; a column inside a UTF-16 surrogate pair rounds down.
    pub fn offset(&self, text: &str, position: LineCol, encoding: PositionEncoding) -> usize {
        let Some(line) = self.line_range(position.line, text) else {
            return text.len();
        };
        let line_text = line.slice(text);
        let wanted = position.col as usize;
        let mut units = 0;
        for (byte, ch) in line_text.char_indices() {
            let width = match encoding {
                PositionEncoding::Utf8 => ch.len_utf8(),
                PositionEncoding::Utf16 => ch.len_utf16(),
                PositionEncoding::Utf32 => 1,
            };
            if units + width > wanted {
                return line.start + byte;
            }
            units += width;
        }
        line.end
    }
}

/// `offset` moved back to the start of the character it falls in.
pub fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_width_counted_over_bytes_is_the_width_counted_over_chars() {
        // Long ones too: the bytes are counted 127 at a time.
        let quotes = "“Iria,” she said — naïve. ".repeat(40);
        let clefs = "𝄞".repeat(300);
        let mixed = format!("{quotes}{clefs}plain{quotes}");
        for text in [
            "",
            "plain",
            "naïve — “Iria”",
            "𝄞 and 🙂",
            "é\u{301}",
            "\r\t\0",
            &quotes,
            &clefs,
            &mixed,
        ] {
            assert_eq!(PositionEncoding::Utf8.width(text), text.len(), "{text}");
            assert_eq!(
                PositionEncoding::Utf16.width(text),
                text.chars().map(char::len_utf16).sum::<usize>(),
                "{text}"
            );
            assert_eq!(
                PositionEncoding::Utf32.width(text),
                text.chars().count(),
                "{text}"
            );
        }
    }

    #[test]
    fn utf16_columns_count_surrogate_pairs() {
        let text = "a😀b\nsecond";
        let index = LineIndex::new(text);
        let b = text.find('b').unwrap();
        assert_eq!(
            index.position(text, b, PositionEncoding::Utf16),
            LineCol { line: 0, col: 3 }
        );
        assert_eq!(
            index.position(text, b, PositionEncoding::Utf8),
            LineCol { line: 0, col: 5 }
        );
        assert_eq!(
            index.offset(text, LineCol { line: 0, col: 3 }, PositionEncoding::Utf16),
            b
        );
        let second = text.find("second").unwrap();
        assert_eq!(
            index.offset(text, LineCol { line: 1, col: 0 }, PositionEncoding::Utf16),
            second
        );
    }

    #[test]
    fn positions_past_the_end_clamp() {
        let text = "one\r\ntwo";
        let index = LineIndex::new(text);
        assert_eq!(
            index.offset(text, LineCol { line: 0, col: 99 }, PositionEncoding::Utf16),
            3
        );
        assert_eq!(
            index.offset(text, LineCol { line: 7, col: 0 }, PositionEncoding::Utf16),
            text.len()
        );
        assert_eq!(index.line_range(1, text), Some(TextRange::new(5, 8)));
    }

    #[test]
    fn round_trips_every_char_boundary() {
        let text = "Kael’s “grey” eyes\n\nIria 🜂 said.\n";
        let index = LineIndex::new(text);
        for (offset, _) in text.char_indices() {
            for encoding in [
                PositionEncoding::Utf8,
                PositionEncoding::Utf16,
                PositionEncoding::Utf32,
            ] {
                let position = index.position(text, offset, encoding);
                assert_eq!(
                    index.offset(text, position, encoding),
                    offset,
                    "{encoding:?} at {offset}"
                );
            }
        }
    }
}
