//! The knowledge base in the editor. `controlRoom.remember`: "Remember this"
//! on a selection appends the decision it makes (`ide::remembered`) to the
//! knowledge base, where the agents' prompts find it. An open
//! `decisions.jsonl` is a document of the session: a decision that
//! contradicts a hard fact (`ide::contradictions`: its card, the Story
//! Bible, a promoted fact) is a warning on the decision, pointing at both
//! sides, with a fix for each: adopt the decision, or withdraw it.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use super::convert::{self, path_for, uri_for};
use super::recipes::OpenRecipe;
use super::runs::Context;
use super::shared::{invalid, lock};
use crate::index::{FilePath, Workspace};
use crate::runs::prompts::state::append_decisions;
use crate::runs::runner::now;
use crate::runs::store::Disk;
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
                .map(|contradiction| diagnostic(workspace, path, text, &contradiction, encoding))
                .collect();
            (path.clone(), diagnostics, *version)
        })
        .collect()
}

fn diagnostic(
    workspace: &Workspace,
    path: &FilePath,
    text: &str,
    contradiction: &crate::ide::Contradiction,
    encoding: PositionEncoding,
) -> lsp::Diagnostic {
    // Both sides: the other (a card, the Story Bible, the knowledge base's
    // promoted fact) and the decision, with who saved it.
    let other = if contradiction.other == *path {
        uri_for(workspace, &contradiction.other).map(|uri| lsp::Location {
            uri,
            range: convert::range_in_text(text, contradiction.other_range, encoding),
        })
    } else {
        workspace
            .file(&contradiction.other)
            .zip(uri_for(workspace, &contradiction.other))
            .map(|(file, uri)| lsp::Location {
                uri,
                range: convert::range(file, contradiction.other_range, encoding),
            })
    };
    let this = uri_for(workspace, path).map(|uri| lsp::Location {
        uri,
        range: convert::range_in_text(text, contradiction.line, encoding),
    });
    let related: Vec<lsp::DiagnosticRelatedInformation> = other
        .map(|location| lsp::DiagnosticRelatedInformation {
            location,
            message: contradiction.other_label.clone(),
        })
        .into_iter()
        .chain(this.map(|location| lsp::DiagnosticRelatedInformation {
            location,
            message: match &contradiction.source {
                Some(source) => format!("the decision, saved by {source}"),
                None => "the decision".to_owned(),
            },
        }))
        .collect();
    lsp::Diagnostic {
        range: convert::range_in_text(text, contradiction.range, encoding),
        severity: Some(lsp::DiagnosticSeverity::WARNING),
        code: Some(lsp::NumberOrString::String(contradiction.code.to_owned())),
        source: Some("control-room".to_owned()),
        message: format!(
            "{}; {} if it is the new canon, or withdraw it",
            contradiction.message,
            match contradiction.code {
                crate::ide::CONTRADICTS_CARD => "promote the decision to the card",
                crate::ide::CONTRADICTS_BIBLE => "write it into the Story Bible",
                _ => "promote it in the fact's place",
            }
        ),
        related_information: (!related.is_empty()).then_some(related),
        ..lsp::Diagnostic::default()
    }
}

/// For each contradiction the range touches, a fix for each side: the
/// decision adopted (the other side changed and the decision marked
/// promoted, in one edit) and the other side kept (the decision withdrawn).
pub fn promotions(
    workspace: &Workspace,
    (path, text, version): &OpenRecipe,
    range: lsp::Range,
    encoding: PositionEncoding,
) -> Vec<lsp::CodeActionOrCommand> {
    let touches = |other: &lsp::Range| other.end >= range.start && other.start <= range.end;
    let mut actions = Vec::new();
    for contradiction in found(workspace, path, text) {
        let shown = diagnostic(workspace, path, text, &contradiction, encoding);
        if !touches(&shown.range) {
            continue;
        }
        for (fix, preferred) in [
            (&contradiction.promotion, true),
            (&contradiction.withdrawal, false),
        ] {
            let Some(documents) = document_edits(workspace, path, text, *version, fix, encoding)
            else {
                continue;
            };
            actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: fix.title.clone(),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![shown.clone()]),
                edit: Some(lsp::WorkspaceEdit {
                    document_changes: Some(lsp::DocumentChanges::Edits(documents)),
                    ..lsp::WorkspaceEdit::default()
                }),
                is_preferred: Some(preferred),
                ..lsp::CodeAction::default()
            }));
        }
    }
    actions
}

/// `fix`'s edits by document: the open knowledge base at its version, the
/// other files as the workspace holds them.
fn document_edits(
    workspace: &Workspace,
    path: &FilePath,
    text: &str,
    version: i32,
    fix: &crate::checks::Fix,
    encoding: PositionEncoding,
) -> Option<Vec<lsp::TextDocumentEdit>> {
    let mut documents: Vec<lsp::TextDocumentEdit> = Vec::new();
    for edit in &fix.edits {
        let (uri, range, version) = if edit.path == *path {
            (
                uri_for(workspace, path)?,
                convert::range_in_text(text, edit.range, encoding),
                Some(version),
            )
        } else {
            let file = workspace.file(&edit.path)?;
            (
                uri_for(workspace, &edit.path)?,
                convert::range(file, edit.range, encoding),
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
                text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version },
                edits: vec![change],
            }),
        }
    }
    Some(documents)
}
