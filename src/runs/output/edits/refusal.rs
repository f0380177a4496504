//! Why a proposed edit is not made: each reason a kind of its own, with what
//! it names, and its sentence for the writer (the report's "not made").

use super::locate::MIN_QUOTE_CHARS;

/// Why a proposed edit is not made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("it gives neither `find` and `replace`, `after` and `insert`, nor `field` and `value`")]
    Shapeless,
    #[error(
        "its quote “{quote}” is shorter than {MIN_QUOTE_CHARS} characters, too short to name one place"
    )]
    QuoteTooShort { quote: String },
    #[error("its quote “{quote}” is not in the file as it is now")]
    QuoteNotFound { quote: String },
    #[error("its quote “{quote}” is in the file {times} times, so it names no one place")]
    QuoteAmbiguous { quote: String, times: usize },
    #[error("its quote is in the front matter, not the prose")]
    QuoteInFrontMatter,
    #[error("it inserts nothing")]
    InsertsNothing,
    #[error("it would break the front matter")]
    BreaksFrontMatter,
    #[error("it overlaps another edit of the same passage")]
    Overlaps,
    #[error("`{field}` is not a front matter field name")]
    NotAFieldName { field: String },
    #[error("the value of `{field}` is not a text, a number, a yes/no or a list of texts")]
    NotAFieldValue { field: String },
    #[error("the file has no front matter to set a field in")]
    NoFrontMatter,
    #[error("`{field}` cannot be set to {value} safely")]
    FieldUnsafe { field: String, value: String },
    #[error("it names no file and the run has no scene")]
    NoFileAndNoScene,
    #[error("it names no file and the manuscript has no outline")]
    NoFileAndNoOutline,
    #[error("it names no file")]
    NoFile,
    #[error("`{path}` is outside the manuscript")]
    Outside { path: String },
    #[error("`{path}` is not a file of the manuscript")]
    NotInManuscript { path: String },
    /// The file is not one the step's prompt type may change (`what`: "a
    /// canon card", "the outline"…).
    #[error("`{path}` is not {what}, which this step may change")]
    OutOfReach { path: String, what: &'static str },
    #[error("{path} cannot be read")]
    Unreadable { path: String },
    #[error("{path} changed while the run worked")]
    ChangedMeanwhile { path: String },
    #[error("{path} cannot be written ({why})")]
    Unwritable { path: String, why: String },
    /// The editor did not apply the workspace edit, with its reason.
    #[error("the editor did not make the edit: {why}")]
    EditorRefused { why: String },
    #[error("a file cannot be named as a URI")]
    NoUri,
}
