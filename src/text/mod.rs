//! Text positions: byte ranges, the line index, and UTF-8/UTF-16 columns.
//!
//! The core speaks byte offsets into a file's UTF-8 text. Lines and columns are
//! computed only at the edges (the CLI renderer and the LSP adapter) through a
//! [`LineIndex`], which is built once per text and answers in O(log lines).
//!
//! ## Parts
//!
//! byte ranges, the line index, UTF-8/16/32 columns, `apply_edits`; `line_memo` what a check
//! read of each line (or sentence) of the scene being typed in, from its last reading only, by
//! its text and a key of all else the reading reads, kept in the text's order and looked up
//! where the last reading went on (texts compared, none hashed; an index by hash only once
//! lines in a row are new: a paste, a long cut). The core speaks byte offsets; columns exist
//! only at the edges (`cli::check`, `lsp::convert`).

pub mod json_pointer;
mod line_index;
pub mod line_memo;
mod range;

pub use line_index::{LineCol, LineIndex, PositionEncoding, floor_char_boundary};
pub use range::{TextRange, apply_edits};

/// `text` fit for a terminal: control characters other than newline and
/// tab (a NUL from a garbage model reply, an escape sequence) shown as
/// `\u{..}` instead of sent to the terminal.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() && c != '\n' && c != '\t' {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// The English words for the numbers one to twenty, in order.
const NUMBER_WORDS: [&str; 20] = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

/// The number a word says, from one to twenty ("Seven" is 7), in any case.
pub fn number_word(word: &str) -> Option<u32> {
    NUMBER_WORDS
        .iter()
        .position(|number| number.eq_ignore_ascii_case(word))
        .map(|at| at as u32 + 1)
}

/// The first `chars` characters of `text` (all of it when shorter), cut
/// on a character boundary.
pub fn clip(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// `12345` → `12,345`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_number_word_is_its_number_in_any_case() {
        assert_eq!(super::number_word("Seven"), Some(7));
        assert_eq!(super::number_word("twenty"), Some(20));
        assert_eq!(super::number_word("seventy"), None);
    }

    #[test]
    fn clip_cuts_on_a_character_boundary() {
        assert_eq!(super::clip("ésprit", 2), "és");
        assert_eq!(super::clip("short", 99), "short");
    }

    #[test]
    fn printable_escapes_control_characters_but_keeps_lines_and_tabs() {
        assert_eq!(super::printable("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            super::printable("\u{0}x\u{1b}[2J\u{7}"),
            "\\u{0}x\\u{1b}[2J\\u{7}"
        );
    }
}
