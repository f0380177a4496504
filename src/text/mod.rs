//! Text positions: byte ranges, the line index, and UTF-8/UTF-16 columns.
//!
//! The core speaks byte offsets into a file's UTF-8 text. Lines and columns are
//! computed only at the edges (the CLI renderer and the LSP adapter) through a
//! [`LineIndex`], which is built once per text and answers in O(log lines).

pub mod json_pointer;
mod line_index;
mod range;

pub use line_index::{LineCol, LineIndex, PositionEncoding};
pub use range::{TextRange, apply_edits};
