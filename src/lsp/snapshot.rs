//! What a request handler works on: an immutable snapshot of the session
//! (the workspace, the documents open beside it, the recipes, the findings
//! and receipts), taken under the session's lock and used off it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::convert::{Columns, offset, path_for, range, uri_for};
use crate::checks::FileEdit;
use crate::ide;
use crate::index::{SourceFile, Workspace};
use crate::runs::findings::FindingStore;
use crate::runs::recipe::Registry;
use crate::text::PositionEncoding;

/// What a request handler works on: an immutable workspace and the encoding.
pub struct Snapshot {
    pub workspace: Workspace,
    pub encoding: PositionEncoding,
    /// Project recipe files open in the editor (not part of the workspace).
    pub recipes: Vec<super::recipes::OpenRecipe>,
    /// Plan checklists open in the editor (not part of the workspace either).
    pub plans: Vec<super::recipes::OpenRecipe>,
    /// The knowledge base of decisions, when it is open.
    pub kb: Vec<super::recipes::OpenRecipe>,
    /// The recipes the workspace can run.
    pub registry: Arc<Registry>,
    /// Agents' findings (shared: anchoring remembers where each was seen).
    pub findings: Arc<Mutex<FindingStore>>,
    /// The workspace's tool receipts (shared: read again as their logs change).
    pub receipts: Arc<Mutex<crate::evidence::ReceiptBook>>,
    /// The Markdown documents open in the editor.
    pub open: std::collections::HashSet<crate::index::FilePath>,
    /// Each scene's measures for the story's health (shared: diagnostics,
    /// code actions and the health command measure only what changed).
    pub health: Arc<Mutex<crate::health::Measures>>,
}

impl Snapshot {
    pub fn file(&self, uri: &Uri) -> Option<&std::sync::Arc<SourceFile>> {
        let path = path_for(&self.workspace, uri)?;
        self.workspace.file(&path)
    }

    pub fn at(
        &self,
        position: &lsp::TextDocumentPositionParams,
    ) -> Option<(&std::sync::Arc<SourceFile>, usize)> {
        let file = self.file(&position.text_document.uri)?;
        Some((file, offset(file, position.position, self.encoding)))
    }

    pub fn location(&self, location: &ide::Location) -> Option<lsp::Location> {
        self.locations(std::slice::from_ref(location)).pop()
    }

    /// Locations as the client takes them (a file that is gone is left
    /// out): each file's URI made once, and the positions of a file's
    /// ranges in order counted on from the last (`references` answers
    /// thousands of mentions in a few hundred files).
    pub fn locations(&self, locations: &[ide::Location]) -> Vec<lsp::Location> {
        let mut converted = Vec::with_capacity(locations.len());
        for in_file in locations.chunk_by(|one, next| one.path == next.path) {
            let path = &in_file[0].path;
            let Some(file) = self.workspace.file(path) else {
                continue;
            };
            let Some(uri) = uri_for(&self.workspace, path) else {
                continue;
            };
            let mut columns = Columns::new(file, self.encoding);
            columns.fetch(in_file.iter().map(|location| location.range.start));
            for location in in_file {
                let start = columns.position(location.range.start);
                let end = columns.position(location.range.end);
                converted.push(lsp::Location {
                    uri: uri.clone(),
                    range: lsp::Range {
                        start: lsp::Position::new(start.line, start.col),
                        end: lsp::Position::new(end.line, end.col),
                    },
                });
            }
        }
        converted
    }

    pub fn workspace_edit(&self, edits: &[FileEdit]) -> lsp::WorkspaceEdit {
        let mut changes: HashMap<Uri, Vec<lsp::TextEdit>> = HashMap::new();
        let mut created = Vec::new();
        for edit in edits {
            let Some(uri) = uri_for(&self.workspace, &edit.path) else {
                continue;
            };
            let Some(file) = self.workspace.file(&edit.path) else {
                // A fix that makes a file ("Create card"): created, never
                // over one that appeared meanwhile.
                if !self.workspace.absolute_path(&edit.path).exists() {
                    created.push((uri, edit.new_text.clone()));
                }
                continue;
            };
            changes.entry(uri).or_default().push(lsp::TextEdit {
                range: range(file, edit.range, self.encoding),
                new_text: edit.new_text.clone(),
            });
        }
        if !created.is_empty() {
            return document_changes(changes, created);
        }
        lsp::WorkspaceEdit {
            changes: Some(changes),
            ..lsp::WorkspaceEdit::default()
        }
    }
}

/// A workspace edit that creates files, then edits the others.
fn document_changes(
    changes: HashMap<Uri, Vec<lsp::TextEdit>>,
    created: Vec<(Uri, String)>,
) -> lsp::WorkspaceEdit {
    let mut operations = Vec::new();
    for (uri, text) in created {
        operations.push(lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(
            lsp::CreateFile {
                uri: uri.clone(),
                options: Some(lsp::CreateFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(false),
                }),
                annotation_id: None,
            },
        )));
        operations.push(text_document_edit(
            uri,
            vec![lsp::TextEdit {
                range: lsp::Range::default(),
                new_text: text,
            }],
        ));
    }
    for (uri, edits) in changes {
        operations.push(text_document_edit(uri, edits));
    }
    lsp::WorkspaceEdit {
        document_changes: Some(lsp::DocumentChanges::Operations(operations)),
        ..lsp::WorkspaceEdit::default()
    }
}

fn text_document_edit(uri: Uri, edits: Vec<lsp::TextEdit>) -> lsp::DocumentChangeOperation {
    lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
        text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version: None },
        edits: edits.into_iter().map(lsp::OneOf::Left).collect(),
    })
}
