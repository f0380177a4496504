//! `front-matter`: the front matter is not valid YAML, or a known key has a
//! value of the wrong kind (`words: many`, `status: sleeping`, a card with no
//! `name`). Reported at the offending value or line; the rest of the file is
//! still indexed.

use super::{Code, Diagnostic, Severity};
use crate::index::SourceFile;

pub(super) fn check(file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    for problem in &file.problems {
        diagnostics.push(Diagnostic::new(
            file,
            problem.range,
            Severity::Error,
            Code::FrontMatter,
            problem.message.clone(),
        ));
    }
}
