//! The knowledge base in the editor. `controlRoom.remember`: "Remember this"
//! on a selection appends the decision it makes (`ide::remembered`) to the
//! knowledge base, where the agents' prompts find it. An open
//! `decisions.jsonl` is a document of the session: a decision that
//! contradicts its card (`ide::contradictions`) is a warning on the decision,
//! pointing at the card, with "Promote to card" as its fix.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::commands::shared::{invalid, lock};
use super::convert::{self, path_for, uri_for};
use super::recipes::OpenRecipe;
use super::runs::Context;
use crate::engine::prompts::state::append_decisions;
use crate::engine::runner::now;
use crate::engine::store::Disk;
use crate::ide::CONTRADICTS_CARD;
use crate::index::{FilePath, Workspace};
use crate::text::PositionEncoding;
use crate::text::TextRange;

pub const REMEMBER: &str = "controlRoom.remember";

/// What `controlRoom.remember` takes: the passage.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberArgs {
    uri: Uri,
    range: lsp::Range,
}

/// Appends the passage's decision; answers it.
pub fn remember(context: &Context, args: RememberArgs) -> Result<Value, RpcError> {
    let (workspace, encoding) = {
        let session = lock(&context.session);
        (session.workspace.clone(), session.encoding)
    };
    let path = path_for(&workspace, &args.uri).ok_or_else(|| {
        invalid(format!(
            "{REMEMBER}: {:?} is not in the workspace",
            args.uri
        ))
    })?;
    let file = workspace
        .file(&path)
        .ok_or_else(|| invalid(format!("{REMEMBER}: {path} is not indexed")))?;
    let start = convert::offset(file, args.range.start, encoding);
    let end = convert::offset(file, args.range.end, encoding);
    let range = TextRange::new(start.min(end), start.max(end));
    let decision = crate::ide::remembered(&workspace, file, range, &now())
        .ok_or_else(|| invalid(format!("{REMEMBER}: select the passage to remember")))?;
    append_decisions(
        workspace.root(),
        &Disk::default(),
        std::slice::from_ref(&decision),
    )
    .map_err(|error| {
        invalid(format!(
            "{REMEMBER}: cannot write the knowledge base: {error}"
        ))
    })?;
    Ok(json!({"decision": decision}))
}

fn found(workspace: &Workspace, path: &FilePath, text: &str) -> Vec<crate::ide::Contradiction> {
    crate::ide::contradictions(workspace, path, text, &now())
}

/// The diagnostics of the open knowledge base, with its version.
pub fn diagnostics(
    workspace: &Workspace,
    open: &[OpenRecipe],
    encoding: PositionEncoding,
) -> Vec<(FilePath, Vec<lsp::Diagnostic>, i32)> {
    open.iter()
        .map(|(path, text, version)| {
            let diagnostics = found(workspace, path, text)
                .into_iter()
                .map(|contradiction| diagnostic(workspace, text, &contradiction, encoding))
                .collect();
            (path.clone(), diagnostics, *version)
        })
        .collect()
}

fn diagnostic(
    workspace: &Workspace,
    text: &str,
    contradiction: &crate::ide::Contradiction,
    encoding: PositionEncoding,
) -> lsp::Diagnostic {
    let related = workspace
        .file(&contradiction.card)
        .zip(uri_for(workspace, &contradiction.card))
        .map(|(card, uri)| {
            vec![lsp::DiagnosticRelatedInformation {
                location: lsp::Location {
                    uri,
                    range: convert::range(card, contradiction.card_range, encoding),
                },
                message: "what the card says".to_owned(),
            }]
        });
    lsp::Diagnostic {
        range: convert::range_in_text(text, contradiction.range, encoding),
        severity: Some(lsp::DiagnosticSeverity::WARNING),
        code: Some(lsp::NumberOrString::String(CONTRADICTS_CARD.to_owned())),
        source: Some("control-room".to_owned()),
        message: format!(
            "{}; promote the decision to the card if it is the new canon",
            contradiction.message
        ),
        related_information: related,
        ..lsp::Diagnostic::default()
    }
}

/// "Promote to card" for each contradiction the range touches: the card
/// changed and the decision marked promoted, in one edit.
pub fn promotions(
    workspace: &Workspace,
    (path, text, version): &OpenRecipe,
    range: lsp::Range,
    encoding: PositionEncoding,
) -> Vec<lsp::CodeActionOrCommand> {
    let touches = |other: &lsp::Range| other.end >= range.start && other.start <= range.end;
    found(workspace, path, text)
        .into_iter()
        .filter_map(|contradiction| {
            let shown = diagnostic(workspace, text, &contradiction, encoding);
            if !touches(&shown.range) {
                return None;
            }
            let mut documents: Vec<lsp::TextDocumentEdit> = Vec::new();
            for edit in &contradiction.promotion.edits {
                let (uri, range, version) = if edit.path == *path {
                    (
                        uri_for(workspace, path)?,
                        convert::range_in_text(text, edit.range, encoding),
                        Some(*version),
                    )
                } else {
                    let card = workspace.file(&edit.path)?;
                    (
                        uri_for(workspace, &edit.path)?,
                        convert::range(card, edit.range, encoding),
                        None,
                    )
                };
                let change = lsp::OneOf::Left(lsp::TextEdit {
                    range,
                    new_text: edit.new_text.clone(),
                });
                match documents
                    .iter_mut()
                    .find(|doc| doc.text_document.uri == uri)
                {
                    Some(document) => document.edits.push(change),
                    None => documents.push(lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri,
                            version,
                        },
                        edits: vec![change],
                    }),
                }
            }
            Some(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: contradiction.promotion.title.clone(),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![shown]),
                edit: Some(lsp::WorkspaceEdit {
                    document_changes: Some(lsp::DocumentChanges::Edits(documents)),
                    ..lsp::WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..lsp::CodeAction::default()
            }))
        })
        .collect()
}
