//! What reading a front matter field gives: a value with where it was
//! written, or a problem at the value. Shared by the scene and card model
//! and the readers of its parts (`tracks`).

use crate::text::TextRange;

/// A piece of text from a file with where it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spanned {
    pub text: String,
    pub range: TextRange,
}

/// A front matter value that could not be used, at the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldProblem {
    pub range: TextRange,
    pub message: String,
}
