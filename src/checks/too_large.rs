//! `too-large`: a file over the size that is analysed (1 MiB). Its text is
//! kept, so the editor can still edit it and a run still sees it, but its
//! front matter, names and prose are not read, which would cost memory and
//! time in proportion (a 7 MB scene once cost gigabytes and seconds a
//! keystroke). Information, at the file's start: the writer learns why the
//! file has no other diagnostics.

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
            "the file is too large to check ({:.1} MiB; the limit is {} MiB): its front matter, names and prose are not checked; split it into scenes to have them checked",
            file.text.len() as f64 / 1_048_576.0,
            MAX_ANALYSED_BYTES / 1_048_576
        ),
    ));
}
