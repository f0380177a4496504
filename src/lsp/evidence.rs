//! Evidence diagnostics (`evidence-*`) on the open Markdown documents that
//! have Evidence lines, validated afresh whenever diagnostics are computed:
//! a scene edited so a quoted sentence is gone turns the evidence that
//! quoted it into `evidence-quote`, a file changed since a receipt read it
//! makes that evidence `evidence-stale`. Hover on a receipt id shows it.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::json;
use tower_lsp_server::ls_types as lsp;

use super::convert;
use super::shared::lock;
use crate::evidence::{self, ReceiptBook, Validator, WorkspaceSources};
use crate::index::{FilePath, SourceFile, Workspace};
use crate::text::{PositionEncoding, TextRange};

/// The evidence diagnostics of each open document that has Evidence lines,
/// with the receipts read again where their logs changed.
pub fn diagnostics(
    book: &Mutex<ReceiptBook>,
    workspace: &Workspace,
    open: &HashSet<FilePath>,
    encoding: PositionEncoding,
) -> Vec<(FilePath, Vec<lsp::Diagnostic>)> {
    let files: Vec<&SourceFile> = open
        .iter()
        .filter_map(|path| workspace.file(path))
        .filter(|file| file.path.ends_with(".md") && evidence::has_evidence(&file.text))
        .map(|file| &**file)
        .collect();
    if files.is_empty() {
        return Vec::new();
    }
    let mut book = lock(book);
    book.refresh(workspace.root());
    let sources = WorkspaceSources { workspace };
    let validator = Validator::new(&sources, &book);
    files
        .into_iter()
        .map(|file| {
            let diagnostics = validator
                .document(&file.text)
                .into_iter()
                .filter(|problem| workspace.severity_setting(problem.code.as_str()) != Some("off"))
                .map(|problem| {
                    let setting = workspace
                        .severity_setting(problem.code.as_str())
                        .and_then(crate::checks::Severity::parse);
                    let severity =
                        setting
                            .map(convert::severity)
                            .unwrap_or(if problem.code.is_warning() {
                                lsp::DiagnosticSeverity::WARNING
                            } else {
                                lsp::DiagnosticSeverity::ERROR
                            });
                    lsp::Diagnostic {
                        range: convert::range(file, problem.range, encoding),
                        severity: Some(severity),
                        code: Some(lsp::NumberOrString::String(
                            problem.code.as_str().to_owned(),
                        )),
                        source: Some("control-room".to_owned()),
                        message: problem.message,
                        data: Some(json!({ "evidence": problem.code.as_str() })),
                        ..lsp::Diagnostic::default()
                    }
                })
                .collect();
            (file.path.clone(), diagnostics)
        })
        .collect()
}

/// The receipt whose id is under `offset`, as hover shows it.
pub fn hover(
    book: &Mutex<ReceiptBook>,
    workspace: &Workspace,
    file: &SourceFile,
    offset: usize,
) -> Option<(TextRange, String)> {
    let text = &*file.text;
    let line_start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |at| line_start + at);
    let line = &text[line_start..line_end];
    let (at, id) = evidence::book::receipt_at(line, offset - line_start)?;
    let start = line_start + at;
    let range = TextRange::new(start, start + id.len());
    let mut book = lock(book);
    book.refresh(workspace.root());
    let markdown = match book.get(id) {
        evidence::Lookup::Verified(receipt) => evidence::book::describe(receipt),
        evidence::Lookup::Tampered { session_id } => format!(
            "**Tool receipt `{id}`** in {session_id}: its signature does not verify (the receipt was changed after it was signed), so evidence cannot cite it."
        ),
        evidence::Lookup::Unknown => {
            format!("**`{id}`** is not a receipt of this workspace.")
        }
    };
    Some((range, markdown))
}
