//! A span of a file as receipts record it: its path, its lines, the hash
//! of the whole file and an excerpt, so a quote can be found again and a
//! changed file noticed.

use super::hash::sha256_hex;
use serde::{Deserialize, Serialize};

use crate::index::SourceFile;
use crate::text::TextRange;

/// A span of a file a tool read, as receipts record it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRef {
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// sha256 of the whole file's text, lowercase hex.
    pub sha256: String,
    /// The span's text, at most [`EXCERPT_CHARS`] characters: a strict prefix,
    /// never with an ellipsis added, so a quote of it can be found again.
    pub excerpt: String,
}

/// The longest excerpt a file reference keeps.
pub const EXCERPT_CHARS: usize = 200;

impl FileRef {
    /// The whole file.
    pub fn whole(file: &SourceFile) -> FileRef {
        FileRef::span(file, TextRange::new(0, file.text.len()))
    }

    /// The lines `range` covers.
    pub fn span(file: &SourceFile, range: TextRange) -> FileRef {
        let text = &*file.text;
        let start_line = file.line_index.line_of(range.start) + 1;
        let end_line = file
            .line_index
            .line_of(range.end.saturating_sub(1).max(range.start))
            + 1;
        FileRef {
            path: file.path.to_string(),
            start_line,
            end_line,
            sha256: sha256_hex(text.as_bytes()),
            excerpt: excerpt(&text[range.start..range.end]),
        }
    }
}

/// At most [`EXCERPT_CHARS`] characters of `text`, cut at a character boundary.
pub fn excerpt(text: &str) -> String {
    text.chars().take(EXCERPT_CHARS).collect()
}
