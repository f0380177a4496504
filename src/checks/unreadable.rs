//! `unreadable`: a Markdown file that could not be indexed at all (not UTF-8,
//! binary, too large, or unreadable). Reported at the file's start so the
//! writer knows why the file's names and scenes are missing; an error,
//! because the manuscript is checked without it.

use super::{Code, Diagnostic, Severity};
use crate::index::SourceFile;
use crate::text::TextRange;

pub(super) fn check(file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    if let Some(reason) = &file.load_error {
        diagnostics.push(Diagnostic::new(
            file,
            TextRange::empty(0),
            Severity::Error,
            Code::Unreadable,
            reason.clone(),
        ));
    }
}
