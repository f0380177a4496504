//! A half-open byte range into a file's text.

use std::fmt;

/// A half-open range `start..end` of byte offsets into a UTF-8 text.
///
/// Both ends always fall on `char` boundaries of the text they were made from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
}

impl TextRange {
    pub const fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end);
        Self { start, end }
    }

    pub const fn empty(offset: usize) -> Self {
        Self::new(offset, offset)
    }

    pub const fn len(self) -> usize {
        self.end - self.start
    }

    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// Whether `offset` lies inside the range; the end counts, so a cursor
    /// just after a word still "touches" it.
    pub const fn touches(self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }

    pub const fn contains_range(self, other: TextRange) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    pub const fn intersects(self, other: TextRange) -> bool {
        self.start < other.end && other.start < self.end
    }

    /// The range moved right by `delta` bytes.
    pub const fn shifted(self, delta: usize) -> Self {
        Self::new(self.start + delta, self.end + delta)
    }

    pub fn slice(self, text: &str) -> &str {
        &text[self.start..self.end]
    }
}

impl From<std::ops::Range<usize>> for TextRange {
    fn from(range: std::ops::Range<usize>) -> Self {
        Self::new(range.start, range.end)
    }
}

impl fmt::Debug for TextRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// `text` with each range replaced by its text; the ranges are in order and
/// do not overlap.
pub fn apply_edits(text: &str, edits: &[(TextRange, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, replacement) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(replacement);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}
