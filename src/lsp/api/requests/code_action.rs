//! `textDocument/codeAction`: the plain actions of `ide::code_actions` (fixes, dismiss, conference, remember, runs) as LSP code actions, and "Promote to card" in the knowledge base.

use serde_json::json;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use super::code_lens::{RUN_ACTION_KIND, run_command};
use crate::checks;
use crate::ide::{self, CodeAction};
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::{self, offset, path_for};
use crate::lsp::runs;
use crate::lsp::shared::lock;
use crate::lsp::snapshot::Snapshot;
use crate::text::TextRange;

impl SnapshotRequest for lsp::request::CodeActionRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(Some(code_actions(snapshot, params)))
    }
}

/// The knowledge base's "Promote to card" when it is the document, else
/// the plain actions of [`ide::code_actions`] as LSP code actions.
pub fn code_actions(
    snapshot: &Snapshot,
    params: &lsp::CodeActionParams,
) -> Vec<lsp::CodeActionOrCommand> {
    if let Some(path) = path_for(&snapshot.workspace, &params.text_document.uri)
        && let Some(open) = snapshot.kb.iter().find(|(kb, _, _)| *kb == path)
    {
        return crate::lsp::knowledge::promotions(
            &snapshot.workspace,
            open,
            params.range,
            snapshot.encoding,
        );
    }
    let Some(file) = snapshot.file(&params.text_document.uri) else {
        return Vec::new();
    };
    let start = offset(file, params.range.start, snapshot.encoding);
    let end = offset(file, params.range.end, snapshot.encoding);
    let range = TextRange::new(start.min(end), start.max(end));
    let book = book_diagnostics(snapshot, file, range);
    let actions = ide::code_actions(
        &snapshot.workspace,
        &snapshot.registry,
        &mut lock(&snapshot.findings),
        file,
        range,
        &book,
    );
    let diagnostic = |diagnostic: &checks::Diagnostic| {
        convert::diagnostic(&snapshot.workspace, diagnostic, snapshot.encoding)
    };
    // The findings as the editor shows them, for the dismissals' diagnostics.
    let findings = crate::lsp::findings::diagnostics(
        &snapshot.findings,
        &snapshot.workspace,
        &file.path,
        snapshot.encoding,
    );
    let on_selection = |title: &str, command: &str| lsp::CodeAction {
        title: title.to_owned(),
        kind: Some(lsp::CodeActionKind::new(RUN_ACTION_KIND)),
        command: Some(lsp::Command {
            title: title.to_owned(),
            command: command.to_owned(),
            arguments: Some(vec![json!({
                "uri": params.text_document.uri,
                "range": params.range,
            })]),
        }),
        ..lsp::CodeAction::default()
    };
    actions
        .into_iter()
        .map(|action| match action {
            CodeAction::Fix {
                diagnostic: fixed,
                fix,
                preferred,
            } => lsp::CodeAction {
                title: fix.title.clone(),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic(&fixed)]),
                edit: Some(snapshot.workspace_edit(&fix.edits)),
                is_preferred: Some(preferred),
                ..lsp::CodeAction::default()
            },
            CodeAction::AddToDictionary {
                diagnostic: misspelt,
                word,
            } => add_to_dictionary(diagnostic(&misspelt), &word),
            CodeAction::Dismiss { finding_id, .. } => lsp::CodeAction {
                title: "Dismiss this finding".to_owned(),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(
                    findings
                        .iter()
                        .filter(|shown| {
                            shown
                                .data
                                .as_ref()
                                .and_then(|data| data["finding_id"].as_str())
                                == Some(finding_id.as_str())
                        })
                        .cloned()
                        .collect(),
                ),
                command: Some(lsp::Command {
                    title: "Dismiss this finding".to_owned(),
                    command: runs::DISMISS_FINDING.to_owned(),
                    arguments: Some(vec![json!({ "finding_id": finding_id })]),
                }),
                ..lsp::CodeAction::default()
            },
            CodeAction::Conference { .. } => {
                on_selection("Convene conference", crate::lsp::conference::CONFERENCE)
            }
            CodeAction::Remember { .. } => {
                on_selection("Remember this", crate::lsp::knowledge::REMEMBER)
            }
            CodeAction::VoiceTournament { .. } => on_selection(
                "Voice tournament on this passage",
                crate::lsp::voice::VOICE_TOURNAMENT,
            ),
            CodeAction::Run { action, fixes } => {
                // "Draft scene" is the missing-scene diagnostic's quick fix.
                let fixes: Option<Vec<lsp::Diagnostic>> =
                    fixes.map(|fixed| vec![diagnostic(&fixed)]);
                lsp::CodeAction {
                    title: action.title.clone(),
                    kind: Some(if fixes.is_some() {
                        lsp::CodeActionKind::QUICKFIX
                    } else {
                        lsp::CodeActionKind::new(RUN_ACTION_KIND)
                    }),
                    is_preferred: fixes.is_some().then_some(true),
                    diagnostics: fixes,
                    command: Some(run_command(&action, &action.title)),
                    ..lsp::CodeAction::default()
                }
            }
        })
        .map(lsp::CodeActionOrCommand::CodeAction)
        .collect()
}

/// "Add “word” to the manuscript's dictionary" on a `spelling` diagnostic.
fn add_to_dictionary(misspelt: lsp::Diagnostic, word: &str) -> lsp::CodeAction {
    let title = format!("Add “{word}” to the manuscript's dictionary");
    lsp::CodeAction {
        title: title.clone(),
        kind: Some(lsp::CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![misspelt]),
        command: Some(lsp::Command {
            title,
            command: crate::lsp::dictionary::ADD_TO_DICTIONARY.to_owned(),
            arguments: Some(vec![json!({ "word": word })]),
        }),
        ..lsp::CodeAction::default()
    }
}

/// The story's health's diagnostics of `file` where `range` may touch one:
/// a scene's or a card's heading, or anywhere in the Story Bible (they point
/// at nothing else). Measured through the session's memo, so only what
/// changed since the last diagnostics pass is measured again.
fn book_diagnostics(
    snapshot: &Snapshot,
    file: &crate::index::SourceFile,
    range: TextRange,
) -> Vec<checks::Diagnostic> {
    let head = file.head_range();
    let at_head = head.end >= range.start && head.start <= range.end;
    if !(file.bible().is_some() || (at_head && (file.scene().is_some() || file.card().is_some()))) {
        return Vec::new();
    }
    let health = crate::health::Health::check(&snapshot.workspace, &mut lock(&snapshot.health));
    health
        .diagnostics(&snapshot.workspace)
        .into_iter()
        .filter(|diagnostic| diagnostic.path == file.path)
        .collect()
}
