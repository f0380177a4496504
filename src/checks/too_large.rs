//! `too-large`: a file over the size that is analysed (1 MiB). Its text is
//! kept, so the editor can still edit it and a run still sees it, and its
//! front matter is read, but not its body: its Markdown, names and prose
//! would cost memory and time in proportion (a 7 MB scene once cost
//! gigabytes and seconds a keystroke). Information, at the file's start:
//! the writer learns why its text has no diagnostics.

use super::{Code, Diagnostic, Severity};
use crate::index::SourceFile;
use crate::index::file::MAX_ANALYSED_BYTES;
use crate::text::TextRange;

pub(super) fn check(file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    if !file.is_unanalysed() {
        return;
    }
    diagnostics.push(Diagnostic::new(
        file,
        TextRange::empty(0),
        Severity::Information,
        Code::TooLarge,
        format!(
            "the file is too large to check ({:.1} MiB; the limit is {} MiB): its front matter is read, but not its text (names, prose, headings); split it into scenes to have them checked",
            file.text.len() as f64 / 1_048_576.0,
            MAX_ANALYSED_BYTES / 1_048_576
        ),
    ));
}
