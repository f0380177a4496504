//! Conversions between the core's byte offsets and paths and LSP's
//! positions and URIs. The only place where columns meet encodings.

use std::collections::HashMap;
use std::path::Path;

use tower_lsp_server::ls_types::{self as lsp, Uri};

use crate::checks::{self, Severity};
use crate::index::{FilePath, SourceFile, Workspace};
use crate::text::{LineCol, LineIndex, PositionEncoding, TextRange, floor_char_boundary};

pub fn position(file: &SourceFile, offset: usize, encoding: PositionEncoding) -> lsp::Position {
    let LineCol { line, col } = file.line_index.position(&file.text, offset, encoding);
    lsp::Position {
        line,
        character: col,
    }
}

pub fn range(file: &SourceFile, range: TextRange, encoding: PositionEncoding) -> lsp::Range {
    lsp::Range {
        start: position(file, range.start, encoding),
        end: position(file, range.end, encoding),
    }
}

pub fn offset(file: &SourceFile, position: lsp::Position, encoding: PositionEncoding) -> usize {
    file.line_index.offset(
        &file.text,
        LineCol {
            line: position.line,
            col: position.character,
        },
        encoding,
    )
}

/// Positions of increasing offsets in one file, each counted on from the
/// last, so that the many tokens of a long paragraph's line cost one pass
/// over it rather than one each.
pub struct Columns<'a> {
    file: &'a SourceFile,
    encoding: PositionEncoding,
    /// The last offset asked for, and its position.
    offset: usize,
    at: LineCol,
}

impl<'a> Columns<'a> {
    pub fn new(file: &'a SourceFile, encoding: PositionEncoding) -> Self {
        Columns {
            file,
            encoding,
            offset: 0,
            at: LineCol { line: 0, col: 0 },
        }
    }

    /// Brings into the cache, together, the bytes at `offsets` and the line
    /// starts [`Columns::position`] reads for them: loads independent of
    /// each other, which the core issues at once, where the positions'
    /// own reads wait for each other (a character's references touch a few
    /// bytes of each of hundreds of files, none of them in the cache).
    pub fn fetch(&self, offsets: impl Iterator<Item = usize>) {
        let bytes = self.file.text.as_bytes();
        let at_offsets = offsets.fold(0u8, |sum, offset| {
            sum ^ bytes.get(offset).copied().unwrap_or_default()
        });
        std::hint::black_box((at_offsets, self.file.line_index.fetch()));
    }

    /// The position of `offset` (as [`LineIndex::position`] gives it),
    /// counted on from the last one asked for where it is further on the
    /// same line, else from its line's start.
    pub fn position(&mut self, offset: usize) -> LineCol {
        let text = &*self.file.text;
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let index = &self.file.line_index;
        let line = if offset < self.offset {
            index.line_of(offset)
        } else {
            match index.line_start(self.at.line + 1) {
                Some(next) if offset >= next => index.line_of_from(offset, self.at.line + 1),
                _ => self.at.line,
            }
        };
        if offset < self.offset || line != self.at.line {
            self.offset = self.file.line_index.line_start(line).unwrap_or(0);
            self.at = LineCol { line, col: 0 };
        }
        self.at.col += width(&text[self.offset..offset], self.encoding);
        self.offset = offset;
        self.at
    }
}

/// How many columns `text` (without a line break) takes in `encoding`.
pub fn width(text: &str, encoding: PositionEncoding) -> u32 {
    encoding.width(text) as u32
}

/// A range in a text that is not (yet) a [`SourceFile`], such as the config file.
pub fn range_in_text(text: &str, range: TextRange, encoding: PositionEncoding) -> lsp::Range {
    let index = LineIndex::new(text);
    let at = |offset| {
        let LineCol { line, col } = index.position(text, offset, encoding);
        lsp::Position {
            line,
            character: col,
        }
    };
    lsp::Range {
        start: at(range.start),
        end: at(range.end),
    }
}

pub fn uri_for(workspace: &Workspace, path: &str) -> Option<Uri> {
    uri_for_absolute(&workspace.absolute_path(path))
}

pub fn uri_for_absolute(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path).or_else(|| {
        // `from_file_path` canonicalises, which fails for a file that is gone.
        let text = format!("file://{}", percent_encode_path(&path.to_string_lossy()));
        text.parse().ok()
    })
}

fn percent_encode_path(path: &str) -> String {
    let mut encoded = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-_.~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// The workspace-relative path of a `file:` URI under the root.
pub fn path_for(workspace: &Workspace, uri: &Uri) -> Option<FilePath> {
    let path = uri.to_file_path()?;
    workspace.relative_path(&path).or_else(|| {
        let canonical = path.canonicalize().ok()?;
        workspace.relative_path(&canonical)
    })
}

pub fn severity(severity: Severity) -> lsp::DiagnosticSeverity {
    match severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Information => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

pub fn diagnostic(
    workspace: &Workspace,
    diagnostic: &checks::Diagnostic,
    encoding: PositionEncoding,
) -> lsp::Diagnostic {
    Diagnostics::new(workspace, encoding).convert(diagnostic)
}

/// Converts diagnostics of one snapshot, each related file's URI made once
/// (making one resolves its path on disk: a scene's hundred echoes would
/// resolve it a hundred times).
pub struct Diagnostics<'w> {
    workspace: &'w Workspace,
    encoding: PositionEncoding,
    uris: HashMap<FilePath, Option<Uri>>,
    /// The file last looked up (a file's diagnostics name it, and mostly
    /// relate to it, over and over).
    last: Option<&'w SourceFile>,
}

impl<'w> Diagnostics<'w> {
    pub fn new(workspace: &'w Workspace, encoding: PositionEncoding) -> Diagnostics<'w> {
        Diagnostics {
            workspace,
            encoding,
            uris: HashMap::new(),
            last: None,
        }
    }

    fn file(&mut self, path: &FilePath) -> Option<&'w SourceFile> {
        if let Some(last) = self.last
            && last.path == *path
        {
            return Some(last);
        }
        let file = self.workspace.file(path)?;
        self.last = Some(file);
        Some(file)
    }

    pub fn convert(&mut self, diagnostic: &checks::Diagnostic) -> lsp::Diagnostic {
        let (workspace, encoding) = (self.workspace, self.encoding);
        let lsp_range = match self.file(&diagnostic.path) {
            Some(file) => range(file, diagnostic.range, encoding),
            None => {
                let text = std::fs::read_to_string(workspace.absolute_path(&diagnostic.path))
                    .unwrap_or_default();
                range_in_text(&text, diagnostic.range, encoding)
            }
        };
        // Sized up front: collected from a filter, one place would take room
        // for four (about 450 bytes more on each of a manuscript's diagnostics,
        // which the server keeps).
        let mut related = Vec::with_capacity(diagnostic.related.len());
        related.extend(diagnostic.related.iter().filter_map(|related| {
            let file = self.file(&related.path)?;
            let uri = self
                .uris
                .entry(related.path.clone())
                .or_insert_with(|| uri_for(workspace, &related.path))
                .clone()?;
            Some(lsp::DiagnosticRelatedInformation {
                location: lsp::Location {
                    uri,
                    range: range(file, related.range, encoding),
                },
                message: related.message.clone(),
            })
        }));
        lsp::Diagnostic {
            range: lsp_range,
            severity: Some(severity(diagnostic.severity)),
            code: Some(lsp::NumberOrString::String(
                diagnostic.code.as_str().to_owned(),
            )),
            source: Some("control-room".to_owned()),
            message: diagnostic.message.clone(),
            related_information: (!related.is_empty()).then_some(related),
            ..lsp::Diagnostic::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::index::config::PathsConfig;

    proptest! {
        /// Positions counted on from the last one (on the same line, on a
        /// later one, or back) are the positions counted from scratch.
        #[test]
        fn columns_count_on_to_the_positions_counted_from_each_lines_start(
            text in "[a-zé’\u{1F600}\n ]{0,200}",
            mut offsets in proptest::collection::vec(0usize..220, 0..40),
            back in proptest::collection::vec(0usize..220, 0..4),
        ) {
            offsets.sort_unstable();
            offsets.extend(back);
            let file = SourceFile::parse("Story/a.md".into(), text.as_str().into(), &PathsConfig::default());
            for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
                let mut columns = Columns::new(&file, encoding);
                columns.fetch(offsets.iter().copied());
                for &offset in &offsets {
                    prop_assert_eq!(
                        columns.position(offset),
                        file.line_index.position(&file.text, offset, encoding),
                        "offset {} in {:?}", offset, text
                    );
                }
            }
        }
    }
}
